package exec

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// Step is one kernel call with its views resolved.
type Step struct {
	Node   *graph.Node
	Kernel ops.Kernel
	// Variant is "reference" (no fast kernel took the node) or the fast
	// kernel's variant: its family's ("avx512", "avx2", "neon", "go"),
	// prefixed by the kernel where an op has several ("ew-avx2",
	// "flash-go", "conv-avx512+epilogue"); `kiln info` lists the families.
	Variant string
	Ins     []tensor.Tensor
	Out     tensor.Tensor
	// Static: computed from weights only; runs when the weights changed
	// (see static.go).
	Static bool
	// Serial is the kernel prepared for one worker, which runs where the
	// program runs its loops inline (tune.go); nil: Kernel runs then too.
	Serial ops.Kernel
}

// Program is a graph lowered for the CPU: steps over one arena. Values
// holds, by node ID, the view of every value (inputs, params and outputs
// included), valid for the program's lifetime.
type Program struct {
	Graph   *graph.Graph
	Plan    *plan.Plan
	Steps   []Step
	Arena   []byte
	Weights []byte // shared read-only by clones
	Values  []tensor.Tensor

	opt     Options
	runner  *Runner
	closed  bool
	version *atomic.Uint64 // weight writes, shared with clones
	sources *paramSources  // the dtype each param was given in (WriteFrom), shared with clones

	static        []byte // kept values of static steps (static.go)
	staticValid   bool   // static values computed for staticVersion
	staticVersion uint64

	guard *guards // canaries of a guarded plan (guard.go), nil otherwise

	stepTimes []time.Duration // per-step wall time while set (steptimes.go)
	tuner     *runTuner       // measures runs pooled and inline; nil where the program does not (tune.go)

	copyDst, copySrc []byte           // the copy parallelCopy is sharing out
	copyBody         func(lo, hi int) // pr.copyChunks, bound once so For does not allocate

	isBody bool // a Loop body's program: Arena and runner are its parent's (loop.go)

	inputUses map[*graph.Node][]inputUse // the inputs BindInput can bind, and their readers (bind.go)
	bound     []inputUse                 // step arguments bound now
}

// Options tune lowering for the CPU.
type Options struct {
	Pool      *Pool // workers for parallel kernels; nil means DefaultPool
	Reference bool  // use only the reference kernels (KILN_KERNELS=reference)
	// NoTuning keeps the loops on the pool: no measuring whether runs are
	// faster with every loop inline, on the caller (tune.go).
	NoTuning bool
}

type cpuBackend struct{ opt Options }

// CPU is the CPU backend with default options.
func CPU() Backend { return cpuBackend{} }

// CPUWith is the CPU backend with explicit options.
func CPUWith(opt Options) Backend { return cpuBackend{opt: opt} }

func (cpuBackend) Name() string { return "cpu" }

func (b cpuBackend) Lower(g *graph.Graph, p *plan.Plan) (Executable, error) {
	return Lower(g, p, b.opt)
}

// Lower builds a CPU program from a verified graph and its plan:
// allocates the arena and weight region, copies constants in, and
// prepares one kernel per step. Views the planner aliased to their parent
// need no step.
func Lower(g *graph.Graph, p *plan.Plan, opt Options) (*Program, error) {
	if len(p.Slots) != len(g.Nodes) {
		return nil, fmt.Errorf("exec: plan has %d slots for %d nodes", len(p.Slots), len(g.Nodes))
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	pr := &Program{Graph: g, Plan: p, opt: opt, Weights: alignedBytes(p.WeightBytes), version: new(atomic.Uint64), sources: new(paramSources)}
	for _, n := range g.Nodes {
		if n.Op == graph.OpConstant {
			s := p.Slots[n.ID]
			copy(pr.Weights[s.Offset:s.Offset+s.Bytes], n.Value.Data)
		}
	}
	copySubConstants(g, p, pr.Weights)
	if err := pr.lowerSteps(); err != nil {
		return nil, err
	}
	return pr, nil
}

// lowerSteps allocates this program's arena and prepares its steps.
func (pr *Program) lowerSteps() error {
	g, p := pr.Graph, pr.Plan
	if err := planFits(g, p); err != nil {
		return err
	}
	if pr.opt.Pool == nil {
		pr.opt.Pool = DefaultPool()
	}
	if pr.runner == nil { // a loop body's program (loop.go) shares its parent's
		pr.runner = pr.opt.Pool.NewRunner()
	}
	pr.copyBody = pr.copyChunks
	env := ops.Env{For: pr.runner.For, Threads: pr.opt.Pool.Workers(), WeightBytes: p.WeightBytes, WeightsVersion: pr.version,
		ParamSource: pr.sources.get, Shared: map[any]any{}}
	if !pr.isBody { // a body's arena is a block of its parent's
		pr.Arena = alignedBytes(p.ArenaBytes)
	}
	pr.Values = make([]tensor.Tensor, len(g.Nodes))
	for _, n := range g.Nodes {
		s := p.Slots[n.ID]
		region := pr.Arena
		if s.Region == plan.Weights {
			region = pr.Weights
		}
		if s.Offset < 0 || s.Offset+s.Bytes > len(region) {
			return fmt.Errorf("exec: slot of %s outside its region", n)
		}
		pr.Values[n.ID] = tensor.Tensor{DType: n.DType, Shape: n.Shape, Data: region[s.Offset : s.Offset+s.Bytes : s.Offset+s.Bytes]}
	}
	static := pr.keepStatic(p)
	pr.guard = pr.setupGuards()
	pr.staticValid = false
	pr.Steps = pr.Steps[:0]
	pr.tuner = newRunTuner(pr.opt, pr.isBody, pr.guard != nil)
	reference := pr.opt.Reference || referenceOnly()
	serial := env // the twins' (serialTwins)
	serial.For, serial.Threads = ops.Serial.For, 1
	for _, n := range p.Order {
		if n.Op.IsSource() || p.Free(n) {
			continue
		}
		var (
			k       ops.Kernel
			variant = "reference"
			err     error
		)
		var k1 ops.Kernel
		if n.Op == graph.OpLoop {
			k, variant, err = pr.prepareLoop(n)
		} else if reference {
			k, err = ops.PrepareReference(n)
		} else {
			k, variant, err = ops.PrepareFast(n, env)
			if err == nil && pr.serialTwin(n) {
				k1, _, err = ops.PrepareFast(n, serial)
			}
		}
		if err != nil {
			return fmt.Errorf("exec: lowering %s: %w", n, err)
		}
		ins := make([]tensor.Tensor, len(n.Inputs))
		for i, in := range n.Inputs {
			ins[i] = pr.Values[in.ID]
		}
		pr.Steps = append(pr.Steps, Step{Node: n, Kernel: k, Variant: variant, Ins: ins, Out: pr.Values[n.ID], Static: static[n.ID], Serial: k1})
	}
	pr.findInputUses()
	return nil
}

// planFits checks that p was made for g itself: p.Check verifies the plan
// against the graph it was made from, which need not be g, and a slot
// smaller than its node would let kernels run past it.
func planFits(g *graph.Graph, p *plan.Plan) error {
	if len(p.Slots) != len(g.Nodes) || len(p.Order) != len(g.Nodes) {
		return fmt.Errorf("exec: plan has %d slots and %d steps for %d nodes", len(p.Slots), len(p.Order), len(g.Nodes))
	}
	for _, n := range p.Order {
		if n == nil || n.ID < 0 || n.ID >= len(g.Nodes) || g.Nodes[n.ID] != n {
			return fmt.Errorf("exec: plan schedules %s, which is not in the graph: plan and graph do not match", n)
		}
	}
	for _, n := range g.Nodes {
		if want := n.Shape.NumElements() * n.DType.Size(); p.Slots[n.ID].Bytes != want {
			return fmt.Errorf("exec: plan gives %s %d bytes, it needs %d", n, p.Slots[n.ID].Bytes, want)
		}
	}
	return nil
}

// alignedBytes allocates n bytes starting on a 64-byte boundary.
func alignedBytes(n int) []byte {
	buf := make([]byte, n+64)
	off := int((64 - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64) % 64)
	return buf[off : off+n : off+n]
}

// Run executes every step in order. It does not allocate once every
// kernel has run (kernels pack their weights on their first run; a
// step's serial twin on the first inline run, Step.Serial). With
// SetStepTimes on it also times each step.
func (pr *Program) Run() error {
	if pr.closed {
		return errClosed
	}
	v, fresh := pr.staticFresh()
	if pr.guard != nil {
		if err := pr.runGuarded(fresh); err != nil {
			return err
		}
		pr.staticValid, pr.staticVersion = true, v
		return nil
	}
	if pr.stepTimes != nil {
		return pr.runTimed(v, fresh)
	}
	t := pr.tuner
	var start time.Time
	measured := t != nil && t.startRun(pr.runner)
	if measured {
		start = time.Now()
	}
	if t != nil {
		defer func() { pr.runner.inline = false }()
	}
	for i := range pr.Steps {
		s := &pr.Steps[i]
		if s.Static && fresh {
			continue
		}
		if err := s.kernel(pr.runner)(s.Ins, s.Out); err != nil {
			return fmt.Errorf("exec: step %d %s: %w", i, s.Node, err)
		}
	}
	if t != nil {
		t.endRun(time.Since(start), measured)
	}
	pr.staticValid, pr.staticVersion = true, v
	return nil
}

var errClosed = fmt.Errorf("exec: program is closed")

// Write copies an input's or param's bytes into its slot.
func (pr *Program) Write(n *graph.Node, data []byte) error {
	if n == nil {
		return fmt.Errorf("exec: Write of a nil node")
	}
	return pr.WriteFrom(n, data, n.DType)
}

// WriteFrom is Write for a value converted from dtype src (kiln's
// SetParamTyped: BF16 weights widened into an F32 param). For a param it
// records src, which kernels read (ops.Env.ParamSource) when they repack
// the weight: a GEMM keeps weights given as BF16 in bf16.
func (pr *Program) WriteFrom(n *graph.Node, data []byte, src tensor.DType) error {
	v, err := pr.value(n)
	if err != nil {
		return err
	}
	if n.Op != graph.OpInput && n.Op != graph.OpParam {
		return fmt.Errorf("exec: %s is not an input or param", n)
	}
	if len(data) != len(v.Data) {
		return fmt.Errorf("exec: %s needs %d bytes, got %d", n, len(v.Data), len(data))
	}
	pr.parallelCopy(v.Data, data)
	if n.Op == graph.OpParam {
		pr.sources.set(n, src) // before the version moves: kernels that see the new version see src
		pr.version.Add(1)
	}
	return nil
}

// parallelCopyMin is the smallest copy worth sharing among workers: a
// 9 MiB input (the 1024-token attention's q, k and v) takes 0.8 ms on two
// cores of this Zen 5 VM against 1.1 ms on one (a core alone keeps too
// few misses in flight to use the memory's bandwidth), while a copy of a
// few hundred KiB is over before a worker has woken.
const parallelCopyMin = 1 << 20

// parallelCopyChunk is the granularity of a shared copy.
const parallelCopyChunk = 64 << 10

// parallelCopy copies src into dst (of the same length), shared among
// the pool's workers when it is large.
func (pr *Program) parallelCopy(dst, src []byte) {
	if len(src) < parallelCopyMin || pr.opt.Pool.Workers() < 2 {
		copy(dst, src)
		return
	}
	pr.copyDst, pr.copySrc = dst, src
	pr.runner.For((len(src)+parallelCopyChunk-1)/parallelCopyChunk, 1, pr.copyBody)
	pr.copyDst, pr.copySrc = nil, nil
}

// copyChunks is the For body of parallelCopy: chunks [lo, hi).
func (pr *Program) copyChunks(lo, hi int) {
	a, b := lo*parallelCopyChunk, min(hi*parallelCopyChunk, len(pr.copySrc))
	copy(pr.copyDst[a:b], pr.copySrc[a:b])
}

// Read copies a node's current value out.
func (pr *Program) Read(n *graph.Node, dst []byte) error {
	v, err := pr.value(n)
	if err != nil {
		return err
	}
	if len(dst) != len(v.Data) {
		return fmt.Errorf("exec: %s has %d bytes, destination %d", n, len(v.Data), len(dst))
	}
	copy(dst, v.Data)
	return nil
}

func (pr *Program) value(n *graph.Node) (tensor.Tensor, error) {
	if pr.closed {
		return tensor.Tensor{}, errClosed
	}
	if n == nil || n.ID < 0 || n.ID >= len(pr.Graph.Nodes) || pr.Graph.Nodes[n.ID] != n {
		return tensor.Tensor{}, fmt.Errorf("exec: node %s is not in this program's graph", n)
	}
	return pr.Values[n.ID], nil
}

// Sync is a no-op: CPU runs are synchronous.
func (pr *Program) Sync() error { return nil }

// Clone makes a program with its own arena and freshly prepared kernels
// (so kernel scratch is not shared) over the same weights.
func (pr *Program) Clone() (Executable, error) {
	if pr.closed {
		return nil, errClosed
	}
	c := &Program{Graph: pr.Graph, Plan: pr.Plan, Weights: pr.Weights, opt: pr.opt, version: pr.version, sources: pr.sources}
	if err := c.lowerSteps(); err != nil {
		return nil, err
	}
	return c, nil
}

// paramSources records, by param name, the dtype each param's current
// value was given in, where that is not the param's own dtype. Programs
// over the same weights (clones, LowerShared) share one; it is read only
// when a kernel repacks a weight, so a mutex is cheap enough.
type paramSources struct {
	mu sync.Mutex
	m  map[string]tensor.DType
}

func (s *paramSources) set(n *graph.Node, src tensor.DType) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src == n.DType {
		delete(s.m, n.Name)
		return
	}
	if s.m == nil {
		s.m = map[string]tensor.DType{}
	}
	s.m[n.Name] = src
}

// get is ops.Env.ParamSource: the dtype param n's value was given in
// (n's own dtype unless WriteFrom said otherwise).
func (s *paramSources) get(n *graph.Node) tensor.DType {
	if n == nil || n.Op != graph.OpParam {
		return tensor.Invalid
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if dt, ok := s.m[n.Name]; ok {
		return dt
	}
	return n.DType
}

// Close drops the arena; later calls fail with an error.
func (pr *Program) Close() error {
	pr.closed = true
	pr.Arena, pr.Steps = nil, nil
	return nil
}

// Stats counts steps and kernel variants.
func (pr *Program) Stats() Stats {
	st := Stats{Steps: len(pr.Steps), Variants: map[string]int{}}
	for _, s := range pr.Steps {
		st.Variants[s.Node.Op.String()+"/"+s.Variant]++
	}
	return st
}
