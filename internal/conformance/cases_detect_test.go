package conformance

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// detectCases cover GridSample (every mode and padding, points beyond
// the input, F64, channels > 1 for the fast kernel's per-row taps),
// RoiAlign, NonMaxSuppression (ties from a coarse score grid, both box
// formats) and Det.
func detectCases() []opCase {
	gs := func(mode graph.SampleMode, pad graph.SamplePadding, align bool) graph.GridSampleSpec {
		return graph.GridSampleSpec{Mode: mode, Padding: pad, AlignCorners: align}
	}
	var cs []opCase
	for _, c := range []struct {
		name string
		spec graph.GridSampleSpec
	}{
		{"bilinear zeros", gs(graph.SampleBilinear, graph.PadZeros, false)},
		{"bilinear border aligned", gs(graph.SampleBilinear, graph.PadBorder, true)},
		{"bilinear reflection", gs(graph.SampleBilinear, graph.PadReflection, false)},
		{"nearest reflection aligned", gs(graph.SampleNearest, graph.PadReflection, true)},
		{"nearest zeros", gs(graph.SampleNearest, graph.PadZeros, false)},
		{"bicubic zeros", gs(graph.SampleBicubic, graph.PadZeros, false)},
		{"bicubic border", gs(graph.SampleBicubic, graph.PadBorder, false)},
		{"bicubic reflection aligned", gs(graph.SampleBicubic, graph.PadReflection, true)},
	} {
		spec := c.spec
		cs = append(cs, opCase{graph.OpGridSample, c.name, func(b *builder) {
			b.out(b.g.GridSample(b.x(2, 3, 5, 7), b.ranged(tensor.F32, -1.4, 1.4, 2, 4, 6, 2), spec))
		}})
	}
	return append(cs,
		opCase{graph.OpGridSample, "f64 bilinear", func(b *builder) {
			b.out(b.g.GridSample(b.in(tensor.F64, 1, 2, 4, 3), b.ranged(tensor.F64, -1.2, 1.2, 1, 3, 5, 2), gs(graph.SampleBilinear, graph.PadZeros, false)))
		}},
		opCase{graph.OpRoiAlign, "avg half_pixel", func(b *builder) {
			b.out(b.g.RoiAlign(b.x(2, 3, 8, 9), b.ranged(tensor.F32, -1, 9, 4, 4), b.ranged(tensor.I64, 0, 1, 4),
				graph.RoiAlignSpec{OutH: 3, OutW: 2, SpatialScale: 1, HalfPixel: true}))
		}},
		opCase{graph.OpRoiAlign, "max adaptive f64 rois past the input", func(b *builder) {
			b.out(b.g.RoiAlign(b.in(tensor.F64, 2, 2, 10, 12), b.ranged(tensor.F64, -3, 14, 5, 4), b.ranged(tensor.I64, 0, 1, 5),
				graph.RoiAlignSpec{OutH: 3, OutW: 4, SpatialScale: 0.75, HalfPixel: true, Max: true}))
		}},
		opCase{graph.OpRoiAlign, "max output_half_pixel sampling 2", func(b *builder) {
			b.out(b.g.RoiAlign(b.x(1, 2, 6, 6), b.ranged(tensor.F32, 0, 10, 3, 4), b.ranged(tensor.I64, 0, 0, 3),
				graph.RoiAlignSpec{OutH: 2, OutW: 2, SamplingRatio: 2, SpatialScale: 0.5, Max: true}))
		}},
		opCase{graph.OpNonMaxSuppression, "corners ties", func(b *builder) {
			b.out(b.g.NonMaxSuppression(b.ranged(tensor.F32, 0, 4, 2, 12, 4), b.steps(tensor.F32, 0, 1, 0.25, 2, 3, 12),
				graph.NMSSpec{MaxPerClass: 5, IOU: 0.3, MinScore: 0.2, HasMinScore: true}))
		}},
		opCase{graph.OpNonMaxSuppression, "center point f64", func(b *builder) {
			b.out(b.g.NonMaxSuppression(b.ranged(tensor.F64, 0, 3, 1, 9, 4), b.in(tensor.F64, 1, 2, 9),
				graph.NMSSpec{MaxPerClass: 20, IOU: 0.1, CenterPoint: true}))
		}},
		opCase{graph.OpDet, "batched 4x4", func(b *builder) {
			b.out(b.g.Det(b.x(2, 3, 4, 4)))
		}},
		opCase{graph.OpDet, "7x7 small integers, zero pivots and swaps", func(b *builder) {
			b.out(b.g.Det(b.steps(tensor.F32, -2, 2, 1, 6, 7, 7)))
		}},
		opCase{graph.OpDet, "f64 1x1 and singular", func(b *builder) {
			b.out(b.g.Det(b.steps(tensor.F64, 0, 1, 1, 5, 3, 3)), b.g.Det(b.in(tensor.F64, 2, 1, 1)))
		}},
	)
}
