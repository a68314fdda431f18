package ptx

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// emitter writes the kernel of each descriptor kind ptx covers, with the
// kernel's default block and tile. Its table is the one list of what
// CUDA can lower: Emit dispatches through it and Ops derives from it
// (custom ops run the user's own PTX).
var emitter = kdesc.NewEmitter("ptx", "CUDA", map[kdesc.Kind]func(kdesc.Desc) (*Kernel, error){
	kdesc.KindElementwise: kdesc.Writes(func(d *kdesc.Elementwise) (*Kernel, error) { return EmitElementwise(&Elementwise{Elementwise: *d}) }),
	kdesc.KindReduce:      kdesc.Writes(func(d *kdesc.Reduce) (*Kernel, error) { return EmitReduce(&Reduce{Reduce: *d}) }),
	kdesc.KindSoftmax:     kdesc.Writes(func(d *kdesc.Softmax) (*Kernel, error) { return EmitSoftmax(&Softmax{Softmax: *d}) }),
	kdesc.KindNorm:        kdesc.Writes(func(d *kdesc.Norm) (*Kernel, error) { return EmitNorm(&Norm{Norm: *d}) }),
	kdesc.KindCopy:        kdesc.Writes(func(d *kdesc.Copy) (*Kernel, error) { return EmitCopy(&Copy{Copy: *d}) }),
	kdesc.KindConcat:      kdesc.Writes(func(d *kdesc.Concat) (*Kernel, error) { return EmitConcat(&Concat{Concat: *d}) }),
	kdesc.KindGather:      kdesc.Writes(func(d *kdesc.Gather) (*Kernel, error) { return EmitGather(&Gather{Gather: *d}) }),
	kdesc.KindPad:         kdesc.Writes(func(d *kdesc.Pad) (*Kernel, error) { return EmitPad(&Pad{Pad: *d}) }),
	kdesc.KindGemm: kdesc.Writes(func(d *kdesc.Gemm) (*Kernel, error) {
		g := &Gemm{Gemm: *d}
		if UseMMA(g) { // F16/BF16 pairs: the tensor-core kernel
			return EmitGemmMMA(g, MmaTile{})
		}
		return EmitGemm(g)
	}),
	kdesc.KindAttention: kdesc.Writes(func(d *kdesc.Attention) (*Kernel, error) { return EmitAttention(&Attention{Attention: *d}) }),
	kdesc.KindConv:      kdesc.Writes(func(d *kdesc.Conv) (*Kernel, error) { return EmitConv(&Conv{Conv: *d}) }),
	kdesc.KindPool:      kdesc.Writes(func(d *kdesc.Pool) (*Kernel, error) { return EmitPool(&Pool{Pool: *d}) }),
	kdesc.KindBatchNorm: kdesc.Writes(func(d *kdesc.BatchNorm) (*Kernel, error) { return EmitBatchNorm(&BatchNorm{BatchNorm: *d}) }),
	kdesc.KindRoPE:      kdesc.Writes(func(d *kdesc.RoPE) (*Kernel, error) { return EmitRoPE(&RoPE{RoPE: *d}) }),
	kdesc.KindArg:       kdesc.Writes(func(d *kdesc.Arg) (*Kernel, error) { return EmitArg(&Arg{Arg: *d}) }),
	kdesc.KindCumSum:    kdesc.Writes(func(d *kdesc.CumSum) (*Kernel, error) { return EmitCumSum(&CumSum{CumSum: *d}) }),
	kdesc.KindIndexing:  kdesc.Writes(func(d *kdesc.Indexing) (*Kernel, error) { return EmitIndexing(&Indexing{Indexing: *d}) }),
	kdesc.KindTopK:      kdesc.Writes(func(d *kdesc.TopK) (*Kernel, error) { return EmitTopK(&TopK{TopK: *d}) }),
	kdesc.KindConvTranspose: kdesc.Writes(func(d *kdesc.ConvTranspose) (*Kernel, error) {
		return EmitConvTranspose(&ConvTranspose{ConvTranspose: *d})
	}),
	kdesc.KindResize:     kdesc.Writes(func(d *kdesc.Resize) (*Kernel, error) { return EmitResize(&Resize{Resize: *d}) }),
	kdesc.KindPoolND:     kdesc.Writes(func(d *kdesc.PoolND) (*Kernel, error) { return EmitPoolND(&PoolND{PoolND: *d}) }),
	kdesc.KindGridSample: kdesc.Writes(func(d *kdesc.GridSample) (*Kernel, error) { return EmitGridSample(&GridSample{GridSample: *d}) }),
	kdesc.KindRoiAlign:   kdesc.Writes(func(d *kdesc.RoiAlign) (*Kernel, error) { return EmitRoiAlign(&RoiAlign{RoiAlign: *d}) }),
	kdesc.KindDet:        kdesc.Writes(func(d *kdesc.Det) (*Kernel, error) { return EmitDet(&Det{Det: *d}) }),
	kdesc.KindMaxUnpool:  kdesc.Writes(func(d *kdesc.MaxUnpool) (*Kernel, error) { return EmitMaxUnpool(&MaxUnpool{MaxUnpool: *d}) }),
	kdesc.KindScatter:    kdesc.Writes(func(d *kdesc.Scatter) (*Kernel, error) { return EmitScatter(&Scatter{Scatter: *d}) }),
	kdesc.KindQuantize:   kdesc.Writes(func(d *kdesc.Quantize) (*Kernel, error) { return EmitQuantize(&Quantize{Quantize: *d}) }),
	kdesc.KindIntProduct: kdesc.Writes(func(d *kdesc.IntProduct) (*Kernel, error) { return EmitIntProduct(&IntProduct{IntProduct: *d}) }),
	kdesc.KindRouted:     kdesc.Writes(func(d *kdesc.Routed) (*Kernel, error) { return EmitRouted(&Routed{Routed: *d}) }),
}, graph.OpCustom)

// Emit writes the kernel of a descriptor (from kdesc.Describe) with the
// default block and tile; the F16/BF16 GEMMs run on tensor cores.
func Emit(d kdesc.Desc) (*Kernel, error) { return emitter.Emit(d) }

// EmitNode describes a graph node (kdesc.Describe) and writes its
// kernel; ins are the nodes its parameters after out read, in order.
func EmitNode(name string, n *graph.Node) (k *Kernel, ins []*graph.Node, err error) {
	return emitter.Lower(name, n)
}

// Ops lists the ops whose nodes CUDA lowers to PTX kernels, in op order:
// the ops whose descriptor kind has a writer here and, for elementwise
// ops, a PTX formula; then OpCustom. Any graph can be asked node by node
// with CheckNode, before compiling.
func Ops() []graph.Op { return emitter.Ops() }

// Supports reports whether Ops lists op.
func Supports(op graph.Op) bool { return emitter.Supports(op) }

// CheckNode reports why n would not lower to a PTX kernel, or nil when
// it would (or needs none: sources, views, empty values): what compiling
// for CUDA would find, asked with no GPU. It writes the kernel to learn
// it, so dtype and size limits count too; a custom op's entry is
// checked against its launch.
func CheckNode(n *graph.Node) error {
	if n.Op == graph.OpCustom && kdesc.NeedsKernel(n) {
		_, err := CustomOf(n)
		return err
	}
	return emitter.Check(n)
}
