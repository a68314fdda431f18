package conformance

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// indexCases: valid indices of both signs (the builder's integers are in
// [lo, hi]), duplicates for the scatters (every backend must apply them
// in order), the fast kernels' shapes (GatherElements' indices equal to
// the data off the axis, ScatterND's blocks) and the reference's (smaller
// indices).
func indexCases() []opCase {
	f16, i32, i64 := tensor.F16, tensor.I32, tensor.I64
	return []opCase{
		{graph.OpGatherElements, "axis 1 i64", func(b *builder) {
			b.out(b.g.GatherElements(b.x(3, 6, 2), b.ranged(i64, -6, 5, 3, 9, 2), 1))
		}},
		{graph.OpGatherElements, "smaller i32", func(b *builder) { b.out(b.g.GatherElements(b.x(5, 4), b.ranged(i32, -5, 4, 3, 2), 0)) }},
		{graph.OpGatherElements, "f16 last axis", func(b *builder) {
			b.out(b.g.GatherElements(b.in(f16, 4, 5), b.ranged(i64, -5, 4, 4, 7), -1))
		}},
		{graph.OpGatherND, "pairs", func(b *builder) { b.out(b.g.GatherND(b.x(3, 4, 5), b.ranged(i64, -3, 2, 6, 2), 0)) }},
		{graph.OpGatherND, "batch 1 i32", func(b *builder) { b.out(b.g.GatherND(b.x(3, 4, 5), b.ranged(i32, -4, 3, 3, 2, 1), 1)) }},
		{graph.OpScatterElements, "none", func(b *builder) {
			b.out(b.g.ScatterElements(b.x(4, 5), b.ranged(i64, -4, 3, 3, 5), b.x(3, 5), 0, graph.ScatterNone))
		}},
		{graph.OpScatterElements, "add axis 1", func(b *builder) {
			b.out(b.g.ScatterElements(b.x(4, 5), b.ranged(i64, -5, 4, 4, 3), b.x(4, 3), 1, graph.ScatterAdd))
		}},
		{graph.OpScatterElements, "max f16", func(b *builder) {
			b.out(b.g.ScatterElements(b.in(f16, 4, 5), b.ranged(i32, -4, 3, 3, 5), b.in(f16, 3, 5), 0, graph.ScatterMax))
		}},
		{graph.OpScatterElements, "mul i32", func(b *builder) {
			b.out(b.g.ScatterElements(b.in(i32, 4, 5), b.ranged(i64, -4, 3, 3, 5), b.ranged(i32, -3, 3, 3, 5), 0, graph.ScatterMul))
		}},
		{graph.OpScatterElements, "add i8 wraps", func(b *builder) {
			b.out(b.g.ScatterElements(b.ranged(tensor.I8, -128, 127, 6, 4), b.ranged(i32, -6, 5, 9, 4), b.ranged(tensor.I8, -128, 127, 9, 4), 0, graph.ScatterAdd))
		}},
		{graph.OpScatterElements, "min bf16 indices narrower", func(b *builder) {
			b.out(b.g.ScatterElements(b.in(tensor.BF16, 3, 7), b.ranged(i64, -7, 6, 2, 9), b.in(tensor.BF16, 2, 9), 1, graph.ScatterMin))
		}},
		{graph.OpScatterElements, "none over several blocks", func(b *builder) {
			b.out(b.g.ScatterElements(b.x(20, 70), b.ranged(i64, -70, 69, 20, 90), b.x(20, 90), 1, graph.ScatterNone))
		}},
		{graph.OpScatterND, "rows", func(b *builder) {
			b.out(b.g.ScatterND(b.x(6, 4, 3), b.ranged(i64, -6, 5, 5, 1), b.x(5, 4, 3), graph.ScatterNone))
		}},
		{graph.OpScatterND, "pairs add i32", func(b *builder) {
			b.out(b.g.ScatterND(b.x(6, 4, 3), b.ranged(i32, -4, 3, 7, 2), b.x(7, 3), graph.ScatterAdd))
		}},
		{graph.OpScatterND, "elements mul u8", func(b *builder) {
			b.out(b.g.ScatterND(b.ranged(tensor.U8, 0, 255, 3, 4), b.ranged(i32, -3, 2, 10, 2), b.ranged(tensor.U8, 0, 255, 10), graph.ScatterMul))
		}},
		{graph.OpScatterND, "cache rows i64 data", func(b *builder) {
			b.out(b.g.ScatterND(b.in(i64, 2, 8, 16), b.ranged(i64, -2, 1, 2, 3, 2), b.in(i64, 2, 3, 16), graph.ScatterNone))
		}},
		{graph.OpScatterND, "elements min i32", func(b *builder) {
			b.out(b.g.ScatterND(b.in(i32, 3, 4), b.ranged(i64, -3, 2, 6, 2), b.in(i32, 6), graph.ScatterMin))
		}},
	}
}
