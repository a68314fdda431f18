package metal

import (
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// resident is a handle kept in GPU memory (exec.Resident): where
// plan.Residence puts it, the input's own bytes in the arena or a private
// MTLBuffer of its own, fed from an output by a GPU copy encoded after
// the run's dispatches in the same command buffer (or none, when the
// output is computed into the handle's bytes).
type resident struct {
	node *graph.Node
	off  int     // the input's offset in the arena
	size int     // its bytes
	own  *Buffer // private storage (plan.OwnBuffer); nil: the handle is at off
	feed *graph.Node
	res  plan.Residence
}

// bufCopy is a GPU copy encoded before or after a run's dispatches.
type bufCopy struct {
	dst        *Buffer
	doff       int
	src        *Buffer
	soff, size int
}

var _ exec.Resident = (*Program)(nil)

// home is the handle's buffer and offset.
func (pr *Program) home(r *resident) (*Buffer, int) {
	if r.own != nil {
		return r.own, 0
	}
	return pr.arena, r.off
}

func (pr *Program) residentFor(n *graph.Node) *resident {
	for _, r := range pr.res {
		if r.node == n {
			return r
		}
	}
	return nil
}

// copiesFor are the copies every run encodes for r: its private buffer
// into the input before the dispatches, the fed output into its home
// after (none where the output is already there).
func (pr *Program) copiesFor(r *resident) (pre, post []bufCopy) {
	if r.own != nil {
		pre = append(pre, bufCopy{dst: pr.arena, doff: r.off, src: r.own, size: r.size})
	}
	if r.feed != nil && r.res != plan.InPlace {
		s := pr.sh.p.Slots[r.feed.ID]
		dst, doff := pr.home(r)
		post = append(post, bufCopy{dst: dst, doff: doff, src: pr.buf(s.Region), soff: s.Offset, size: r.size})
	}
	return pre, post
}

// layout rebuilds the copies of every run; they need the byte-copy
// kernel, made on first use.
func (pr *Program) layout() error {
	var pre, post []bufCopy
	for _, r := range pr.res {
		a, b := pr.copiesFor(r)
		pre, post = append(pre, a...), append(post, b...)
	}
	if len(pre)+len(post) > 0 {
		if _, err := pr.copyPipeline(); err != nil {
			return err
		}
	}
	pr.pre, pr.post = pre, post
	return nil
}

// encodeCopies records cs with the byte-copy kernel.
func (pr *Program) encodeCopies(e *Encoder, cs []bufCopy) {
	for _, c := range cs {
		byteCopy(e, pr.sh.copyPipe, c.dst, c.doff, c.src, c.soff, c.size)
	}
}

// gpuCopy copies n bytes on the GPU, after the queued runs, and waits.
func (pr *Program) gpuCopy(dst *Buffer, doff int, src *Buffer, soff, n int) error {
	if n == 0 || dst == src && doff == soff {
		return nil
	}
	p, err := pr.copyPipeline()
	if err != nil {
		return err
	}
	pend, err := pr.sh.d.Encode(func(e *Encoder) error { byteCopy(e, p, dst, doff, src, soff, n); return nil })
	if err != nil {
		return err
	}
	return pend.Wait()
}

// idle waits for every queued run, so the CPU may touch the arena.
func (pr *Program) idle() error {
	if err := pr.Sync(); err != nil {
		return err
	}
	return pr.SyncPending()
}

// BindResident makes input n a GPU-resident handle holding data.
func (pr *Program) BindResident(n *graph.Node, data []byte) error {
	dst, err := pr.slot(n)
	if err != nil {
		return err
	}
	if n.Op != graph.OpInput {
		return fmt.Errorf("metal: %s is not a graph input: only inputs take handles", n)
	}
	if len(data) != len(dst) {
		return fmt.Errorf("metal: handle %s needs %d bytes, got %d", n, len(dst), len(data))
	}
	r := pr.residentFor(n)
	if r == nil {
		r = &resident{node: n, off: pr.sh.p.Slots[n.ID].Offset, size: len(dst)}
		if err := pr.place(r, nil); err != nil {
			return err
		}
		pr.res = append(pr.res, r)
		if err := pr.layout(); err != nil {
			pr.res = pr.res[:len(pr.res)-1]
			r.own.Release()
			return err
		}
	}
	if err := pr.upload(r, data); err != nil {
		return err
	}
	pr.up.Add(int64(len(data)))
	return nil
}

// upload writes data into r's home: straight into the shared arena, or
// through a shared staging buffer into private storage.
func (pr *Program) upload(r *resident, data []byte) error {
	if r.own == nil {
		if err := pr.idle(); err != nil {
			return err
		}
		copy(pr.arena.Bytes[r.off:r.off+r.size], data)
		return nil
	}
	st, err := pr.sh.d.NewBuffer(len(data))
	if err != nil {
		return err
	}
	defer st.Release()
	copy(st.Bytes, data)
	return pr.gpuCopy(r.own, 0, st, 0, len(data))
}

// place moves r where plan.Residence puts it with feed feeding it,
// carrying its value across when its home changes.
func (pr *Program) place(r *resident, feed *graph.Node) error {
	res := pr.sh.p.Residence(r.node, feed)
	needOwn := res == plan.OwnBuffer
	if needOwn && r.own == nil {
		own, err := pr.sh.d.NewPrivateBuffer(r.size)
		if err != nil {
			return fmt.Errorf("metal: handle %s: %w", r.node, err)
		}
		if err := pr.gpuCopy(own, 0, pr.arena, r.off, r.size); err != nil {
			own.Release()
			return err
		}
		r.own = own
	} else if !needOwn && r.own != nil {
		if err := pr.gpuCopy(pr.arena, r.off, r.own, 0, r.size); err != nil {
			return err
		}
		r.own.Release()
		r.own = nil
	}
	r.feed, r.res = feed, res
	return nil
}

// feedable finds n's handle and checks out (nil allowed) against it.
func (pr *Program) feedable(n, out *graph.Node) (*resident, error) {
	if pr.closed {
		return nil, errClosed
	}
	r := pr.residentFor(n)
	if r == nil {
		return nil, fmt.Errorf("metal: %s is not a GPU-resident handle", n)
	}
	if out == nil {
		return r, nil
	}
	src, err := pr.slot(out)
	if err != nil {
		return nil, err
	}
	if len(src) != r.size || out.DType != n.DType {
		return nil, fmt.Errorf("metal: %s (%v, %d bytes) cannot feed handle %s (%v, %d bytes)", out, out.DType, len(src), n, n.DType, r.size)
	}
	return r, nil
}

// FeedResident makes output out flow into n's handle after every run.
func (pr *Program) FeedResident(n, out *graph.Node) error {
	r, err := pr.feedable(n, out)
	if err != nil {
		return err
	}
	old := r.feed
	if err := pr.place(r, out); err != nil {
		return err
	}
	if err := pr.layout(); err != nil {
		return errFeed(pr.place(r, old), err)
	}
	return nil
}

// errFeed reports a failed feed, and a failure to undo it if any.
func errFeed(undo, err error) error {
	if undo != nil {
		return fmt.Errorf("%w (and restoring the old feed: %v)", err, undo)
	}
	return err
}

// RefreshResident copies output out of the last run into n's handle now.
func (pr *Program) RefreshResident(n, out *graph.Node) error {
	r, err := pr.feedable(n, out)
	if err != nil {
		return err
	}
	if out == nil {
		return fmt.Errorf("metal: refreshing handle %s from no output", n)
	}
	s := pr.sh.p.Slots[out.ID]
	dst, doff := pr.home(r)
	return pr.gpuCopy(dst, doff, pr.buf(s.Region), s.Offset, r.size)
}

// ReadResident copies n's handle out after the queued runs.
func (pr *Program) ReadResident(n *graph.Node, dst []byte) error {
	r, err := pr.feedable(n, nil)
	if err != nil {
		return err
	}
	if len(dst) != r.size {
		return fmt.Errorf("metal: handle %s has %d bytes, destination %d", n, r.size, len(dst))
	}
	if r.own == nil {
		if err := pr.idle(); err != nil {
			return err
		}
		copy(dst, pr.arena.Bytes[r.off:r.off+r.size])
	} else {
		st, err := pr.sh.d.NewBuffer(r.size)
		if err != nil {
			return err
		}
		defer st.Release()
		if err := pr.gpuCopy(st, 0, r.own, 0, r.size); err != nil {
			return err
		}
		copy(dst, st.Bytes)
	}
	pr.down.Add(int64(len(dst)))
	return nil
}

// cloneResidents gives c (a clone of pr) its own copy of every handle.
func (pr *Program) cloneResidents(c *Program) error {
	if len(pr.res) == 0 {
		return nil
	}
	if err := pr.idle(); err != nil {
		return err
	}
	for _, r := range pr.res {
		cr := &resident{node: r.node, off: r.off, size: r.size}
		if err := c.place(cr, r.feed); err != nil {
			return err
		}
		c.res = append(c.res, cr)
		src, soff := pr.home(r)
		dst, doff := c.home(cr)
		if err := c.gpuCopy(dst, doff, src, soff, r.size); err != nil {
			return err
		}
	}
	return c.layout()
}

// releaseResidents frees the handles' private storage (Close).
func (pr *Program) releaseResidents() {
	for _, r := range pr.res {
		r.own.Release()
	}
	pr.res, pr.pre, pr.post = nil, nil, nil
}

// Transfers counts the bytes pr copied between the host's and the GPU's
// view of memory: inputs and params written, outputs and handles read.
func (pr *Program) Transfers() exec.Transfers {
	return exec.Transfers{ToDevice: pr.up.Load(), ToHost: pr.down.Load()}
}
