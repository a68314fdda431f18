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
	KindPoolND:     "new in issue 23: 3-D, dilated and index-returning pools; the CPU reference walks each window cell by cell, and the 2-D pools the GPUs run cover the common models",
	KindMaxUnpool:  "new in issue 23: duplicate indices must be applied in order (the last element wins), as for KindScatter",
	KindGridSample: "new in issue 23: CPU only so far (a gather of up to 16 taps per point; the CPU computes them once per point for all channels)",
	KindRoiAlign:   "new in issue 23: CPU only (detection heads; sample counts per bin depend on each roi's size at run time)",
	KindNMS:        "new in issue 23: a sequential greedy selection per batch and class, whose result length depends on the data",
	KindDet:        "new in issue 23: a pivoted LU per matrix, sequential in its columns; rare outside import-time constants",
	KindQuantize:   "new in issue 24: quantized models run on the CPU first; a GPU path dequantizes to F16/BF16 for the existing GEMM (issue 24, part 6)",
	KindIntProduct: "new in issue 24: no integer GEMM or conv emitter yet (dp4a/IMMA on CUDA); the CPU runs them, and a fusion will route them to its int8 GEMM",
	KindScatter:    "duplicate indices must be applied in order (the last update wins, reductions fold in index order): a serial pass or per-dtype atomics",
}

// UnemittedBy names, per emitter package ("ptx", "msl"), the kinds that
// one GPU emitter writes and that one does not yet, with the reason; with
// Unemitted it is what NotEmitted answers.
var UnemittedBy = map[string]map[Kind]string{
	"msl": {
		KindRouted: "new in issue 26: no MSL kernel for the routed expert products yet (CUDA has a simple one, ptx/moe.go); the CPU computes only the routed rows",
	},
}

// NotEmitted is why emitter package pkg writes no kernel of kind k, or ""
// when it does: Unemitted's reason, else UnemittedBy's.
func NotEmitted(pkg string, k Kind) string {
	if why := Unemitted[k]; why != "" {
		return why
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
