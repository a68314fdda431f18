package kiln

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// TensorInfo describes a graph input, output or param (tensor.Info, so
// that packages which only set params, onnx and safetensors, need not
// import this one).
type TensorInfo = tensor.Info

// Span locates an output in the arena: Offset in bytes from the start of
// Arena(), Len in elements. An output that lives outside the arena (a
// param or constant returned as an output, or a view of one) has Offset
// -1; Output(i) reads it wherever it is.
type Span struct{ Offset, Len int }

// CompiledGraph is a graph ready to run: fused, planned into one arena and
// lowered to a flat list of steps. Set every param once, then run as often
// as needed. A CompiledGraph is not safe for concurrent use; Clone gives
// each goroutine its own arena over shared weights.
type CompiledGraph struct {
	sess   *Session
	g      *graph.Graph
	plan   *plan.Plan
	x      exec.Executable
	cpu    *exec.Program // x when it runs on the CPU: zero-copy views
	fusion fuse.Report

	paramSet []bool        // by position in g.Params()
	spans    []Span        // output spans, fixed by the plan
	padSrc   []*graph.Node // per output: the padded selection its rows follow, or nil (padded.go)
	handles  []handle
	stage    [][]byte // per output: host copy for non-CPU backends
	unstaged []bool   // per output: the last run left it on the device (fetch)
	extent   *activeExtent
	commits  []commit // CommitNoWait runs not yet synced (pipeline.go)
	closed   bool

	moe     *moeState   // MoE top-k capture and residency accounting (moe.go)
	busy    atomic.Bool // a public method is running (guard.go)
	weights *weightUse  // runs and writes of the weights, shared with clones
}

func newCompiled(s *Session, g *graph.Graph, p *plan.Plan, x exec.Executable, rep fuse.Report) *CompiledGraph {
	cg := &CompiledGraph{sess: s, g: g, plan: p, x: x, fusion: rep, paramSet: make([]bool, len(g.Params())), weights: new(weightUse)}
	cg.cpu, _ = x.(*exec.Program)
	cg.moe = newMoEState(cg.cpu, x)
	cg.padSrc = paddedSources(g)
	for _, o := range g.Outputs() {
		sl := p.Slots[o.ID]
		off := sl.Offset
		if sl.Region != plan.Arena {
			off = -1
		}
		cg.spans = append(cg.spans, Span{Offset: off, Len: o.Shape.NumElements()})
		cg.stage = append(cg.stage, make([]byte, sl.Bytes))
	}
	cg.unstaged = make([]bool, len(cg.stage))
	return cg
}

// Device is where the graph runs.
func (cg *CompiledGraph) Device() Device { return cg.sess.dev }

// Inputs describes the graph inputs in declaration (slot) order.
func (cg *CompiledGraph) Inputs() []TensorInfo { return infos(cg.g.Inputs(), nil) }

// Outputs describes the graph outputs in order.
func (cg *CompiledGraph) Outputs() []TensorInfo { return infos(cg.g.Outputs(), cg.g.OutputNames()) }

// Params describes the params to set.
func (cg *CompiledGraph) Params() []TensorInfo { return infos(cg.g.Params(), nil) }

func infos(ns []*graph.Node, names []string) []TensorInfo {
	out := make([]TensorInfo, len(ns))
	for i, n := range ns {
		out[i] = TensorInfo{Name: n.Name, DType: n.DType, Shape: n.Shape.Clone()}
		if names != nil {
			out[i].Name = names[i]
		}
	}
	return out
}

var errClosed = errors.New("kiln: compiled graph is closed")

// Close releases the arena (and device memory). Later calls return errors.
func (cg *CompiledGraph) Close() error {
	if err := cg.acquire(useGraph); err != nil {
		return err
	}
	defer cg.release(useGraph)
	if cg.closed {
		return nil
	}
	cg.closed = true
	cg.dropCommits()
	return cg.x.Close()
}

// param finds a param by name.
func (cg *CompiledGraph) param(name string) (int, *graph.Node, error) {
	if cg.closed {
		return 0, nil, errClosed
	}
	for i, p := range cg.g.Params() {
		if p.Name == name {
			return i, p, nil
		}
	}
	return 0, nil, fmt.Errorf("kiln: no param %q (params: %s)", name, names(cg.g.Params()))
}

func names(ns []*graph.Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.Name
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// SetParam sets a weight from float32 values (narrowed if the param is
// F16 or BF16). Call it once per param after compiling.
func (cg *CompiledGraph) SetParam(name string, data []float32) error {
	return cg.SetParamTyped(name, tensor.Bytes(data), tensor.F32)
}

// SetParamTyped sets a weight from raw little-endian bytes of dtype dt,
// converted to the param's dtype at the boundary (e.g. BF16 weights into
// an F32 graph). On the CPU the program remembers dt: a MatMul or Gemm
// whose weight was given as BF16 keeps it packed in bf16 and multiplies
// in bf16 where the CPU has AVX512_BF16 (activations rounded to bf16:
// about three significant digits; KILN_BF16=off keeps float32).
func (cg *CompiledGraph) SetParamTyped(name string, data []byte, dt tensor.DType) error {
	if err := cg.acquire(useWrite); err != nil {
		return err
	}
	defer cg.release(useWrite)
	i, p, err := cg.param(name)
	if err != nil {
		return err
	}
	b, err := convertTo(p, data, dt)
	if err != nil {
		return fmt.Errorf("kiln: SetParam %q: %w", name, err)
	}
	if cg.cpu != nil {
		err = cg.cpu.WriteFrom(p, b, dt)
	} else {
		err = cg.x.Write(p, b)
	}
	if err != nil {
		return err
	}
	cg.paramSet[i] = true
	return nil
}

// convertTo turns bytes of dtype dt into n's dtype (no copy when they
// already match), checking the element count.
func convertTo(n *graph.Node, data []byte, dt tensor.DType) ([]byte, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("invalid dtype %v", dt)
	}
	if len(data)%dt.Size() != 0 || len(data)/dt.Size() != n.Shape.NumElements() {
		return nil, fmt.Errorf("%v%v needs %d elements, got %d bytes of %v", n.DType, n.Shape,
			n.Shape.NumElements(), len(data), dt)
	}
	if dt == n.DType {
		return data, nil
	}
	src, _ := tensor.View(dt, n.Shape, data)
	dst, err := tensor.Make(n.DType, n.Shape)
	if err != nil {
		return nil, err
	}
	return dst.Data, tensor.Convert(dst, src)
}

// checkParams reports params that were never set, by name.
func (cg *CompiledGraph) checkParams() error {
	var missing []string
	for i, set := range cg.paramSet {
		if !set {
			missing = append(missing, cg.g.Params()[i].Name)
		}
	}
	if missing != nil {
		return fmt.Errorf("kiln: params never set: %s", strings.Join(missing, ", "))
	}
	return nil
}

// Report describes the compilation: fusion, memory plan and kernels.
func (cg *CompiledGraph) Report() string {
	var b strings.Builder
	st := cg.x.Stats()
	fmt.Fprintf(&b, "device %v: %d nodes, %d steps\n", cg.sess.dev, len(cg.g.Nodes), st.Steps)
	if s := cg.fusion.String(); s != "" {
		fmt.Fprintf(&b, "fusion:\n  %s\n", strings.ReplaceAll(s, "\n", "\n  "))
	}
	fmt.Fprintf(&b, "plan: %s\n", cg.plan.Report())
	fmt.Fprintf(&b, "kernels:")
	for _, k := range slices.Sorted(maps.Keys(st.Variants)) {
		fmt.Fprintf(&b, " %s×%d", k, st.Variants[k])
	}
	b.WriteByte('\n')
	return b.String()
}

// Plan is the memory plan (arena bytes, naive sum, lower bound).
func (cg *CompiledGraph) Plan() *plan.Plan { return cg.plan }

// Executable is the lowered program behind cg, for driver packages that
// build on it (the CUDA graph model captures it). It fails once cg is
// closed or while a param is unset, when the program cannot run.
func (cg *CompiledGraph) Executable() (exec.Executable, error) {
	if cg.closed {
		return nil, errClosed
	}
	if err := cg.checkParams(); err != nil {
		return nil, err
	}
	return cg.x, nil
}

// Stats counts steps and kernel variants.
func (cg *CompiledGraph) Stats() exec.Stats { return cg.x.Stats() }

// Graph is the compiled (fused) graph; do not modify it.
func (cg *CompiledGraph) Graph() *graph.Graph { return cg.g }
