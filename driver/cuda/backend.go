package cuda

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/ptx"
)

func init() { exec.RegisterBackend("cuda", openBackend) }

// openBackend is the exec.Opener: it loads the driver and opens the GPU
// on first use, so a machine without either fails here, with a hint.
func openBackend(index int) (exec.Backend, error) {
	d, err := Open(index)
	if err != nil {
		return nil, err
	}
	return &backend{d: d}, nil
}

type backend struct{ d *Device }

func (b *backend) Name() string { return fmt.Sprintf("cuda:%d", b.d.Ordinal) }

// Lower emits the graph's kernels as one PTX module, loads it, allocates
// the weight region (constants uploaded now) and the arena, and prepares
// every launch.
func (b *backend) Lower(g *graph.Graph, p *plan.Plan) (exec.Executable, error) {
	lw, err := lowerGraph(g, p)
	if err != nil {
		return nil, err
	}
	sh := &shared{d: b.d, g: g, p: p, lw: lw}
	sh.refs.Store(1)
	if bl, err := cublas(); err == nil {
		sh.blasLib, sh.blas = bl, planBlas(lw)
	}
	if lw.module != "" {
		if sh.mod, err = b.d.LoadPTX(lw.module); err != nil {
			return nil, fmt.Errorf("cuda: loading the program's kernels: %w", err)
		}
	}
	if sh.weights, err = b.d.Alloc(lw.cut.bytes); err != nil {
		sh.release()
		return nil, err
	}
	for _, n := range g.Nodes {
		if n.Op == graph.OpConstant && n.Value != nil {
			s := p.Slots[n.ID]
			if err := sh.weights.Upload(lw.cut.offset(s.Offset), n.Value.Data[:s.Bytes]); err != nil {
				sh.release()
				return nil, err
			}
		}
	}
	for _, st := range lw.steps {
		if st.kernel == nil {
			continue
		}
		mod, err := sh.moduleFor(&st)
		if err != nil {
			sh.release()
			return nil, err
		}
		k, err := mod.Kernel(st.kernel.Name)
		if err != nil {
			sh.release()
			return nil, err
		}
		sh.fns = append(sh.fns, k)
	}
	for _, l := range lw.moe {
		if l.why != "" {
			sh.moe, sh.moeFns = append(sh.moe, nil), append(sh.moeFns, nil, nil)
			continue
		}
		split, err := sh.mod.Kernel(l.split.Name)
		if err != nil {
			sh.release()
			return nil, err
		}
		add, err := sh.mod.Kernel(l.add.Name)
		if err != nil {
			sh.release()
			return nil, err
		}
		sh.moe, sh.moeFns = append(sh.moe, &moeShared{}), append(sh.moeFns, split, add)
	}
	pr, err := newProgram(sh)
	if err != nil {
		sh.release()
		return nil, err
	}
	return pr, nil
}

// shared is what clones of a program share: the module, the weights, the
// lowered steps. The last Close frees it.
type shared struct {
	d       *Device
	g       *graph.Graph
	p       *plan.Plan
	lw      *lowered
	mod     *Module
	custom  map[string]*Module // custom ops' modules by source (custom.go)
	fns     []*Kernel          // one per kernel step, in order
	weights *Buffer
	blasLib *blasLib
	blas    []*gemmArgs  // by step: the GEMMs cuBLAS runs (nil: none)
	moe     []*moeShared // by MoE layer: host weights, full device copy (moe*.go); nil when it cannot split
	moeFns  []*Kernel    // by MoE layer: the split kernel and the addend's
	refs    atomic.Int32
	once    sync.Once
}

func (s *shared) release() {
	if s.refs.Add(-1) > 0 {
		return
	}
	s.once.Do(func() {
		_ = s.weights.Free()
		_ = s.mod.Unload()
		s.unloadCustom()
	})
}

// step is a prepared launch or copy.
type step struct {
	node    *graph.Node
	fn      uintptr
	launch  ptx.Launch
	args    *launchArgs
	blas    *blasCall // a cuBLAS GEMM instead of the launch
	dst     Ptr       // copies
	src     Ptr
	bytes   int
	isCopy  bool
	variant string
	moe     *moeRun // an OpMoE layer (moe_run.go)
}

// program is a lowered graph on one GPU with its own arena and stream.
type program struct {
	sh     *shared
	arena  *Buffer
	stream *Stream
	steps  []step
	blas   *blasHandle // nil: every GEMM is PTX
	argv   argBuf      // copy steps' driver-call arguments (enqueue)
	clock  *stepClock  // nil unless SetStepTimes is on
	closed bool

	moe       []*moeRun   // OpMoE layers' placement, forward order (moe_place.go)
	res       []*resident // device-resident handles (resident.go)
	pre, post []devCopy   // their copies around the steps of every run
	up, down  atomic.Int64
}

func newProgram(sh *shared) (*program, error) {
	pr := &program{sh: sh}
	var err error
	if pr.arena, err = sh.d.Alloc(sh.p.ArenaBytes); err != nil {
		return nil, err
	}
	if pr.stream, err = sh.d.NewStream(); err != nil {
		_ = pr.arena.Free()
		return nil, err
	}
	if sh.blas != nil {
		if pr.blas, err = newBlasHandle(sh.blasLib, pr.stream); err != nil {
			_ = pr.stream.Destroy()
			_ = pr.arena.Free()
			return nil, fmt.Errorf("%w (KILN_CUBLAS=off runs kiln's own GEMM instead)", err)
		}
	}
	ki := 0
	for j, sp := range sh.lw.steps {
		st := step{node: sp.node, variant: "ptx"}
		if sp.kernel == nil {
			st.isCopy, st.dst, st.src, st.bytes, st.variant = true, pr.ptr(sp.copyTo), pr.ptr(sp.copyFr), sp.bytes, "copy"
		} else {
			args := make([]any, len(sp.ptrs), len(sp.ptrs)+len(sp.scalars()))
			for i, r := range sp.ptrs {
				args[i] = uintptr(pr.ptr(r))
			}
			args = append(args, sp.scalars()...)
			buf, err := sh.fns[ki].Entry.Pack(args...)
			if err != nil {
				return nil, err
			}
			st.fn, st.launch, st.args = sh.fns[ki].h, sp.kernel.Launch, newLaunchArgs(buf)
			ki++
			if pr.blas != nil && sh.blas[j] != nil {
				st.blas, st.variant = newBlasCall(sh.blas[j], pr.ptr(sp.ptrs[0]), pr.ptr(sp.ptrs[1]), pr.ptr(sp.ptrs[2])), "cublas"
			}
		}
		pr.steps = append(pr.steps, st)
	}
	pr.newMoERuns()
	return pr, nil
}

// ptr is the device address of a plan location in this program.
func (pr *program) ptr(r ref) Ptr {
	base := pr.arena.Ptr
	if r.region == plan.Weights {
		return pr.sh.weights.Ptr + Ptr(pr.sh.lw.cut.offset(r.offset))
	}
	return base + Ptr(r.offset)
}

var errClosed = fmt.Errorf("cuda: program is closed")

// slot finds a node's buffer and offset after checking it belongs here.
func (pr *program) slot(n *graph.Node) (*Buffer, int, int, error) {
	if pr.closed {
		return nil, 0, 0, errClosed
	}
	g := pr.sh.g
	if n == nil || n.ID < 0 || n.ID >= len(g.Nodes) || g.Nodes[n.ID] != n {
		return nil, 0, 0, fmt.Errorf("cuda: node %s is not in this program's graph", n)
	}
	s := pr.sh.p.Slots[n.ID]
	if s.Region == plan.Weights {
		return pr.sh.weights, pr.sh.lw.cut.offset(s.Offset), s.Bytes, nil
	}
	return pr.arena, s.Offset, s.Bytes, nil
}

func (pr *program) Write(n *graph.Node, data []byte) error {
	buf, off, size, err := pr.slot(n)
	if err != nil {
		return err
	}
	if n.Op != graph.OpInput && n.Op != graph.OpParam {
		return fmt.Errorf("cuda: %s is not an input or param", n)
	}
	if len(data) != size {
		return fmt.Errorf("cuda: %s needs %d bytes, got %d", n, size, len(data))
	}
	if pr.residentFor(n) != nil {
		return fmt.Errorf("cuda: %s is a device-resident handle: bind it (BindResident), do not write it", n)
	}
	if l, w := pr.sh.lw.expertOf(n); l >= 0 {
		return pr.sh.d.do(func() error { return pr.writeExpert(l, w, data) })
	}
	if err := pr.stream.Upload(buf, off, data); err != nil {
		return err
	}
	pr.up.Add(int64(len(data)))
	if n.Op == graph.OpParam { // weights are shared: make them visible to clones' streams
		return pr.stream.Synchronize()
	}
	return nil
}

// Run queues every step on the program's stream; Sync or Read waits.
func (pr *program) Run() error {
	if pr.closed {
		return errClosed
	}
	if pr.clock != nil {
		return pr.sh.d.do(pr.runTimed)
	}
	return pr.sh.d.do(pr.enqueue)
}

// runTimed is enqueue with an event after every step, then waits and
// adds the step times (SetStepTimes); the caller holds the context.
func (pr *program) runTimed() error {
	if err := pr.moePrepare(); err != nil {
		return err
	}
	if err := pr.enqueueCopies(pr.pre); err != nil {
		return err
	}
	if err := pr.mark(0); err != nil {
		return err
	}
	for i := range pr.steps {
		if err := pr.enqueueStep(i); err != nil {
			return err
		}
		if err := pr.mark(i + 1); err != nil {
			return err
		}
	}
	if err := pr.enqueueCopies(pr.post); err != nil {
		return err
	}
	return pr.collect()
}

// enqueue queues every step, between the handles' copies; the caller
// holds the context. Stream capture (GraphModel) records exactly these
// calls.
func (pr *program) enqueue() error {
	if err := pr.moePrepare(); err != nil {
		return err
	}
	if err := pr.enqueueCopies(pr.pre); err != nil {
		return err
	}
	for i := range pr.steps {
		if err := pr.enqueueStep(i); err != nil {
			return err
		}
	}
	return pr.enqueueCopies(pr.post)
}

// enqueueStep queues step i; the caller holds the context.
func (pr *program) enqueueStep(i int) error {
	l, s := pr.sh.d.l, &pr.steps[i]
	var err error
	switch {
	case s.isCopy:
		err = l.check("cuMemcpyDtoDAsync", pr.argv.call(l.cuMemcpyDtoDAsync, uintptr(s.dst), uintptr(s.src), uintptr(s.bytes), pr.stream.h))
	case s.blas != nil:
		err = s.blas.run(pr.blas)
	case s.moe != nil:
		err = pr.runMoE(s)
	default:
		err = s.args.launch(l, s.fn, s.launch, pr.stream.h)
	}
	if err != nil {
		return fmt.Errorf("cuda: step %d %s: %w", i, s.node, err)
	}
	return nil
}

func (pr *program) Sync() error {
	if pr.closed {
		return errClosed
	}
	return pr.stream.Synchronize()
}

func (pr *program) Read(n *graph.Node, dst []byte) error {
	buf, off, size, err := pr.slot(n)
	if err != nil {
		return err
	}
	if len(dst) != size {
		return fmt.Errorf("cuda: %s has %d bytes, destination %d", n, size, len(dst))
	}
	if l, w := pr.sh.lw.expertOf(n); l >= 0 {
		pr.readExpert(l, w, dst)
		return nil
	}
	if err := pr.stream.Download(buf, off, dst); err != nil {
		return err
	}
	pr.down.Add(int64(len(dst)))
	return nil
}

// Clone shares the module and weights and gets its own arena, stream and
// copy of every device-resident handle.
func (pr *program) Clone() (exec.Executable, error) {
	if pr.closed {
		return nil, errClosed
	}
	pr.sh.refs.Add(1)
	c, err := newProgram(pr.sh)
	if err != nil {
		pr.sh.release()
		return nil, err
	}
	pr.cloneMoE(c)
	if err := pr.cloneResidents(c); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (pr *program) Close() error {
	if pr.closed {
		return nil
	}
	pr.closed = true
	errClock := pr.clock.destroy()
	err0 := pr.blas.destroy(pr.sh.d)
	err1 := pr.stream.Destroy()
	errRes := errors.Join(pr.freeResidents(), pr.freeMoE())
	err2 := pr.arena.Free()
	pr.sh.release()
	return errors.Join(errRes, errClock, err0, err1, err2)
}

func (pr *program) Stats() exec.Stats {
	st := exec.Stats{Steps: len(pr.steps), Variants: map[string]int{}}
	for _, s := range pr.steps {
		st.Variants[s.node.Op.String()+"/"+s.variant]++
	}
	return st
}
