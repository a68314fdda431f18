package ptx

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// emitters writes the kernel of each descriptor kind ptx covers, with
// the kernel's default block and tile. It is the one list of what CUDA
// can lower: Emit dispatches through it and Ops derives from it.
var emitters = map[kdesc.Kind]func(kdesc.Desc) (*Kernel, error){
	kdesc.KindElementwise: with(func(d *kdesc.Elementwise) (*Kernel, error) { return EmitElementwise(&Elementwise{Elementwise: *d}) }),
	kdesc.KindReduce:      with(func(d *kdesc.Reduce) (*Kernel, error) { return EmitReduce(&Reduce{Reduce: *d}) }),
	kdesc.KindSoftmax:     with(func(d *kdesc.Softmax) (*Kernel, error) { return EmitSoftmax(&Softmax{Softmax: *d}) }),
	kdesc.KindNorm:        with(func(d *kdesc.Norm) (*Kernel, error) { return EmitNorm(&Norm{Norm: *d}) }),
	kdesc.KindCopy:        with(func(d *kdesc.Copy) (*Kernel, error) { return EmitCopy(&Copy{Copy: *d}) }),
	kdesc.KindConcat:      with(func(d *kdesc.Concat) (*Kernel, error) { return EmitConcat(&Concat{Concat: *d}) }),
	kdesc.KindGather:      with(func(d *kdesc.Gather) (*Kernel, error) { return EmitGather(&Gather{Gather: *d}) }),
	kdesc.KindPad:         with(func(d *kdesc.Pad) (*Kernel, error) { return EmitPad(&Pad{Pad: *d}) }),
	kdesc.KindGemm: with(func(d *kdesc.Gemm) (*Kernel, error) {
		g := &Gemm{Gemm: *d}
		if UseMMA(g) { // F16/BF16 pairs: the tensor-core kernel
			return EmitGemmMMA(g, MmaTile{})
		}
		return EmitGemm(g)
	}),
	kdesc.KindAttention: with(func(d *kdesc.Attention) (*Kernel, error) { return EmitAttention(&Attention{Attention: *d}) }),
	kdesc.KindConv:      with(func(d *kdesc.Conv) (*Kernel, error) { return EmitConv(&Conv{Conv: *d}) }),
	kdesc.KindPool:      with(func(d *kdesc.Pool) (*Kernel, error) { return EmitPool(&Pool{Pool: *d}) }),
	kdesc.KindBatchNorm: with(func(d *kdesc.BatchNorm) (*Kernel, error) { return EmitBatchNorm(&BatchNorm{BatchNorm: *d}) }),
	kdesc.KindRoPE:      with(func(d *kdesc.RoPE) (*Kernel, error) { return EmitRoPE(&RoPE{RoPE: *d}) }),
	kdesc.KindArg:       with(func(d *kdesc.Arg) (*Kernel, error) { return EmitArg(&Arg{Arg: *d}) }),
	kdesc.KindCumSum:    with(func(d *kdesc.CumSum) (*Kernel, error) { return EmitCumSum(&CumSum{CumSum: *d}) }),
}

// with adapts an emitter of one descriptor type to the table's type.
func with[D kdesc.Desc](emit func(D) (*Kernel, error)) func(kdesc.Desc) (*Kernel, error) {
	return func(d kdesc.Desc) (*Kernel, error) {
		dd, ok := d.(D)
		if !ok {
			return nil, fmt.Errorf("ptx: a %T is not a %v descriptor", d, d.Kind())
		}
		return emit(dd)
	}
}

// Emit writes the kernel of a descriptor (from kdesc.Describe) with the
// default block and tile; the F16/BF16 GEMMs run on tensor cores.
func Emit(d kdesc.Desc) (*Kernel, error) {
	if d == nil {
		return nil, fmt.Errorf("ptx: no descriptor")
	}
	emit := emitters[d.Kind()]
	if emit == nil {
		return nil, fmt.Errorf("ptx: no CUDA kernel for a %v yet (the CPU backend has one)", d.Kind())
	}
	return emit(d)
}

// EmitNode describes a graph node (kdesc.Describe) and writes its
// kernel; ins are the nodes its parameters after out read, in order.
func EmitNode(name string, n *graph.Node) (k *Kernel, ins []*graph.Node, err error) {
	return kdesc.Lower(name, n, Emit)
}

// supported is what Ops lists, derived once from the emitters (custom ops run
// the user's own PTX).
var supported = sync.OnceValue(func() []graph.Op {
	handles := func(k kdesc.Kind) bool { return emitters[k] != nil }
	return append(kdesc.SupportedOps(handles, Emit), graph.OpCustom)
})

// Ops lists the ops whose nodes CUDA lowers to PTX kernels, in op order:
// the ops whose descriptor kind has an emitter here and, for elementwise
// ops, a PTX formula. Any graph can be asked node by node with
// CheckNode, before compiling.
func Ops() []graph.Op { return slices.Clone(supported()) }

// Supports reports whether Ops lists op.
func Supports(op graph.Op) bool { return slices.Contains(supported(), op) }

// CheckNode reports why n would not lower to a PTX kernel, or nil when
// it would (or needs none: sources, views, empty values): what compiling
// for CUDA would find, asked without a GPU. It writes the kernel to
// learn it, so dtype and size limits count too.
func CheckNode(n *graph.Node) error {
	if !kdesc.NeedsKernel(n) {
		return nil
	}
	if n.Op == graph.OpCustom {
		_, err := CustomOf(n)
		return err
	}
	_, _, err := EmitNode(n.Op.String(), n)
	return err
}
