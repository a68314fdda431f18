package conformance

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// sized is a ResizeSpec from input dims to output dims, scales out/in.
func sized(mode graph.ResizeMode, coord graph.ResizeCoord, in, out []int) graph.ResizeSpec {
	s := graph.ResizeSpec{Mode: mode, Coord: coord, Sizes: out, CubicA: -0.75}
	for i := range in {
		s.Scales = append(s.Scales, float64(out[i])/float64(in[i]))
	}
	return s
}

// resizeCases cover the fast paths (nearest at an integer scale and
// bilinear over the last two axes of NCHW) and the reference's other
// modes: cubic, a resized channel axis, extrapolation.
func resizeCases() []opCase {
	nchw := func(mode graph.ResizeMode, coord graph.ResizeCoord, in, out []int) func(b *builder) {
		return func(b *builder) { b.out(b.g.Resize(b.x(in...), sized(mode, coord, in, out))) }
	}
	crop := sized(graph.ResizeLinear, graph.CoordTFCropAndResize, []int{2, 4, 5}, []int{2, 3, 4})
	crop.ROI, crop.Extrapolation = []float64{0, -0.2, 0.3, 1, 0.9, 1.4}, 7
	cubic := sized(graph.ResizeCubic, graph.CoordHalfPixel, []int{1, 2, 4, 5}, []int{1, 2, 7, 3})
	cubic.ExcludeOutside, cubic.CubicA = true, -0.5
	near := sized(graph.ResizeNearest, graph.CoordHalfPixel, []int{1, 2, 5, 4}, []int{1, 2, 8, 7})
	near.Nearest = graph.NearestRoundPreferCeil
	return []opCase{
		{graph.OpResize, "nearest 2x3 asymmetric", nchw(graph.ResizeNearest, graph.CoordAsymmetric, []int{2, 3, 5, 7}, []int{2, 3, 10, 21})},
		{graph.OpResize, "nearest round_prefer_ceil", func(b *builder) { b.out(b.g.Resize(b.x(1, 2, 5, 4), near)) }},
		{graph.OpResize, "bilinear half_pixel 2x", nchw(graph.ResizeLinear, graph.CoordHalfPixel, []int{2, 3, 6, 9}, []int{2, 3, 12, 18})},
		{graph.OpResize, "bilinear align_corners down", nchw(graph.ResizeLinear, graph.CoordAlignCorners, []int{1, 4, 9, 8}, []int{1, 4, 5, 3})},
		{graph.OpResize, "cubic exclude_outside", func(b *builder) { b.out(b.g.Resize(b.x(1, 2, 4, 5), cubic)) }},
		{graph.OpResize, "linear channels f16", func(b *builder) {
			b.out(b.g.Resize(b.in(tensor.F16, 1, 3, 4, 4), sized(graph.ResizeLinear, graph.CoordPytorchHalfPixel, []int{1, 3, 4, 4}, []int{1, 5, 2, 6})))
		}},
		{graph.OpResize, "tf_crop_and_resize", func(b *builder) { b.out(b.g.Resize(b.x(2, 4, 5), crop)) }},
		{graph.OpResize, "f32 specials", func(b *builder) {
			b.out(b.g.Resize(b.specials(tensor.F32, 1, 1, 16, 9), sized(graph.ResizeLinear, graph.CoordHalfPixel, []int{1, 1, 16, 9}, []int{1, 1, 32, 18})))
		}},
		// The other nearest roundings and coordinate transformations, cubic
		// without exclude_outside (clamped edge taps), three resized axes,
		// BF16 and rank 1: the GPU kernels' branches.
		{graph.OpResize, "nearest floor tf_half_pixel_for_nn", func(b *builder) {
			s := sized(graph.ResizeNearest, graph.CoordTFHalfPixelForNN, []int{1, 2, 7, 5}, []int{1, 2, 4, 3})
			s.Nearest = graph.NearestFloor
			b.out(b.g.Resize(b.x(1, 2, 7, 5), s))
		}},
		{graph.OpResize, "nearest ceil pytorch_half_pixel to 1", func(b *builder) {
			s := sized(graph.ResizeNearest, graph.CoordPytorchHalfPixel, []int{1, 1, 6, 5}, []int{1, 1, 1, 8})
			s.Nearest = graph.NearestCeil
			b.out(b.g.Resize(b.x(1, 1, 6, 5), s))
		}},
		{graph.OpResize, "cubic asymmetric", nchw(graph.ResizeCubic, graph.CoordAsymmetric, []int{1, 1, 5, 6}, []int{1, 1, 8, 4})},
		{graph.OpResize, "trilinear align_corners", nchw(graph.ResizeLinear, graph.CoordAlignCorners, []int{1, 3, 4, 5}, []int{1, 5, 7, 3})},
		{graph.OpResize, "cubic bf16", func(b *builder) {
			b.out(b.g.Resize(b.in(tensor.BF16, 1, 2, 4, 4), sized(graph.ResizeCubic, graph.CoordHalfPixel, []int{1, 2, 4, 4}, []int{1, 2, 6, 7})))
		}},
		{graph.OpResize, "nearest rank 1", nchw(graph.ResizeNearest, graph.CoordHalfPixel, []int{7}, []int{12})},
		{graph.OpResize, "f32 specials asymmetric", func(b *builder) { // integral coordinates: 0·Inf taps give NaN
			b.out(b.g.Resize(b.specials(tensor.F32, 1, 1, 8, 9), sized(graph.ResizeLinear, graph.CoordAsymmetric, []int{1, 1, 8, 9}, []int{1, 1, 16, 18})))
		}},

		{graph.OpConvTranspose, "2-D strided grouped bias", func(b *builder) {
			b.out(b.g.ConvTranspose(b.x(2, 4, 5, 6), b.w(4, 3, 3, 3), b.w(6), graph.ConvTransposeOpts{
				Strides: []int{2, 2}, Pads: []int{1, 1, 0, -1}, Groups: 2}))
		}},
		{graph.OpConvTranspose, "2-D dilated wide", func(b *builder) {
			b.out(b.g.ConvTranspose(b.x(1, 40, 7, 9), b.w(40, 36, 2, 3), nil, graph.ConvTransposeOpts{
				Strides: []int{3, 1}, Dilations: []int{2, 2}, Pads: []int{0, 2, 1, 0}}))
		}},
		{graph.OpConvTranspose, "1-D", func(b *builder) {
			b.out(b.g.ConvTranspose(b.x(2, 3, 8), b.w(3, 2, 4), b.w(2), graph.ConvTransposeOpts{Strides: []int{2}, Pads: []int{1, 1}}))
		}},
		{graph.OpConvTranspose, "3-D", func(b *builder) {
			b.out(b.g.ConvTranspose(b.x(1, 2, 3, 4, 3), b.w(2, 3, 2, 3, 2), nil, graph.ConvTransposeOpts{Strides: []int{2, 1, 2}}))
		}},
		// The GPU gathers per output cell: mixed strides, dilations and an
		// output_padding (negative end pad) per axis, in 3-D and grouped.
		{graph.OpConvTranspose, "3-D grouped dilated output padding", func(b *builder) {
			b.out(b.g.ConvTranspose(b.x(1, 4, 3, 2, 3), b.w(4, 2, 2, 3, 2), b.w(4), graph.ConvTransposeOpts{
				Strides: []int{2, 3, 1}, Dilations: []int{1, 2, 2}, Pads: []int{0, 1, 0, -1, 0, 1}, Groups: 2}))
		}},
		// Negative begin pads (an output_shape past the full output) give
		// leading cells no tap reaches: bias only.
		{graph.OpConvTranspose, "2-D depthwise negative pads", func(b *builder) {
			b.out(b.g.ConvTranspose(b.x(1, 3, 4, 5), b.w(3, 1, 3, 3), b.w(3), graph.ConvTransposeOpts{
				Strides: []int{2, 2}, Pads: []int{-1, -2, 0, -1}, Groups: 3}))
		}},
		{graph.OpConvTranspose, "1-D stride 3 dilated output padding", func(b *builder) {
			b.out(b.g.ConvTranspose(b.x(2, 5, 6), b.w(5, 4, 3), b.w(4), graph.ConvTransposeOpts{
				Strides: []int{3}, Dilations: []int{2}, Pads: []int{2, -2}}))
		}},
	}
}
