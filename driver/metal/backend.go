package metal

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

func init() { exec.RegisterBackend("metal", openBackend) }

var (
	devOnce sync.Once
	dev     *Device
	devErr  error
)

// openBackend opens the default GPU on first use (there is one Metal
// device per system; the index is ignored).
func openBackend(index int) (exec.Backend, error) {
	devOnce.Do(func() { dev, devErr = Open() })
	if devErr != nil {
		return nil, devErr
	}
	return &backend{d: dev}, nil
}

type backend struct{ d *Device }

func (b *backend) Name() string { return "metal" }

// Lower generates the graph's MSL library, compiles it, makes every
// pipeline, allocates the weights (constants written now) and the arena.
func (b *backend) Lower(g *graph.Graph, p *plan.Plan) (exec.Executable, error) {
	src, steps, err := Lower(g, p, LowerOptions{SimdGroup: b.d.Apple7() && !forceTiled()})
	if err != nil {
		return nil, err
	}
	sh := &shared{d: b.d, g: g, p: p, steps: steps}
	sh.refs.Store(1)
	if len(steps) > 0 {
		if sh.lib, err = b.d.Compile(src); err != nil {
			return nil, err
		}
	}
	for _, st := range steps {
		pl, err := sh.lib.Pipeline(st.Kernel.Name, st.Kernel.Threads[0]*st.Kernel.Threads[1]*st.Kernel.Threads[2])
		if err != nil {
			sh.release()
			return nil, err
		}
		sh.pipes = append(sh.pipes, pl)
	}
	if sh.weights, err = b.d.NewBuffer(p.WeightBytes); err != nil {
		sh.release()
		return nil, err
	}
	for _, n := range g.Nodes {
		if n.Op == graph.OpConstant && n.Value != nil {
			s := p.Slots[n.ID]
			copy(sh.weights.Bytes[s.Offset:s.Offset+s.Bytes], n.Value.Data)
		}
	}
	pr, err := newProgram(sh)
	if err != nil {
		sh.release()
		return nil, err
	}
	return pr, nil
}

// shared is what clones share: library, pipelines, weights, steps.
type shared struct {
	d       *Device
	g       *graph.Graph
	p       *plan.Plan
	steps   []Step
	lib     *Library
	pipes   []*Pipeline
	weights *Buffer
	refs    atomic.Int32
	once    sync.Once

	// the byte-copy kernel of pipelined commits, made on first use
	copyOnce sync.Once
	copyLib  *Library
	copyPipe *Pipeline
	copyErr  error
}

func (s *shared) release() {
	if s.refs.Add(-1) > 0 {
		return
	}
	s.once.Do(func() {
		s.weights.Release()
		s.lib.Release()
		s.copyLib.Release()
	})
}

// Program is a lowered graph on the GPU with its own arena. Besides
// exec.Executable it offers pipelined commits (pipeline.go).
type Program struct {
	sh      *shared
	arena   *Buffer
	pending []*Pending // committed by Run, waited by Sync
	commits []*Commit  // committed by CommitNoWait, waited by SyncPending
	closed  bool
	mu      sync.Mutex

	res       []*resident // GPU-resident handles (resident.go)
	pre, post []bufCopy   // their copies around the dispatches of every run
	up, down  atomic.Int64
}

func newProgram(sh *shared) (*Program, error) {
	a, err := sh.d.NewBuffer(sh.p.ArenaBytes)
	if err != nil {
		return nil, err
	}
	return &Program{sh: sh, arena: a}, nil
}

var errClosed = fmt.Errorf("metal: program is closed")

// buf is the buffer a plan region lives in.
func (pr *Program) buf(r plan.Region) *Buffer {
	if r == plan.Weights {
		return pr.sh.weights
	}
	return pr.arena
}

// slot finds a node's bytes after checking it belongs here.
func (pr *Program) slot(n *graph.Node) ([]byte, error) {
	if pr.closed {
		return nil, errClosed
	}
	g := pr.sh.g
	if n == nil || n.ID < 0 || n.ID >= len(g.Nodes) || g.Nodes[n.ID] != n {
		return nil, fmt.Errorf("metal: node %s is not in this program's graph", n)
	}
	s := pr.sh.p.Slots[n.ID]
	return pr.buf(s.Region).Bytes[s.Offset : s.Offset+s.Bytes], nil
}

// Write copies an input's or param's bytes into shared storage. It
// waits for queued runs first: they may still read the old value.
func (pr *Program) Write(n *graph.Node, data []byte) error {
	dst, err := pr.slot(n)
	if err != nil {
		return err
	}
	if n.Op != graph.OpInput && n.Op != graph.OpParam {
		return fmt.Errorf("metal: %s is not an input or param", n)
	}
	if len(data) != len(dst) {
		return fmt.Errorf("metal: %s needs %d bytes, got %d", n, len(dst), len(data))
	}
	if pr.residentFor(n) != nil {
		return fmt.Errorf("metal: %s is a GPU-resident handle: bind it (BindResident), do not write it", n)
	}
	if err := pr.Sync(); err != nil {
		return err
	}
	if err := pr.SyncPending(); err != nil {
		return err
	}
	copy(dst, data)
	pr.up.Add(int64(len(data)))
	return nil
}

// encode records every step of the program into e, between the
// handles' copies.
func (pr *Program) encode(e *Encoder) {
	pr.encodeCopies(e, pr.pre)
	for i, st := range pr.sh.steps {
		bufs := make([]*Buffer, len(st.Args))
		offs := make([]int, len(st.Args))
		for j, a := range st.Args {
			bufs[j], offs[j] = pr.buf(a.Region), a.Offset
		}
		e.Dispatch(pr.sh.pipes[i], bufs, offs, st.Kernel.Groups, st.Kernel.Threads)
	}
	pr.encodeCopies(e, pr.post)
}

// Run encodes the program into one command buffer and commits it; Sync
// (or Read, Write) waits.
func (pr *Program) Run() error {
	if pr.closed {
		return errClosed
	}
	if len(pr.sh.steps)+len(pr.pre)+len(pr.post) == 0 {
		return nil
	}
	p, err := pr.sh.d.Encode(func(e *Encoder) error { pr.encode(e); return nil })
	if err != nil {
		return err
	}
	pr.mu.Lock()
	pr.pending = append(pr.pending, p)
	pr.mu.Unlock()
	return nil
}

// Sync waits for every run committed by Run.
func (pr *Program) Sync() error {
	if pr.closed {
		return errClosed
	}
	pr.mu.Lock()
	ps := pr.pending
	pr.pending = nil
	pr.mu.Unlock()
	var first error
	for _, p := range ps {
		if err := p.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Read waits for queued runs and copies a node's value out.
func (pr *Program) Read(n *graph.Node, dst []byte) error {
	src, err := pr.slot(n)
	if err != nil {
		return err
	}
	if len(dst) != len(src) {
		return fmt.Errorf("metal: %s has %d bytes, destination %d", n, len(src), len(dst))
	}
	if err := pr.Sync(); err != nil {
		return err
	}
	copy(dst, src)
	pr.down.Add(int64(len(dst)))
	return nil
}

// Clone shares library and weights and gets its own arena and copy of
// every GPU-resident handle.
func (pr *Program) Clone() (exec.Executable, error) {
	if pr.closed {
		return nil, errClosed
	}
	pr.sh.refs.Add(1)
	c, err := newProgram(pr.sh)
	if err != nil {
		pr.sh.release()
		return nil, err
	}
	if err := pr.cloneResidents(c); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Close waits for queued work and frees the arena.
func (pr *Program) Close() error {
	if pr.closed {
		return nil
	}
	err := pr.Sync()
	if err2 := pr.SyncPending(); err == nil {
		err = err2
	}
	pr.closed = true
	pr.releaseResidents()
	pr.arena.Release()
	pr.sh.release()
	return err
}

// Stats counts dispatches and kernel variants.
func (pr *Program) Stats() exec.Stats {
	st := exec.Stats{Steps: len(pr.sh.steps), Variants: map[string]int{}}
	for _, s := range pr.sh.steps {
		st.Variants[s.Node.Op.String()+"/"+s.Kernel.Variant]++
	}
	return st
}
