package conformance

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// moeCases: the routed ops over rows (one per token) and slots (one per
// slot), I32 and I64 ids, F64, and OpMoE with its weights as params (the
// CPU packs them per expert), a token count past the GEMM's row panels,
// a single token (its products' one-row path), and tokens wider than a
// CUDA block (ptx/moe.go's threads then own two columns each).
func moeCases() []opCase {
	i32, i64, f64 := tensor.I32, tensor.I64, tensor.F64
	wf64 := func(b *builder, dims ...int) *graph.Node {
		return b.value(true, f64, b.uniform(f64, -1, 1), dims...)
	}
	moe := func(b *builder, t, h, f, e, k int) {
		b.out(b.g.MoEExperts(b.x(t, h), b.ranged(i64, 0, float64(e-1), t, k), b.ranged(tensor.F32, 0, 1, t, k),
			b.w(e, h, f), b.w(e, h, f), b.w(e, f, h)))
	}
	return []opCase{
		{graph.OpGroupedMatMul, "rows i64", func(b *builder) {
			b.out(b.g.GroupedMatMul(b.x(6, 40), b.w(3, 40, 33), b.ranged(i64, 0, 2, 6, 2)))
		}},
		{graph.OpGroupedMatMul, "slots i32 f64", func(b *builder) {
			b.out(b.g.GroupedMatMul(b.in(f64, 5, 2, 9), wf64(b, 4, 9, 7), b.ranged(i32, 0, 3, 5, 2)))
		}},
		{graph.OpGroupedMatMul, "slots i32", func(b *builder) {
			b.out(b.g.GroupedMatMul(b.x(3, 2, 17), b.w(4, 17, 70), b.ranged(i32, 0, 3, 3, 2)))
		}},
		{graph.OpMoE, "40 tokens top-2 of 4", func(b *builder) { moe(b, 40, 24, 48, 4, 2) }},
		{graph.OpMoE, "one token top-3 of 8", func(b *builder) { moe(b, 1, 16, 40, 8, 3) }},
		{graph.OpMoE, "wide tokens i32 ids", func(b *builder) { // CUDA: two columns per thread
			// Weights scaled by 1/√1040, as a model's are, so the f32
			// products keep the relative tolerance.
			small := func(dims ...int) *graph.Node {
				return b.value(true, tensor.F32, b.uniform(tensor.F32, -0.03, 0.03), dims...)
			}
			b.out(b.g.MoEExperts(b.x(2, 1040), b.ranged(i32, 0, 2, 2, 2), b.ranged(tensor.F32, 0, 1, 2, 2),
				small(3, 1040, 24), small(3, 1040, 24), b.w(3, 24, 1040)))
		}},
		{graph.OpMoE, "f64 i32 ids", func(b *builder) {
			b.out(b.g.MoEExperts(b.in(f64, 7, 6), b.ranged(i32, 0, 2, 7, 2), b.ranged(f64, 0, 1, 7, 2),
				wf64(b, 3, 6, 5), wf64(b, 3, 6, 5), wf64(b, 3, 5, 6)))
		}},
	}
}
