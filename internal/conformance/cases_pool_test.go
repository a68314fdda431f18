package conformance

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// poolNDCases cover the N-D pools' reference (1 to 3 spatial axes,
// dilations, padding, both index orders, integer dtypes, ties from a
// coarse grid) and MaxUnpool (duplicate indices from a small range).
func poolNDCases() []opCase {
	maxBoth := func(b *builder, x *graph.Node, o graph.PoolNDOpts) {
		v, i := b.g.MaxPoolND(x, o)
		b.out(v, i)
	}
	return []opCase{
		{graph.OpMaxPoolND, "3-D padded ties", func(b *builder) {
			maxBoth(b, b.steps(tensor.F32, -2, 2, 1, 1, 2, 4, 5, 6), graph.PoolNDOpts{Kernel: []int{2, 3, 2}, Strides: []int{2, 1, 2}, Pads: []int{1, 1, 0, 0, 1, 1}})
		}},
		{graph.OpMaxPoolND, "2-D dilated column-major", func(b *builder) {
			maxBoth(b, b.x(2, 3, 7, 6), graph.PoolNDOpts{Kernel: []int{2, 2}, Dilations: []int{2, 3}, ColMajor: true})
		}},
		{graph.OpMaxPoolND, "1-D u8", func(b *builder) {
			maxBoth(b, b.in(tensor.U8, 2, 2, 9), graph.PoolNDOpts{Kernel: []int{3}, Strides: []int{2}, Pads: []int{1, 1}})
		}},
		{graph.OpMaxPoolND, "2-D i32", func(b *builder) {
			maxBoth(b, b.in(tensor.I32, 1, 2, 5, 5), graph.PoolNDOpts{Kernel: []int{3, 2}, Strides: []int{2, 2}})
		}},
		{graph.OpMaxPoolND, "f32 specials", func(b *builder) {
			maxBoth(b, b.specials(tensor.F32, 1, 2, 8, 9), graph.PoolNDOpts{Kernel: []int{2, 3}, Strides: []int{2, 3}})
		}},
		{graph.OpAvgPoolND, "3-D", func(b *builder) {
			b.out(b.g.AvgPoolND(b.x(1, 3, 5, 4, 6), graph.PoolNDOpts{Kernel: []int{2, 2, 3}, Strides: []int{1, 2, 2}}))
		}},
		{graph.OpAvgPoolND, "3-D padded count_include_pad", func(b *builder) {
			b.out(b.g.AvgPoolND(b.x(2, 2, 4, 4, 4), graph.PoolNDOpts{Kernel: []int{3, 3, 3}, Strides: []int{2, 2, 2}, Pads: []int{1, 1, 1, 1, 1, 1}, CountPad: true}))
		}},
		{graph.OpAvgPoolND, "2-D bf16 dilated", func(b *builder) {
			b.out(b.g.AvgPoolND(b.in(tensor.BF16, 2, 3, 7, 6), graph.PoolNDOpts{Kernel: []int{2, 3}, Dilations: []int{2, 1}, Pads: []int{1, 0, 0, 2}}))
		}},
		{graph.OpAvgPoolND, "1-D dilated padded f64", func(b *builder) {
			b.out(b.g.AvgPoolND(b.in(tensor.F64, 2, 3, 11), graph.PoolNDOpts{Kernel: []int{3}, Dilations: []int{2}, Pads: []int{2, 1}}))
		}},
		{graph.OpMaxUnpool, "2-D duplicates", func(b *builder) {
			b.out(b.g.MaxUnpool(b.x(1, 2, 3, 3), b.ranged(tensor.I64, 0, 11, 1, 2, 3, 3), []int{1, 2, 3, 4}))
		}},
		{graph.OpMaxUnpool, "duplicates across chunks f16", func(b *builder) {
			b.out(b.g.MaxUnpool(b.in(tensor.F16, 1, 2, 30, 40), b.ranged(tensor.I64, 0, 99, 1, 2, 30, 40), []int{1, 2, 60, 80}))
		}},
		{graph.OpMaxUnpool, "3-D i32", func(b *builder) {
			b.out(b.g.MaxUnpool(b.in(tensor.I32, 2, 1, 2, 2, 2), b.ranged(tensor.I64, 0, 63, 2, 1, 2, 2, 2), []int{2, 1, 4, 4, 4}))
		}},
	}
}
