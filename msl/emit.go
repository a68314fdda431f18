package msl

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// emitters writes the kernel of each descriptor kind msl covers. It is
// the one list of what Metal can lower: Emit dispatches through it and
// Ops derives from it.
var emitters = map[kdesc.Kind]func(kdesc.Desc) (*Kernel, error){
	kdesc.KindElementwise: with(EmitElementwise),
	kdesc.KindReduce:      with(EmitReduce),
	kdesc.KindSoftmax:     with(EmitSoftmax),
	kdesc.KindNorm:        with(EmitNorm),
	kdesc.KindCopy:        with(EmitCopy),
	kdesc.KindConcat:      with(EmitConcat),
	kdesc.KindGather:      with(EmitGather),
	kdesc.KindPad:         with(EmitPad),
	kdesc.KindGemm:        with(EmitGemm),
	kdesc.KindAttention:   with(EmitAttention),
	kdesc.KindConv:        with(EmitConv),
	kdesc.KindPool:        with(EmitPool),
	kdesc.KindBatchNorm:   with(EmitBatchNorm),
	kdesc.KindRoPE:        with(EmitRoPE),
	kdesc.KindArg:         with(EmitArg),
	kdesc.KindCumSum:      with(EmitCumSum),
}

// with adapts an emitter of one descriptor type to the table's type.
func with[D kdesc.Desc](emit func(D) (*Kernel, error)) func(kdesc.Desc) (*Kernel, error) {
	return func(d kdesc.Desc) (*Kernel, error) {
		dd, ok := d.(D)
		if !ok {
			return nil, fmt.Errorf("msl: a %T is not a %v descriptor", d, d.Kind())
		}
		return emit(dd)
	}
}

// Emit writes the kernel of a descriptor (from kdesc.Describe); a Gemm
// with SimdGroup set gets the simdgroup_matrix kernel.
func Emit(d kdesc.Desc) (*Kernel, error) {
	if d == nil {
		return nil, fmt.Errorf("msl: no descriptor")
	}
	emit := emitters[d.Kind()]
	if emit == nil {
		return nil, fmt.Errorf("msl: no Metal kernel for a %v yet (the CPU backend has one)", d.Kind())
	}
	return emit(d)
}

// EmitNode describes a graph node (kdesc.Describe) and writes its
// kernel; ins are the nodes its buffers after out read, in order.
func EmitNode(name string, n *graph.Node) (k *Kernel, ins []*graph.Node, err error) {
	return kdesc.Lower(name, n, Emit)
}

// supported is what Ops lists, derived once from the emitters.
var supported = sync.OnceValue(func() []graph.Op {
	return kdesc.SupportedOps(func(k kdesc.Kind) bool { return emitters[k] != nil }, Emit)
})

// Ops lists the ops whose nodes Metal lowers to MSL kernels, in op
// order: the ops whose descriptor kind has an emitter here and, for
// elementwise ops, an MSL formula. Any graph can be asked node by node
// with CheckNode, before compiling.
func Ops() []graph.Op { return slices.Clone(supported()) }

// Supports reports whether Ops lists op.
func Supports(op graph.Op) bool { return slices.Contains(supported(), op) }

// CheckNode reports why n would not lower to an MSL kernel, or nil when
// it would (or needs none: sources, views, empty values): what compiling
// for Metal would find, asked on any OS. It writes the kernel to learn
// it, so dtype and size limits count too.
func CheckNode(n *graph.Node) error {
	if !kdesc.NeedsKernel(n) {
		return nil
	}
	_, _, err := EmitNode(n.Op.String(), n)
	return err
}
