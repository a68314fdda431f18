package conformance

import (
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// quantCases cover the quantization ops' reference: quotients on a grid
// that makes ties at .5 both ways, the full 8-bit ranges (0, 255, -128,
// 127) with saturation, NaN and Inf, per-axis scales and zero points,
// every integer pairing of the integer products with per-row and
// per-column zero points, and grouped, strided, padded ConvInteger.
func quantCases() []opCase {
	u8 := func(b *builder, dims ...int) *graph.Node { return b.ranged(tensor.U8, 0, 255, dims...) }
	i8 := func(b *builder, dims ...int) *graph.Node { return b.ranged(tensor.I8, -128, 127, dims...) }
	half := func(b *builder, dt tensor.DType, dims ...int) *graph.Node { return b.steps(dt, 0.5, 0.5, 1, dims...) }
	return []opCase{
		{graph.OpQuantizeLinear, "u8 ties and saturation", func(b *builder) {
			b.out(b.g.QuantizeLinear(b.steps(tensor.F32, -80, 80, 0.25, 4, 37), half(b, tensor.F32), u8(b), 0))
		}},
		{graph.OpQuantizeLinear, "i8 per axis specials", func(b *builder) {
			b.out(b.g.QuantizeLinear(b.specials(tensor.F32, 2, 3, 5), b.ranged(tensor.F32, 0.01, 0.2, 3), i8(b, 3), 1))
		}},
		{graph.OpQuantizeLinear, "f64 last axis", func(b *builder) {
			b.out(b.g.QuantizeLinear(b.steps(tensor.F64, -9, 9, 0.125, 3, 4), b.steps(tensor.F64, 0.25, 0.5, 0.25, 4), u8(b, 4), -1))
		}},
		{graph.OpQuantizeLinear, "f16", func(b *builder) {
			b.out(b.g.QuantizeLinear(b.steps(tensor.F16, -40, 40, 0.5, 50), half(b, tensor.F16), i8(b), 0))
		}},
		{graph.OpDequantizeLinear, "u8", func(b *builder) {
			b.out(b.g.DequantizeLinear(u8(b, 6, 40), b.ranged(tensor.F32, 0.001, 2, 1), u8(b, 1), 0))
		}},
		{graph.OpDequantizeLinear, "i8 per axis f64", func(b *builder) {
			b.out(b.g.DequantizeLinear(i8(b, 2, 5, 3), b.ranged(tensor.F64, 0.001, 2, 5), i8(b, 5), 1))
		}},
		{graph.OpDequantizeLinear, "i32 to bf16", func(b *builder) {
			b.out(b.g.DequantizeLinear(b.ranged(tensor.I32, -1e6, 1e6, 30), b.ranged(tensor.BF16, 0.001, 2), nil, 0))
		}},
		{graph.OpDequantizeLinear, "u8 to f16 per axis", func(b *builder) {
			b.out(b.g.DequantizeLinear(u8(b, 7, 2), b.ranged(tensor.F16, 0.01, 1, 7), u8(b, 7), 0))
		}},
		{graph.OpDynamicQuantizeLinear, "mixed signs", func(b *builder) {
			q, s, z := b.g.DynamicQuantizeLinear(b.x(3, 50))
			b.out(q, s, z)
		}},
		{graph.OpDynamicQuantizeLinear, "positive", func(b *builder) {
			q, s, z := b.g.DynamicQuantizeLinear(b.ranged(tensor.F32, 0.5, 40, 2, 33))
			b.out(q, s, z)
		}},
		{graph.OpDynamicQuantizeLinear, "negative zero point only", func(b *builder) {
			_, _, z := b.g.DynamicQuantizeLinear(b.ranged(tensor.F32, -9, -1, 17))
			b.out(z)
		}},
		{graph.OpDynamicQuantizeLinear, "NaN and -0 over several blocks", func(b *builder) {
			q, s, z := b.g.DynamicQuantizeLinear(b.mixed(tensor.F32, []float64{math.NaN(), math.Copysign(0, -1), 2.5, -1e-40}, 40, 300))
			b.out(q, s, z)
		}},
		{graph.OpMatMulInteger, "u8·i8 per row and column", func(b *builder) {
			b.out(b.g.MatMulInteger(u8(b, 5, 70), i8(b, 70, 9), u8(b, 5, 1), i8(b, 9)))
		}},
		{graph.OpMatMulInteger, "i8·u8 batched broadcast", func(b *builder) {
			b.out(b.g.MatMulInteger(i8(b, 2, 1, 3, 33), u8(b, 3, 33, 4), i8(b), u8(b, 3, 1, 4)))
		}},
		{graph.OpMatMulInteger, "u8·i8 several tiles", func(b *builder) {
			b.out(b.g.MatMulInteger(u8(b, 67, 45), i8(b, 45, 70), u8(b, 67, 1), i8(b, 70)))
		}},
		{graph.OpMatMulInteger, "u8·u8 vector no zero points", func(b *builder) {
			b.out(b.g.MatMulInteger(u8(b, 300), u8(b, 300, 6), nil, nil))
		}},
		{graph.OpMatMulInteger, "i8·i8 extremes", func(b *builder) {
			b.out(b.g.MatMulInteger(b.steps(tensor.I8, -128, 127, 255, 4, 64), b.steps(tensor.I8, -128, 127, 255, 64, 3), i8(b, 4, 1), i8(b, 1, 3)))
		}},
		{graph.OpConvInteger, "u8·i8 per channel padded strided", func(b *builder) {
			b.out(b.g.ConvInteger(u8(b, 2, 3, 9, 8), i8(b, 4, 3, 3, 2), u8(b), i8(b, 4), graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 0, 2, 1}}))
		}},
		{graph.OpConvInteger, "i8·u8 grouped dilated", func(b *builder) {
			b.out(b.g.ConvInteger(i8(b, 1, 4, 7, 7), u8(b, 6, 2, 2, 3), i8(b, 1), u8(b), graph.ConvOpts{Dilations: []int{2, 1}, Groups: 2, Pads: []int{1, 1, 1, 1}}))
		}},
		{graph.OpConvInteger, "u8·u8 no zero points", func(b *builder) {
			b.out(b.g.ConvInteger(u8(b, 1, 2, 5, 5), u8(b, 3, 2, 3, 3), nil, nil, graph.ConvOpts{}))
		}},
		// ONNX Runtime's dynamic quantization of a MatMul, fused.
		{graph.OpDynQuantMatMul, "i8 weights per column, bias", func(b *builder) {
			q, s, z := b.g.DynamicQuantizeLinear(b.x(2, 5, 70))
			mi := b.g.MatMulInteger(q, i8(b, 70, 9), z, i8(b, 9))
			y := b.g.Mul(b.g.Cast(mi, tensor.F32), b.g.Mul(s, b.ranged(tensor.F32, 0.001, 0.05, 9)))
			b.out(b.g.Add(y, b.x(9)))
			b.fused(graph.OpDynQuantMatMul)
		}},
		{graph.OpDynQuantMatMul, "i8 weights several tiles", func(b *builder) {
			q, s, z := b.g.DynamicQuantizeLinear(b.x(3, 25, 40))
			mi := b.g.MatMulInteger(q, i8(b, 40, 70), z, i8(b, 70))
			y := b.g.Mul(b.g.Cast(mi, tensor.F32), b.g.Mul(s, b.ranged(tensor.F32, 0.001, 0.05, 70)))
			b.out(b.g.Add(y, b.x(70)))
			b.fused(graph.OpDynQuantMatMul)
		}},
		{graph.OpDynQuantMatMul, "u8 weights scalar, scale first", func(b *builder) {
			q, s, z := b.g.DynamicQuantizeLinear(b.ranged(tensor.F32, -3, 1, 4, 33))
			mi := b.g.MatMulInteger(q, u8(b, 33, 17), z, u8(b))
			b.out(b.g.Mul(b.g.Mul(b.ranged(tensor.F32, 0.01, 0.1), s), b.g.Cast(mi, tensor.F32)))
			b.fused(graph.OpDynQuantMatMul)
		}},
		// ONNX Runtime's static QDQ form of a MatMul, Gemm and Conv, fused.
		{graph.OpQDQMatMul, "i8 per column, bias Add, Relu", func(b *builder) {
			b.out(b.g.Relu(b.g.Add(b.g.MatMul(qdqX(b, b.x(2, 5, 70), 0.02), qdqW(b, tensor.I8, 1, 9, 70, 9)), b.x(9))))
			b.fused(graph.OpQDQMatMul)
		}},
		{graph.OpQDQMatMul, "Gemm transB u8 per tensor saturating", func(b *builder) {
			b.out(b.g.Gemm(qdqX(b, b.ranged(tensor.F32, -9, 9, 6, 33), 0.01), qdqW(b, tensor.U8, 0, 1, 17, 33), b.x(17), 1, 1, false, true))
			b.fused(graph.OpQDQMatMul)
		}},
		{graph.OpQDQConv, "i8 per channel padded strided, Relu", func(b *builder) {
			w := qdqW(b, tensor.I8, 0, 4, 4, 3, 3, 2)
			b.out(b.g.Relu(b.g.Conv2D(qdqX(b, b.x(2, 3, 9, 8), 0.03), w, b.x(4), graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 0, 2, 1}})))
			b.fused(graph.OpQDQConv)
		}},
		{graph.OpQDQConv, "u8 per tensor grouped dilated", func(b *builder) {
			w := qdqW(b, tensor.U8, 0, 1, 6, 2, 2, 3)
			b.out(b.g.Conv2D(qdqX(b, b.x(1, 4, 7, 7), 0.05), w, nil, graph.ConvOpts{Dilations: []int{2, 1}, Groups: 2, Pads: []int{1, 1, 1, 1}}))
			b.fused(graph.OpQDQConv)
		}},
	}
}

// qdqX is x through a QuantizeLinear/DequantizeLinear pair, U8 per tensor,
// with fixed (param) scale s and a zero point in [100, 150].
func qdqX(b *builder, x *graph.Node, s float64) *graph.Node {
	scale := b.value(true, tensor.F32, func() float64 { return s }, 1)
	zero := b.value(true, tensor.U8, b.uniform(tensor.U8, 100, 150), 1)
	return b.g.DequantizeLinear(b.g.QuantizeLinear(x, scale, zero, 0), scale, zero, 0)
}

// qdqW is a DequantizeLinear of a random dt weight param of dims, per
// tensor (ch 1) or with ch scales and zero points along axis.
func qdqW(b *builder, dt tensor.DType, axis, ch int, dims ...int) *graph.Node {
	lo, hi := -128.0, 127.0
	if dt == tensor.U8 {
		lo, hi = 0, 255
	}
	w := b.value(true, dt, b.uniform(dt, lo, hi), dims...)
	scale := b.value(true, tensor.F32, b.uniform(tensor.F32, 0.001, 0.02), ch)
	zero := b.value(true, dt, b.uniform(dt, (lo+hi)/2-9, (lo+hi)/2+9), ch)
	return b.g.DequantizeLinear(w, scale, zero, axis)
}
