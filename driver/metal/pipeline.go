package metal

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/msl"
)

// Commit is one pipelined run: its inputs were staged in a buffer of its
// own and its outputs land in a snapshot of its own, so later commits
// neither change what it reads nor overwrite what it wrote.
type Commit struct {
	pr   *Program
	p    *Pending
	in   *Buffer
	out  *Buffer
	offs map[*graph.Node]int // output node → offset in out
	err  error
	done bool
}

// CommitNoWait stages inputs (every value by node, exactly its size),
// then encodes in one command buffer: copies from the staging buffer
// into the arena, the program, and copies of outputs into the commit's
// snapshot; it commits without waiting. The GPU runs a queue's command
// buffers in order, so the CPU may stage commit i+1 while i runs.
func (pr *Program) CommitNoWait(inputs map[*graph.Node][]byte, outputs []*graph.Node) (*Commit, error) {
	if pr.closed {
		return nil, errClosed
	}
	p := pr.sh.p
	c := &Commit{pr: pr, offs: map[*graph.Node]int{}}
	inOff, total := map[*graph.Node]int{}, 0
	for n, data := range inputs {
		if _, err := pr.slot(n); err != nil {
			return nil, err
		}
		if n.Op != graph.OpInput || len(data) != p.Slots[n.ID].Bytes {
			return nil, fmt.Errorf("metal: %s is not an input of %d bytes", n, len(data))
		}
		inOff[n], total = total, total+align(len(data))
	}
	outTotal := 0
	for _, n := range outputs {
		if _, err := pr.slot(n); err != nil {
			return nil, err
		}
		c.offs[n], outTotal = outTotal, outTotal+align(p.Slots[n.ID].Bytes)
	}
	var err error
	if c.in, err = pr.sh.d.NewBuffer(total); err != nil {
		return nil, err
	}
	if c.out, err = pr.sh.d.NewBuffer(outTotal); err != nil {
		c.in.Release()
		return nil, err
	}
	for n, data := range inputs {
		copy(c.in.Bytes[inOff[n]:], data)
	}
	copyPipe, err := pr.copyPipeline()
	if err != nil {
		c.release()
		return nil, err
	}
	c.p, err = pr.sh.d.Encode(func(e *Encoder) error {
		for n, off := range inOff {
			byteCopy(e, copyPipe, pr.arena, p.Slots[n.ID].Offset, c.in, off, p.Slots[n.ID].Bytes)
		}
		pr.encode(e)
		for _, n := range outputs {
			s := p.Slots[n.ID]
			byteCopy(e, copyPipe, c.out, c.offs[n], pr.buf(s.Region), s.Offset, s.Bytes)
		}
		return nil
	})
	if err != nil {
		c.release()
		return nil, err
	}
	pr.mu.Lock()
	pr.commits = append(pr.commits, c)
	pr.mu.Unlock()
	return c, nil
}

// Commit is exec.Committer, so kiln's CommitNoWait, SyncPending and
// RunPipelined keep every commit's outputs in its own snapshot.
func (pr *Program) Commit(inputs map[*graph.Node][]byte, outputs []*graph.Node) (exec.Pending, error) {
	c, err := pr.CommitNoWait(inputs, outputs)
	if err != nil {
		return nil, err
	}
	return c, nil
}

var _ exec.Committer = (*Program)(nil)

// Wait blocks until the commit's run finished.
func (c *Commit) Wait() error {
	if !c.done {
		c.done = true
		c.err = c.p.Wait()
		c.in.Release()
		c.in = nil
	}
	return c.err
}

// Read waits for the commit and copies an output from its snapshot.
func (c *Commit) Read(n *graph.Node, dst []byte) error {
	off, ok := c.offs[n]
	if !ok {
		return fmt.Errorf("metal: %s is not an output of this commit", n)
	}
	if err := c.Wait(); err != nil {
		return err
	}
	if want := c.pr.sh.p.Slots[n.ID].Bytes; len(dst) != want {
		return fmt.Errorf("metal: %s has %d bytes, destination %d", n, want, len(dst))
	}
	copy(dst, c.out.Bytes[off:])
	return nil
}

// Release waits and frees the commit's buffers; SyncPending no longer
// tracks it, so long pipelined loops hold only the commits in flight.
func (c *Commit) Release() {
	_ = c.Wait()
	c.release()
	pr := c.pr
	pr.mu.Lock()
	pr.commits = slices.DeleteFunc(pr.commits, func(x *Commit) bool { return x == c })
	pr.mu.Unlock()
}

func (c *Commit) release() {
	c.in.Release()
	c.out.Release()
	c.in, c.out = nil, nil
}

// SyncPending waits for every commit made by CommitNoWait (their
// snapshots stay readable until Released).
func (pr *Program) SyncPending() error {
	pr.mu.Lock()
	cs := pr.commits
	pr.commits = nil
	pr.mu.Unlock()
	var first error
	for _, c := range cs {
		if err := c.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// RunPipelined runs every input set with at most depth commits in
// flight, handing each finished commit to done in order (done reads its
// outputs; the commit is released after).
func (pr *Program) RunPipelined(batches []map[*graph.Node][]byte, outputs []*graph.Node, depth int, done func(i int, c *Commit) error) error {
	depth = max(depth, 1)
	var q []*Commit
	next := 0
	finish := func() error {
		c := q[0]
		q = q[1:]
		defer c.Release()
		if err := c.Wait(); err != nil {
			return err
		}
		err := done(next, c)
		next++
		return err
	}
	for _, in := range batches {
		if len(q) == depth {
			if err := finish(); err != nil {
				return err
			}
		}
		c, err := pr.CommitNoWait(in, outputs)
		if err != nil {
			return err
		}
		q = append(q, c)
	}
	for len(q) > 0 {
		if err := finish(); err != nil {
			return err
		}
	}
	return pr.SyncPending()
}

// copyKernel moves bytes; one library per program holds it.
const copyKernel = `kernel void kiln_bytecopy(device uchar* out [[buffer(0)]], device const uchar* in [[buffer(1)]],
    constant uint& n [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    if (gid < n) { out[gid] = in[gid]; }
}
`

func (pr *Program) copyPipeline() (*Pipeline, error) {
	pr.sh.copyOnce.Do(func() {
		lib, err := pr.sh.d.Compile(msl.Header + copyKernel)
		if err != nil {
			pr.sh.copyErr = err
			return
		}
		pr.sh.copyLib = lib
		pr.sh.copyPipe, pr.sh.copyErr = lib.Pipeline("kiln_bytecopy", 256)
	})
	return pr.sh.copyPipe, pr.sh.copyErr
}

// byteCopy records a copy of n bytes with the byte-copy kernel.
func byteCopy(e *Encoder, p *Pipeline, dst *Buffer, doff int, src *Buffer, soff, n int) {
	if n == 0 {
		return
	}
	var nb [4]byte
	binary.LittleEndian.PutUint32(nb[:], uint32(n))
	e.SetBytes(nb[:], 2)
	e.Dispatch(p, []*Buffer{dst, src}, []int{doff, soff}, [3]int{msl.CeilDiv(n, 256), 1, 1}, [3]int{256, 1, 1})
}

// align rounds a staging offset up to 64 bytes.
func align(n int) int { return (n + 63) &^ 63 }
