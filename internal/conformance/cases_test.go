package conformance

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// matrixCases is every case of the matrix: the elementwise ones derived
// from the op list, then one or more written out for every other op.
// Shapes are small but cross the kernels' thresholds where that is
// cheap: rows of 300-700 (several simdgroups on Metal), GEMMs over more
// than one 32×32 tile, head dims over a warp.
func matrixCases() []opCase {
	cs := append(unaryCases(), binaryCases()...)
	cs = append(cs, whereCastCases()...)
	cs = append(cs, reduceCases()...)
	cs = append(cs, indexCases()...)
	cs = append(cs, resizeCases()...)
	cs = append(cs, poolNDCases()...)
	cs = append(cs, detectCases()...)
	cs = append(cs, quantCases()...)
	cs = append(cs, moeCases()...)
	cs = append(cs, compositeCases()...)
	cs = append(cs, loopCases()...)
	return append(cs, otherCases()...)
}

// reduceCases gives every reduction a middle axis, two kept axes, a wide
// row and, where the catalogue takes integers, an I32 case.
func reduceCases() []opCase {
	var cs []opCase
	for _, op := range graph.Ops() {
		if !op.IsReduce() {
			continue
		}
		red := func(b *builder, x *graph.Node, keep bool, axes ...int) {
			b.out(b.g.Apply(op, graph.Attrs{Axes: axes, KeepDims: keep}, x))
		}
		cs = append(cs,
			opCase{op, "axis 1", func(b *builder) { red(b, b.x(3, 4, 5), false, 1) }},
			opCase{op, "axes 0,2 kept", func(b *builder) { red(b, b.x(3, 4, 5), true, 0, 2) }},
			opCase{op, "wide row", func(b *builder) { red(b, b.ranged(tensor.F32, 0.5, 1.5, 2, 700), false, 1) }},
			opCase{op, "f32 specials", func(b *builder) { red(b, b.specials(tensor.F32, 16, 9), false, 1) }})
		if takes(op, tensor.I32) {
			cs = append(cs, opCase{op, "i32", func(b *builder) { red(b, b.ranged(tensor.I32, -3, 3, 3, 4, 5), false, 1) }})
		}
	}
	return cs
}

// positiveParam is an F32 param in [0.5, 2): a variance.
func (b *builder) positiveParam(dims ...int) *graph.Node {
	return b.value(true, tensor.F32, b.uniform(tensor.F32, 0.5, 2), dims...)
}

// fused runs the fusion passes over the case's graph and checks that
// they made op (a fused op is only ever made by them).
func (b *builder) fused(op graph.Op) {
	if b.err == nil && b.g.Err() == nil {
		if _, err := fuse.Run(b.g, fuse.Options{}); err != nil {
			b.err = err
			return
		}
		if !slices.ContainsFunc(b.g.Nodes, func(n *graph.Node) bool { return n.Op == op }) {
			b.err = fmt.Errorf("the fusion passes no longer make %v from this case's pattern", op)
		}
	}
}

// otherCases are the written-out rows: every op that is not a plain
// unary, binary or reduction.
func otherCases() []opCase {
	f32, f16 := tensor.F32, tensor.F16
	pad1 := []int{1, 1, 1, 1}
	return []opCase{
		{graph.OpMatMul, "batch broadcast", func(b *builder) { b.out(b.g.MatMul(b.x(2, 1, 5, 7), b.w(3, 7, 6))) }},
		{graph.OpMatMul, "tiles", func(b *builder) { b.out(b.g.MatMul(b.x(70, 33), b.w(33, 40))) }},
		{graph.OpMatMul, "vector", func(b *builder) { b.out(b.g.MatMul(b.x(7), b.w(7, 6))) }},
		{graph.OpMatMul, "f16", func(b *builder) { b.out(b.g.MatMul(b.in(f16, 4, 9), b.in(f16, 9, 5))) }},
		{graph.OpGemm, "transB bias", func(b *builder) { b.out(b.g.Gemm(b.x(5, 7), b.w(6, 7), b.x(6), 0.5, 2, false, true)) }},
		{graph.OpGemm, "transA", func(b *builder) { b.out(b.g.Gemm(b.x(7, 5), b.w(7, 6), nil, 1, 0, true, false)) }},

		{graph.OpArgMax, "ties axis 1", func(b *builder) { b.out(b.g.ArgMax(b.steps(f32, 0, 3, 1, 4, 6, 5), 1, false)) }},
		{graph.OpArgMax, "i32 kept", func(b *builder) { b.out(b.g.ArgMax(b.in(tensor.I32, 3, 7), 0, true)) }},
		{graph.OpArgMin, "ties axis 2", func(b *builder) { b.out(b.g.ArgMin(b.steps(f32, 0, 3, 1, 4, 6, 5), 2, true)) }},
		{graph.OpArgMin, "f16", func(b *builder) { b.out(b.g.ArgMin(b.in(f16, 5, 6), 1, false)) }},
		{graph.OpSoftmax, "axis 1", func(b *builder) { b.out(b.g.Softmax(b.x(3, 4, 9), 1)) }},
		{graph.OpSoftmax, "wide row", func(b *builder) { b.out(b.g.Softmax(b.x(2, 3, 300), 2)) }},
		{graph.OpSoftmax, "f32 specials", func(b *builder) { b.out(b.g.Softmax(b.specials(f32, 16, 9), 1)) }},
		{graph.OpLogSoftmax, "f32 specials", func(b *builder) { b.out(b.g.LogSoftmax(b.specials(f32, 16, 9), 1)) }},
		{graph.OpArgMax, "f32 specials", func(b *builder) { b.out(b.g.ArgMax(b.specials(f32, 16, 9), 1, false)) }},
		{graph.OpArgMin, "f32 specials", func(b *builder) { b.out(b.g.ArgMin(b.specials(f32, 16, 9), 1, false)) }},
		{graph.OpCumSum, "f32 specials", func(b *builder) { b.out(b.g.CumSum(b.specials(f32, 16, 9), 1, false, false)) }},
		{graph.OpLayerNorm, "f32 specials", func(b *builder) { b.out(b.g.LayerNorm(b.specials(f32, 16, 9), nil, nil, 1, 1e-5)) }},
		{graph.OpRMSNorm, "f32 specials", func(b *builder) { b.out(b.g.RMSNorm(b.specials(f32, 16, 9), nil, 1, 1e-5)) }},
		{graph.OpMaxPool2D, "f32 specials", func(b *builder) {
			b.out(b.g.MaxPool2D(b.specials(f32, 1, 2, 8, 9), graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: pad1}))
		}},
		{graph.OpAvgPool2D, "f32 specials", func(b *builder) {
			b.out(b.g.AvgPool2D(b.specials(f32, 1, 2, 8, 9), graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: pad1}))
		}},
		{graph.OpGlobalAvgPool, "f32 specials", func(b *builder) { b.out(b.g.GlobalAvgPool(b.specials(f32, 2, 8, 3, 3))) }},
		{graph.OpMatMul, "f32 specials", func(b *builder) { b.out(b.g.MatMul(b.specials(f32, 9, 8), b.specials(f32, 8, 5))) }},
		{graph.OpAttention, "f32 specials", func(b *builder) {
			b.out(b.g.Attention(b.specials(f32, 1, 2, 4, 8), b.specials(f32, 1, 2, 5, 8), b.specials(f32, 1, 2, 5, 8), nil, graph.AttentionOpts{}))
		}},
		{graph.OpLogSoftmax, "axis 0", func(b *builder) { b.out(b.g.LogSoftmax(b.x(5, 6), 0)) }},
		{graph.OpLogSoftmax, "wide row", func(b *builder) { b.out(b.g.LogSoftmax(b.x(2, 300), 1)) }},
		// TopK: both outputs of one node pair, ties (steps), NaN/±Inf
		// (specials), a strided axis, the smallest, and a row long enough
		// for the CPU's selection kernel (K <= size/4).
		{graph.OpTopK, "ties axis 1", func(b *builder) { b.out(topKBoth(b.g, b.steps(f32, 0, 3, 1, 4, 9, 5), 3, 1, false)...) }},
		{graph.OpTopK, "smallest strided i32", func(b *builder) { b.out(topKBoth(b.g, b.steps(tensor.I32, -2, 2, 1, 3, 7, 4), 2, 1, true)...) }},
		{graph.OpTopK, "f32 specials", func(b *builder) { b.out(topKBoth(b.g, b.specials(f32, 16, 9), 9, 1, false)...) }},
		{graph.OpTopK, "wide row select", func(b *builder) { b.out(topKBoth(b.g, b.steps(f32, 0, 20, 1, 3, 300), 5, 1, true)...) }},
		{graph.OpTopK, "f16 axis 0", func(b *builder) { b.out(topKBoth(b.g, b.in(f16, 12, 5), 3, 0, false)...) }},
		{graph.OpCumSum, "reverse", func(b *builder) { b.out(b.g.CumSum(b.x(3, 7, 4), 1, false, true)) }},
		{graph.OpCumSum, "exclusive i32", func(b *builder) { b.out(b.g.CumSum(b.in(tensor.I32, 5, 6), 0, true, false)) }},
		// Positive terms: a long scan of mixed signs cancels to sums far
		// smaller than its terms, beyond the catalogue tolerance of any
		// F32 accumulation (the reference accumulates in float64).
		{graph.OpCumSum, "long", func(b *builder) { b.out(b.g.CumSum(b.ranged(f32, 0.5, 1.5, 2, 600), 1, false, false)) }},

		{graph.OpLayerNorm, "last axis", func(b *builder) { b.out(b.g.LayerNorm(b.x(2, 3, 40), b.w(40), b.w(40), 2, 1e-5)) }},
		{graph.OpLayerNorm, "two axes", func(b *builder) { b.out(b.g.LayerNorm(b.x(2, 3, 8), b.w(3, 8), b.w(3, 8), 1, 1e-5)) }},
		{graph.OpLayerNorm, "wide no bias", func(b *builder) { b.out(b.g.LayerNorm(b.x(3, 300), b.w(300), nil, 1, 1e-5)) }},
		{graph.OpRMSNorm, "last axis", func(b *builder) { b.out(b.g.RMSNorm(b.x(2, 3, 40), b.w(40), 2, 1e-6)) }},
		{graph.OpRMSNorm, "wide f16 no scale", func(b *builder) { b.out(b.g.RMSNorm(b.in(f16, 3, 300), nil, 1, 1e-6)) }},
		{graph.OpInstanceNorm, "f32", func(b *builder) { b.out(b.g.InstanceNorm(b.x(2, 3, 4, 5), b.w(3), b.w(3), 1e-5)) }},
		{graph.OpInstanceNorm, "wide plane", func(b *builder) { b.out(b.g.InstanceNorm(b.x(1, 2, 300), b.w(2), b.w(2), 1e-3)) }},
		{graph.OpInstanceNorm, "f16", func(b *builder) { b.out(b.g.InstanceNorm(b.in(f16, 2, 2, 3, 3), b.in(f16, 2), b.in(f16, 2), 1e-5)) }},
		{graph.OpInstanceNorm, "f32 specials", func(b *builder) { b.out(b.g.InstanceNorm(b.specials(f32, 2, 4, 9), b.w(4), b.w(4), 1e-5)) }},
		{graph.OpBatchNorm, "f32", func(b *builder) {
			b.out(b.g.BatchNorm(b.x(2, 3, 4, 5), b.w(3), b.w(3), b.w(3), b.positiveParam(3), 1e-3))
		}},

		{graph.OpConv2D, "grouped strided", func(b *builder) {
			b.out(b.g.Conv2D(b.x(2, 4, 9, 8), b.w(6, 2, 3, 3), b.w(6), graph.ConvOpts{Strides: []int{2, 1}, Pads: pad1, Groups: 2}))
		}},
		{graph.OpConv2D, "depthwise dilated", func(b *builder) {
			b.out(b.g.Conv2D(b.x(1, 4, 9, 10), b.w(4, 1, 3, 2), nil, graph.ConvOpts{Pads: []int{2, 1, 2, 1}, Dilations: []int{2, 3}, Groups: 4}))
		}},
		{graph.OpConv2D, "1x1", func(b *builder) { b.out(b.g.Conv2D(b.x(2, 8, 5, 5), b.w(16, 8, 1, 1), b.w(16), graph.ConvOpts{})) }},
		{graph.OpMaxPool2D, "3x3 s2 p1", func(b *builder) {
			b.out(b.g.MaxPool2D(b.x(2, 3, 9, 8), graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: pad1}))
		}},
		{graph.OpMaxPool2D, "asymmetric", func(b *builder) {
			b.out(b.g.MaxPool2D(b.x(1, 2, 7, 9), graph.PoolOpts{Kernel: []int{2, 3}, Strides: []int{2, 1}, Pads: []int{1, 0, 0, 2}}))
		}},
		{graph.OpAvgPool2D, "3x3 s2 p1", func(b *builder) {
			b.out(b.g.AvgPool2D(b.x(2, 3, 9, 8), graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: pad1}))
		}},
		{graph.OpAvgPool2D, "count pad", func(b *builder) {
			b.out(b.g.AvgPool2D(b.x(1, 2, 7, 9), graph.PoolOpts{Kernel: []int{3, 2}, Strides: []int{2, 2}, Pads: pad1, CountPad: true}))
		}},
		{graph.OpGlobalAvgPool, "4-D", func(b *builder) { b.out(b.g.GlobalAvgPool(b.x(2, 3, 5, 6))) }},
		{graph.OpGlobalAvgPool, "3-D f16", func(b *builder) { b.out(b.g.GlobalAvgPool(b.in(f16, 2, 4, 30))) }},

		{graph.OpReshape, "f32", func(b *builder) { b.out(b.g.Reshape(b.x(3, 4, 5), 12, -1)) }},
		{graph.OpTranspose, "f32", func(b *builder) { b.out(b.g.Transpose(b.x(2, 3, 4), 2, 0, 1)) }},
		{graph.OpTranspose, "i64", func(b *builder) { b.out(b.g.Transpose(b.in(tensor.I64, 3, 5), 1, 0)) }},
		{graph.OpConcat, "axis 1", func(b *builder) { b.out(b.g.Concat(1, b.x(2, 3, 4), b.x(2, 1, 4), b.x(2, 2, 4))) }},
		{graph.OpConcat, "bf16 last axis", func(b *builder) { b.out(b.g.Concat(-1, b.in(tensor.BF16, 3, 2), b.in(tensor.BF16, 3, 5))) }},
		{graph.OpSplit, "axis 2", func(b *builder) { b.out(b.g.Split(b.x(2, 3, 5), 2, 2, 3)...) }},
		{graph.OpSlice, "negative step", func(b *builder) {
			b.out(b.g.Slice(b.x(4, 6, 5), graph.SliceSpec{Axes: []int{0, 2}, Starts: []int{1, 4}, Ends: []int{4, 0}, Steps: []int{2, -1}}))
		}},
		{graph.OpGather, "axis 0 i64", func(b *builder) { b.out(b.g.Gather(b.x(5, 4), b.ranged(tensor.I64, -5, 4, 2, 3), 0)) }},
		{graph.OpGather, "axis 1 i32", func(b *builder) { b.out(b.g.Gather(b.x(3, 6, 2), b.ranged(tensor.I32, -6, 5, 4), 1)) }},
		{graph.OpExpand, "broadcast", func(b *builder) { b.out(b.g.Expand(b.x(4, 1), 3, 4, 5)) }},
		{graph.OpSqueeze, "f32", func(b *builder) { b.out(b.g.Squeeze(b.x(3, 1, 5), 1)) }},
		{graph.OpUnsqueeze, "f32", func(b *builder) { b.out(b.g.Unsqueeze(b.x(3, 5), 0, 2)) }},
		{graph.OpFlatten, "f32", func(b *builder) { b.out(b.g.Flatten(b.x(2, 3, 4), 1)) }},
		{graph.OpPad, "constant", func(b *builder) { b.out(b.g.Pad(b.x(2, 3, 4), []int{0, 1, 2, 1, 0, 1}, graph.PadConstant, 1.5)) }},
		{graph.OpPad, "reflect", func(b *builder) { b.out(b.g.Pad(b.x(2, 3, 4), []int{0, 1, 0, 0, 1, 2}, graph.PadReflect, 0)) }},
		{graph.OpPad, "edge i32", func(b *builder) { b.out(b.g.Pad(b.in(tensor.I32, 3, 4), []int{2, 0, 1, 3}, graph.PadEdge, 0)) }},
		{graph.OpTile, "f32", func(b *builder) { b.out(b.g.Tile(b.x(2, 3), 2, 3)) }},

		{graph.OpAttention, "causal", func(b *builder) {
			b.out(b.g.Attention(b.x(1, 2, 5, 8), b.x(1, 2, 5, 8), b.x(1, 2, 5, 8), nil, graph.AttentionOpts{Causal: true}))
		}},
		{graph.OpAttention, "gqa float mask", func(b *builder) {
			b.out(b.g.Attention(b.x(2, 4, 3, 8), b.x(2, 2, 6, 8), b.x(2, 2, 6, 4), b.x(1, 1, 3, 6), graph.AttentionOpts{Scale: 0.3}))
		}},
		{graph.OpAttention, "bool mask head dim 40", func(b *builder) {
			b.out(b.g.Attention(b.x(1, 2, 4, 40), b.x(1, 2, 7, 40), b.x(1, 2, 7, 36), b.in(tensor.Bool, 1, 2, 4, 7), graph.AttentionOpts{}))
		}},
		{graph.OpAttention, "kv length causal", func(b *builder) { // counts past both ends clamp
			b.out(b.g.Attention(b.x(3, 4, 2, 8), b.x(3, 2, 9, 8), b.x(3, 2, 9, 8), nil, graph.AttentionOpts{Causal: true, KVLen: b.ranged(tensor.I64, -2, 11, 3)}))
		}},
		{graph.OpAttention, "kv length bool mask", func(b *builder) {
			b.out(b.g.Attention(b.x(2, 2, 3, 8), b.x(2, 2, 9, 8), b.x(2, 2, 9, 4), b.in(tensor.Bool, 2, 1, 3, 9), graph.AttentionOpts{KVLen: b.ranged(tensor.I64, 0, 9, 2)}))
		}},
		{graph.OpRoPE, "halves", func(b *builder) { b.out(b.g.RoPE(b.x(2, 3, 5, 8), b.x(5, 4), b.x(5, 4), false)) }},
		{graph.OpRoPE, "interleaved bf16", func(b *builder) {
			b.out(b.g.RoPE(b.in(tensor.BF16, 2, 3, 4), b.in(tensor.BF16, 3, 2), b.in(tensor.BF16, 3, 2), true))
		}},

		{graph.OpFusedElementwise, "broadcast chain", func(b *builder) {
			x := b.x(3, 1, 6)
			b.out(b.g.Tanh(b.g.Add(b.g.Mul(x, b.x(4, 1)), b.g.Exp(x))))
			b.fused(graph.OpFusedElementwise)
		}},
		{graph.OpFusedMatMul, "bias relu", func(b *builder) {
			b.out(b.g.Relu(b.g.Add(b.g.MatMul(b.x(2, 5, 12), b.w(12, 7)), b.w(7))))
			b.fused(graph.OpFusedMatMul)
		}},
		{graph.OpAddLayerNorm, "residual", func(b *builder) {
			b.out(b.g.LayerNorm(b.g.Add(b.x(2, 3, 40), b.x(2, 3, 40)), b.w(40), b.w(40), 2, 1e-5))
			b.fused(graph.OpAddLayerNorm)
		}},
		{graph.OpAddRMSNorm, "residual", func(b *builder) {
			b.out(b.g.RMSNorm(b.g.Add(b.x(4, 48), b.x(4, 48)), b.w(48), 1, 1e-6))
			b.fused(graph.OpAddRMSNorm)
		}},
		{graph.OpFusedConv2D, "bias relu", func(b *builder) {
			b.out(b.g.Relu(b.g.Conv2D(b.x(2, 3, 8, 7), b.w(8, 3, 3, 3), b.w(8), graph.ConvOpts{Pads: pad1})))
			b.fused(graph.OpFusedConv2D)
		}},
		{graph.OpFusedConv2D, "residual", func(b *builder) {
			b.out(b.g.Relu(b.g.Add(b.g.Conv2D(b.x(1, 4, 6, 6), b.w(4, 4, 3, 3), b.w(4), graph.ConvOpts{Pads: pad1}), b.x(1, 4, 6, 6))))
			b.fused(graph.OpFusedConv2D)
		}},
		{graph.OpFusedConv2D, "pooled", func(b *builder) {
			c := b.g.Relu(b.g.Conv2D(b.x(2, 3, 9, 9), b.w(4, 3, 3, 3), b.w(4), graph.ConvOpts{Pads: pad1}))
			b.out(b.g.MaxPool2D(c, graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}}))
			b.fused(graph.OpFusedConv2D)
		}},
		{graph.OpCustom, "ptx negate", func(b *builder) { b.out(b.g.Custom(negateSpec(), b.x(3, 50))) }},
	}
}

// negateSpec is a custom op y = -x whose CUDA kernel is a module of its
// own: kiln's PTX for a Neg of the same shape, as a user would bring
// one, launched with that kernel's geometry.
func negateSpec() *graph.CustomSpec {
	g := graph.New()
	n := g.Neg(g.Input("x", tensor.F32, 3, 50))
	k, _, err := ptx.EmitNode("user_negate", n)
	if err != nil {
		panic(err)
	}
	return &graph.CustomSpec{Name: "Negate", Infer: graph.SameAsInput(0),
		CPU: func(out tensor.Tensor, ins ...tensor.Tensor) error {
			y, x := out.F32(), ins[0].F32()
			for i := range y {
				y[i] = -x[i]
			}
			return nil
		},
		PTX: &graph.CustomPTX{Module: ptx.Module(k), Entry: k.Name,
			Launch: func(int) (grid, block [3]int) { return k.Launch.Grid, k.Launch.Block }}}
}

// catalogueOps is every op ops' catalogue has a kernel for, in op order:
// the rows the matrix must have.
func catalogueOps() []graph.Op {
	var out []graph.Op
	for _, op := range append(append(graph.Ops(), graph.FusedOps()...), graph.OpCustom) {
		if _, err := ops.Lookup(op); err == nil {
			out = append(out, op)
		}
	}
	return out
}

// topKBoth is TopK's values and indices, as one case's two outputs.
func topKBoth(g *graph.Graph, x *graph.Node, k, axis int, smallest bool) []*graph.Node {
	v, i := g.TopK(x, k, axis, smallest)
	return []*graph.Node{v, i}
}
