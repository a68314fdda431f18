package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Desc is one kernel's descriptor: a *Elementwise, *Reduce, *Softmax,
// *Norm, *Copy, *Concat, *Gather, *Pad, *Gemm, *Attention, *Conv,
// *Pool, *BatchNorm, *RoPE, *Arg, *CumSum, *Indexing, *Scatter, *Resize,
// *ConvTranspose, *TopK, *PoolND, *MaxUnpool, *GridSample, *RoiAlign,
// *NMS, *Det, *Quantize, *IntProduct or *Routed. An emitter switches on its
// Kind.
type Desc interface {
	Kind() Kind
}

// Kind names a descriptor type: the kernel family an emitter writes.
type Kind uint8

// The descriptor kinds; KindNone is an op no descriptor covers.
const (
	KindNone Kind = iota
	KindElementwise
	KindReduce
	KindSoftmax
	KindNorm
	KindCopy
	KindConcat
	KindGather
	KindPad
	KindGemm
	KindAttention
	KindConv
	KindPool
	KindBatchNorm
	KindRoPE
	KindArg
	KindCumSum
	KindIndexing
	KindScatter
	KindResize
	KindConvTranspose
	KindTopK
	KindPoolND
	KindMaxUnpool
	KindGridSample
	KindRoiAlign
	KindNMS
	KindDet
	KindQuantize
	KindIntProduct
	KindRouted
	numKinds
)

var kindNames = [numKinds]string{"none", "elementwise", "reduce", "softmax", "norm", "copy", "concat",
	"gather", "pad", "gemm", "attention", "conv", "pool", "batchnorm", "rope", "arg", "cumsum", "indexing", "scatter",
	"resize", "convtranspose", "topk", "poolnd", "maxunpool",
	"gridsample", "roialign", "nms", "det", "quantize", "intproduct", "routed"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Kind implementations: one line per descriptor type.
func (*Elementwise) Kind() Kind   { return KindElementwise }
func (*Reduce) Kind() Kind        { return KindReduce }
func (*Softmax) Kind() Kind       { return KindSoftmax }
func (*Norm) Kind() Kind          { return KindNorm }
func (*Copy) Kind() Kind          { return KindCopy }
func (*Concat) Kind() Kind        { return KindConcat }
func (*Gather) Kind() Kind        { return KindGather }
func (*Pad) Kind() Kind           { return KindPad }
func (*Gemm) Kind() Kind          { return KindGemm }
func (*Attention) Kind() Kind     { return KindAttention }
func (*Conv) Kind() Kind          { return KindConv }
func (*Pool) Kind() Kind          { return KindPool }
func (*BatchNorm) Kind() Kind     { return KindBatchNorm }
func (*RoPE) Kind() Kind          { return KindRoPE }
func (*Arg) Kind() Kind           { return KindArg }
func (*CumSum) Kind() Kind        { return KindCumSum }
func (*Resize) Kind() Kind        { return KindResize }
func (*ConvTranspose) Kind() Kind { return KindConvTranspose }
func (*Indexing) Kind() Kind      { return KindIndexing }
func (*Scatter) Kind() Kind       { return KindScatter }
func (*TopK) Kind() Kind          { return KindTopK }
func (*PoolND) Kind() Kind        { return KindPoolND }
func (*MaxUnpool) Kind() Kind     { return KindMaxUnpool }
func (*GridSample) Kind() Kind    { return KindGridSample }
func (*RoiAlign) Kind() Kind      { return KindRoiAlign }
func (*NMS) Kind() Kind           { return KindNMS }
func (*Det) Kind() Kind           { return KindDet }
func (*Quantize) Kind() Kind      { return KindQuantize }
func (*IntProduct) Kind() Kind    { return KindIntProduct }
func (*Routed) Kind() Kind        { return KindRouted }

// describer is the row of one op: its descriptor kind and how a node of
// it is described, with the nodes its kernel reads after out.
type describer struct {
	kind     Kind
	describe func(name string, n *graph.Node) (Desc, []*graph.Node, error)
}

// every reads all of the node's inputs in order.
func every[D Desc](of func(string, *graph.Node) (D, error)) func(string, *graph.Node) (Desc, []*graph.Node, error) {
	return func(name string, n *graph.Node) (Desc, []*graph.Node, error) {
		d, err := of(name, n)
		if err != nil {
			return nil, nil, err
		}
		return d, n.Inputs, nil
	}
}

// first reads the node's first input only.
func first[D Desc](of func(string, *graph.Node) (D, error)) func(string, *graph.Node) (Desc, []*graph.Node, error) {
	return func(name string, n *graph.Node) (Desc, []*graph.Node, error) {
		d, err := of(name, n)
		if err != nil {
			return nil, nil, err
		}
		return d, n.Inputs[:1], nil
	}
}

// describers maps every op a GPU kernel can compute to its descriptor.
// Sources have none (they are memory); OpCustom has none (a backend
// runs the user's own kernel); OpLoop and OpLoopOutput have none (a
// loop is a host-driven sub-program, not a kernel: the GPU backends do
// not lower run-time control flow yet).
var describers = func() map[graph.Op]describer {
	m := map[graph.Op]describer{}
	add := func(k Kind, f func(string, *graph.Node) (Desc, []*graph.Node, error), ops ...graph.Op) {
		for _, op := range ops {
			m[op] = describer{k, f}
		}
	}
	elementwise := func(name string, n *graph.Node) (Desc, []*graph.Node, error) {
		e, ins, err := ElementwiseOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		return e, ins, nil
	}
	for _, op := range graph.Ops() {
		switch {
		case op.IsElementwise():
			add(KindElementwise, elementwise, op)
		case op.IsReduce():
			add(KindReduce, every(ReduceOf), op)
		case op.IsView():
			add(KindCopy, first(ViewOf), op)
		}
	}
	add(KindElementwise, every(FusedOf), graph.OpFusedElementwise)
	add(KindReduce, every(ReduceOf), graph.OpGlobalAvgPool)
	add(KindSoftmax, every(SoftmaxOf), graph.OpSoftmax, graph.OpLogSoftmax)
	add(KindNorm, every(NormOf), graph.OpLayerNorm, graph.OpRMSNorm, graph.OpAddLayerNorm, graph.OpAddRMSNorm, graph.OpInstanceNorm)
	add(KindCopy, first(CopyOf), graph.OpTranspose, graph.OpSlice, graph.OpSplit, graph.OpExpand, graph.OpTile)
	add(KindConcat, every(ConcatOf), graph.OpConcat)
	add(KindGather, every(GatherOf), graph.OpGather)
	add(KindPad, every(PadOf), graph.OpPad)
	add(KindGemm, every(GemmOf), graph.OpMatMul, graph.OpFusedMatMul, graph.OpGemm)
	add(KindAttention, every(AttentionOf), graph.OpAttention)
	add(KindConv, every(ConvOf), graph.OpConv2D, graph.OpFusedConv2D)
	add(KindPool, every(PoolOf), graph.OpMaxPool2D, graph.OpAvgPool2D)
	add(KindBatchNorm, every(BatchNormOf), graph.OpBatchNorm)
	add(KindRoPE, every(RoPEOf), graph.OpRoPE)
	add(KindArg, every(ArgOf), graph.OpArgMax, graph.OpArgMin)
	add(KindCumSum, every(CumSumOf), graph.OpCumSum)
	add(KindIndexing, every(IndexingOf), graph.OpGatherElements, graph.OpGatherND)
	add(KindScatter, every(ScatterOf), graph.OpScatterElements, graph.OpScatterND)
	add(KindResize, first(ResizeOf), graph.OpResize)
	add(KindConvTranspose, every(ConvTransposeOf), graph.OpConvTranspose)
	add(KindTopK, every(TopKOf), graph.OpTopK)
	add(KindPoolND, every(PoolNDOf), graph.OpMaxPoolND, graph.OpAvgPoolND)
	add(KindMaxUnpool, every(MaxUnpoolOf), graph.OpMaxUnpool)
	add(KindGridSample, every(GridSampleOf), graph.OpGridSample)
	add(KindRoiAlign, every(RoiAlignOf), graph.OpRoiAlign)
	add(KindNMS, every(NMSOf), graph.OpNonMaxSuppression)
	add(KindDet, every(DetOf), graph.OpDet)
	add(KindQuantize, every(QuantizeOf), graph.OpQuantizeLinear, graph.OpDequantizeLinear, graph.OpDynamicQuantizeLinear)
	add(KindIntProduct, every(IntProductOf), graph.OpMatMulInteger, graph.OpConvInteger, graph.OpDynQuantMatMul,
		graph.OpQDQMatMul, graph.OpQDQConv)
	add(KindRouted, every(RoutedOf), graph.OpGroupedMatMul, graph.OpMoE)
	return m
}()

// KindOf is the descriptor kind nodes of op describe as; KindNone when
// no GPU kernel computes op (sources, OpCustom, OpLoop, OpLoopOutput).
func KindOf(op graph.Op) Kind { return describers[op].kind }

// Describe is the one step from a graph node to a kernel descriptor for
// every GPU backend: it returns the descriptor of n's kernel, named name,
// and the nodes whose values the kernel reads, in operand order after
// out. A view (Reshape, Squeeze, Unsqueeze, Flatten) describes as the
// byte copy a backend runs where the plan could not alias it.
func Describe(name string, n *graph.Node) (Desc, []*graph.Node, error) {
	d, ok := describers[n.Op]
	if !ok {
		return nil, nil, fmt.Errorf("no GPU kernel for %v yet (the CPU backend has one)", n.Op)
	}
	return d.describe(name, n)
}

// NeedsKernel reports whether a backend runs a kernel for n: not for
// sources (they are memory), views (they alias their input or are
// copied as bytes) or empty values.
func NeedsKernel(n *graph.Node) bool {
	return !n.Op.IsSource() && !n.Op.IsView() && n.Shape.NumElements() > 0
}

// ViewOf describes a view node as a copy of its input's bytes, which is
// what a backend runs when the plan gave the view its own buffer.
func ViewOf(name string, n *graph.Node) (*Copy, error) {
	if !n.Op.IsView() || len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%s: %v is not a view", name, n.Op)
	}
	return &Copy{Name: name, DType: tensor.U8, Shape: []int{n.Shape.NumElements() * n.DType.Size()}, Strides: []int{1}}, nil
}
