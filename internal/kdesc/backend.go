package kdesc

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Emitter is a GPU backend as this package sees it: a table of kernel
// writers, one per descriptor kind, producing kernels of type K
// (*ptx.Kernel, *msl.Kernel). Emit dispatches through the table, Lower
// runs a node through Describe and Emit, and Ops derives from the table
// which ops the backend lowers, so a backend's list of ops is its
// emitter's, never a second list kept by hand.
type Emitter[K any] struct {
	pkg, device string // for errors: "ptx", "CUDA"
	write       map[Kind]func(Desc) (K, error)
	ops         func() []graph.Op
}

// NewEmitter makes the emitter of package pkg, whose kernels run on
// device, from its writers; extra are ops the backend runs without a
// descriptor (OpCustom on CUDA).
func NewEmitter[K any](pkg, device string, write map[Kind]func(Desc) (K, error), extra ...graph.Op) *Emitter[K] {
	e := &Emitter[K]{pkg: pkg, device: device, write: write}
	e.ops = sync.OnceValue(func() []graph.Op {
		return append(SupportedOps(func(k Kind) bool { return write[k] != nil }, e.Emit), extra...)
	})
	return e
}

// Writes adapts a writer of one descriptor type to an Emitter's table.
func Writes[D Desc, K any](write func(D) (K, error)) func(Desc) (K, error) {
	return func(d Desc) (K, error) {
		dd, ok := d.(D)
		if !ok {
			var k K
			return k, fmt.Errorf("a %T is not a %v descriptor", d, d.Kind())
		}
		return write(dd)
	}
}

// Emit writes the kernel of a descriptor.
func (e *Emitter[K]) Emit(d Desc) (K, error) {
	var k K
	if d == nil {
		return k, fmt.Errorf("%s: no descriptor", e.pkg)
	}
	write := e.write[d.Kind()]
	if write == nil {
		return k, fmt.Errorf("%s: no %s kernel for a %v yet (the CPU backend has one)", e.pkg, e.device, d.Kind())
	}
	return write(d)
}

// Lower describes n and writes its kernel; ins are the nodes the kernel
// reads after out.
func (e *Emitter[K]) Lower(name string, n *graph.Node) (K, []*graph.Node, error) {
	return Lower(name, n, e.Emit)
}

// Ops lists the ops whose nodes the backend lowers, in op order (see
// SupportedOps), then the extra ones.
func (e *Emitter[K]) Ops() []graph.Op { return slices.Clone(e.ops()) }

// Supports reports whether Ops lists op.
func (e *Emitter[K]) Supports(op graph.Op) bool { return slices.Contains(e.ops(), op) }

// Check reports why n would not lower, or nil when it would or needs no
// kernel (NeedsKernel): what compiling for the backend would find, asked
// with no device. It writes the kernel to learn it, so dtype and size
// limits count too.
func (e *Emitter[K]) Check(n *graph.Node) error {
	if !NeedsKernel(n) {
		return nil
	}
	_, _, err := e.Lower(n.Op.String(), n)
	return err
}

// Lower describes n (Describe) and writes its kernel with emit: a
// backend's whole node → kernel step. ins are the nodes the kernel reads
// after out.
func Lower[K any](name string, n *graph.Node, emit func(Desc) (K, error)) (k K, ins []*graph.Node, err error) {
	d, ins, err := Describe(name, n)
	if err != nil {
		return k, nil, err
	}
	k, err = emit(d)
	return k, ins, err
}

// Unemitted names the descriptor kinds that no GPU emitter writes yet,
// with the reason. Their ops run on the CPU; each backend's Ops leaves
// them out (its TestOps checks that against this list), and the backend
// × op matrix lists their cases as not lowered.
var Unemitted = map[Kind]string{
	KindNMS: "new in issue 23: a sequential greedy selection per batch and class, whose result length depends on the data",
}

// UnemittedBy names, per emitter package ("ptx", "msl"), the descriptor
// kinds that one backend writes and this one does not yet, with the
// reason; Lacks reads both lists.
var UnemittedBy = map[string]map[Kind]string{
	"msl": {
		KindRouted:     "new in issue 26: no MSL kernel for the routed expert products yet (CUDA has a simple one, ptx/moe.go); the CPU computes only the routed rows",
		KindQuantize:   "new in issue 24: CUDA lowers the quantization maps (ptx/quant.go); no MSL emitter yet, so quantized models run on the CPU under Metal",
		KindIntProduct: "new in issue 24: CUDA has an int32-accumulating integer GEMM (ptx/quant_gemm.go); no MSL emitter yet",
		KindPoolND:     "new in issue 23: 3-D, dilated and index-returning pools; CUDA walks each window as the CPU's reference (ptx/pool_nd.go), no MSL emitter yet (Metal's 2-D pools cover the common models)",
		KindGridSample: "new in issue 23: CUDA recomputes each point's taps in f64 per output element (ptx/gridsample.go); no MSL emitter yet",
		KindRoiAlign:   "new in issue 23: CUDA computes one bin per thread with run-time sample counts (ptx/roialign.go); no MSL emitter yet",
		KindDet:        "new in issue 23: a pivoted LU per matrix; CUDA runs one matrix per thread in local memory (ptx/det.go), no MSL emitter yet",
		KindMaxUnpool:  "new in issue 23: a later element wins a shared index anywhere in the output; CUDA orders them in one block (ptx/maxunpool.go), no MSL emitter yet",
		KindScatter:    "duplicate indices must be applied in order (the last update wins, reductions fold in index order); CUDA's kernel has each output element walk its candidate updates (ptx/scatter.go), which no MSL emitter does yet",
	},
}

// Lacks is why the emitter of package pkg writes no kernel for kind k,
// or "" when it writes one.
func Lacks(pkg string, k Kind) string {
	if r := Unemitted[k]; r != "" {
		return r
	}
	return UnemittedBy[pkg][k]
}

// DescribedOps lists, in op order, every op Describe covers: all that
// kiln builds or fuses but the sources and OpCustom.
func DescribedOps() []graph.Op {
	var out []graph.Op
	for _, op := range append(graph.Ops(), graph.FusedOps()...) {
		if KindOf(op) != KindNone {
			out = append(out, op)
		}
	}
	return out
}

// SupportedOps lists, in op order, the ops whose nodes a backend lowers:
// those whose descriptor kind handles accepts and, for a single
// elementwise op, whose Probe chain emit writes (the emitter has a
// formula for it). Shape-dependent limits (a dtype a kernel lacks, a
// size past its grid) show only when a node is lowered.
func SupportedOps[K any](handles func(Kind) bool, emit func(Desc) (K, error)) []graph.Op {
	var out []graph.Op
	for _, op := range DescribedOps() {
		if !handles(KindOf(op)) {
			continue
		}
		if op.IsElementwise() {
			if _, err := emit(Probe(op)); err != nil {
				continue
			}
		}
		out = append(out, op)
	}
	return out
}

// Probe is a one-instruction chain of the elementwise op over one
// element: Bool operands where op takes only Bool (Not, And, Or, Xor,
// Where's condition), U8 for the shifts, F32 elsewhere. An emitter that writes it has a formula for
// op.
func Probe(op graph.Op) *Elementwise {
	in, out := tensor.F32, tensor.F32
	switch {
	case op == graph.OpNot || op == graph.OpAnd || op == graph.OpOr || op == graph.OpXor:
		in, out = tensor.Bool, tensor.Bool
	case op == graph.OpShiftLeft || op == graph.OpShiftRight:
		in, out = tensor.U8, tensor.U8
	case op.IsCompare():
		out = tensor.Bool
	}
	dts := []tensor.DType{in}
	switch {
	case op.IsBinary():
		dts = []tensor.DType{in, in}
	case op == graph.OpWhere:
		dts = []tensor.DType{tensor.Bool, in, in}
	}
	e := &Elementwise{Name: "probe_" + op.String(), Shape: []int{1}, Out: out, Body: []Instr{{Op: op, DType: out}}}
	for i, dt := range dts {
		e.Inputs = append(e.Inputs, Operand{DType: dt, Strides: []int{1}})
		e.Body[0].Args = append(e.Body[0].Args, i)
	}
	return e
}
