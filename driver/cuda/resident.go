package cuda

import (
	"errors"
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// resident is a handle kept in device memory (exec.Resident): where
// plan.Residence puts it, the input's own arena bytes or a buffer of its
// own, and fed from an output by a copy queued after the run's steps (or
// none, when the output is computed into the handle's bytes).
type resident struct {
	node *graph.Node
	off  int     // the input's offset in the arena
	own  *Buffer // memory of its own (plan.OwnBuffer); nil: the handle is at off
	feed *graph.Node
	res  plan.Residence
}

// devCopy is a device-to-device copy queued before or after the steps.
type devCopy struct {
	dst, src Ptr
	bytes    int
}

var _ exec.Resident = (*program)(nil)

// home is the handle's buffer and offset.
func (pr *program) home(r *resident) (*Buffer, int) {
	if r.own != nil {
		return r.own, 0
	}
	return pr.arena, r.off
}

func (pr *program) homePtr(r *resident) Ptr {
	b, off := pr.home(r)
	return b.Ptr + Ptr(off)
}

// residentFor finds n's handle, or nil.
func (pr *program) residentFor(n *graph.Node) *resident {
	for _, r := range pr.res {
		if r.node == n {
			return r
		}
	}
	return nil
}

// BindResident makes input n a device-resident handle holding data (one
// host-to-device copy).
func (pr *program) BindResident(n *graph.Node, data []byte) error {
	_, off, size, err := pr.slot(n)
	if err != nil {
		return err
	}
	if n.Op != graph.OpInput {
		return fmt.Errorf("cuda: %s is not a graph input: only inputs take handles", n)
	}
	if len(data) != size {
		return fmt.Errorf("cuda: handle %s needs %d bytes, got %d", n, size, len(data))
	}
	r := pr.residentFor(n)
	if r == nil {
		r = &resident{node: n, off: off}
		if err := pr.place(r, nil); err != nil {
			return err
		}
		pr.res = append(pr.res, r)
		pr.layout()
	}
	b, boff := pr.home(r)
	if err := pr.stream.Upload(b, boff, data); err != nil {
		return err
	}
	pr.up.Add(int64(len(data)))
	return pr.stream.Synchronize() // data may be reused once Bind returns
}

// place moves r where plan.Residence puts it with output feed feeding
// it (nil: none), carrying its value across when that changes its home.
func (pr *program) place(r *resident, feed *graph.Node) error {
	res := pr.sh.p.Residence(r.node, feed)
	needOwn := res == plan.OwnBuffer
	if needOwn && r.own == nil {
		size := pr.sh.p.Slots[r.node.ID].Bytes
		own, err := pr.sh.d.Alloc(size)
		if err != nil {
			return fmt.Errorf("cuda: handle %s: %w", r.node, err)
		}
		if err := pr.copyNow(own.Ptr, pr.arena.Ptr+Ptr(r.off), size); err != nil {
			return errors.Join(err, own.Free())
		}
		r.own = own
	} else if !needOwn && r.own != nil {
		if err := pr.copyNow(pr.arena.Ptr+Ptr(r.off), r.own.Ptr, r.own.Bytes); err != nil {
			return err
		}
		if err := r.own.Free(); err != nil {
			return err
		}
		r.own = nil
	}
	r.feed, r.res = feed, res
	return nil
}

// copyNow copies device memory on the program's stream, after its queued
// work, and waits.
func (pr *program) copyNow(dst, src Ptr, n int) error {
	if n == 0 || dst == src {
		return nil
	}
	return pr.sh.d.do(func() error {
		l := pr.sh.d.l
		if err := l.check("cuMemcpyDtoDAsync", call(l.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), pr.stream.h)); err != nil {
			return err
		}
		return pr.stream.sync()
	})
}

// layout rebuilds the copies every run queues around its steps: handles
// with their own memory into their inputs before, fed outputs into the
// handles after (none where the output is already in place).
func (pr *program) layout() {
	pr.pre, pr.post = pr.pre[:0], pr.post[:0]
	for _, r := range pr.res {
		size := pr.sh.p.Slots[r.node.ID].Bytes
		if r.own != nil {
			pr.pre = append(pr.pre, devCopy{dst: pr.arena.Ptr + Ptr(r.off), src: r.own.Ptr, bytes: size})
		}
		if r.feed != nil && r.res != plan.InPlace {
			pr.post = append(pr.post, devCopy{dst: pr.homePtr(r), src: pr.outPtr(r.feed), bytes: size})
		}
	}
}

// outPtr is the device address of node n's value.
func (pr *program) outPtr(n *graph.Node) Ptr {
	s := pr.sh.p.Slots[n.ID]
	return pr.ptr(ref{region: s.Region, offset: s.Offset})
}

// FeedResident makes output out flow into n's handle after every run.
func (pr *program) FeedResident(n, out *graph.Node) error {
	r, err := pr.feedable(n, out)
	if err != nil {
		return err
	}
	if err := pr.place(r, out); err != nil {
		return err
	}
	pr.layout()
	return nil
}

// feedable finds n's handle and checks out (nil allowed) against it.
func (pr *program) feedable(n, out *graph.Node) (*resident, error) {
	if pr.closed {
		return nil, errClosed
	}
	r := pr.residentFor(n)
	if r == nil {
		return nil, fmt.Errorf("cuda: %s is not a device-resident handle", n)
	}
	if out == nil {
		return r, nil
	}
	if _, _, size, err := pr.slot(out); err != nil {
		return nil, err
	} else if size != pr.sh.p.Slots[n.ID].Bytes || out.DType != n.DType {
		return nil, fmt.Errorf("cuda: %s (%v, %d bytes) cannot feed handle %s (%v, %d bytes)", out, out.DType, size, n, n.DType, pr.sh.p.Slots[n.ID].Bytes)
	}
	return r, nil
}

// RefreshResident copies output out of the last run into n's handle now.
func (pr *program) RefreshResident(n, out *graph.Node) error {
	r, err := pr.feedable(n, out)
	if err != nil {
		return err
	}
	if out == nil {
		return fmt.Errorf("cuda: refreshing handle %s from no output", n)
	}
	return pr.copyNow(pr.homePtr(r), pr.outPtr(out), pr.sh.p.Slots[n.ID].Bytes)
}

// ReadResident downloads n's handle after the queued runs.
func (pr *program) ReadResident(n *graph.Node, dst []byte) error {
	r, err := pr.feedable(n, nil)
	if err != nil {
		return err
	}
	if size := pr.sh.p.Slots[n.ID].Bytes; len(dst) != size {
		return fmt.Errorf("cuda: handle %s has %d bytes, destination %d", n, size, len(dst))
	}
	b, off := pr.home(r)
	if err := pr.stream.Download(b, off, dst); err != nil {
		return err
	}
	pr.down.Add(int64(len(dst)))
	return nil
}

// cloneResidents gives c (a clone of pr) a copy of every handle of pr:
// the same feeds and homes, the values copied on the device.
func (pr *program) cloneResidents(c *program) error {
	if len(pr.res) == 0 {
		return nil
	}
	if err := pr.stream.Synchronize(); err != nil { // pr's last run wrote them
		return err
	}
	for _, r := range pr.res {
		cr := &resident{node: r.node, off: r.off}
		if err := c.place(cr, r.feed); err != nil {
			return err
		}
		c.res = append(c.res, cr)
		if err := c.copyNow(c.homePtr(cr), pr.homePtr(r), pr.sh.p.Slots[r.node.ID].Bytes); err != nil {
			return err
		}
	}
	c.layout()
	return nil
}

// freeResidents releases the handles' own memory (Close).
func (pr *program) freeResidents() error {
	var errs []error
	for _, r := range pr.res {
		errs = append(errs, r.own.Free())
	}
	pr.res = nil
	return errors.Join(errs...)
}

// Transfers counts the bytes pr copied between host and device.
func (pr *program) Transfers() exec.Transfers {
	return exec.Transfers{ToDevice: pr.up.Load(), ToHost: pr.down.Load()}
}

// enqueueCopies queues cs on the stream; the caller holds the context.
// It does not allocate (the program's argument buffer).
func (pr *program) enqueueCopies(cs []devCopy) error {
	l := pr.sh.d.l
	for _, c := range cs {
		if c.bytes == 0 || c.dst == c.src {
			continue
		}
		if err := l.check("cuMemcpyDtoDAsync", pr.argv.call(l.cuMemcpyDtoDAsync, uintptr(c.dst), uintptr(c.src), uintptr(c.bytes), pr.stream.h)); err != nil {
			return fmt.Errorf("cuda: handle copy: %w", err)
		}
	}
	return nil
}
