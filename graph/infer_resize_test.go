package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func resizeCases() []inferCase {
	ct := func(name string, x, w tensor.Shape, o ConvTransposeOpts, want tensor.Shape) inferCase {
		return inferCase{name: "ConvTranspose/" + name, dt: tensor.F32, shape: want,
			build: func(g *Graph) *Node { return g.ConvTranspose(f32(g, x...), f32(g, w...), nil, o) }}
	}
	defaults := ct("defaults", sh(1, 2, 3, 3), sh(2, 4, 3, 3), ConvTransposeOpts{}, sh(1, 4, 5, 5)) // 3-1+3
	defaults.attrs = checkConvDefaults
	return []inferCase{
		defaults,
		// H: 3·(3-1) + 2·(3-1) + 1 - 1 - 0 = 10; W: 2·(4-1) + 1·(2-1) + 1 - 0 - (-1) = 9
		ct("strided-groups", sh(2, 4, 3, 4), sh(4, 3, 3, 2),
			ConvTransposeOpts{Strides: []int{3, 2}, Dilations: []int{2, 1}, Pads: []int{1, 0, 0, -1}, Groups: 2}, sh(2, 6, 10, 9)),
		ct("1d", sh(1, 1, 3), sh(1, 2, 3), ConvTransposeOpts{}, sh(1, 2, 5)),
		ct("3d", sh(1, 1, 3, 4, 5), sh(1, 2, 3, 3, 3), ConvTransposeOpts{}, sh(1, 2, 5, 6, 7)),
		{name: "Resize/nearest", dt: tensor.F16, shape: sh(1, 2, 6, 9), build: func(g *Graph) *Node {
			return g.Resize(in(g, tensor.F16, 1, 2, 3, 3), ResizeSpec{Sizes: []int{1, 2, 6, 9}, Scales: []float64{1, 1, 2, 3}})
		}},
	}
}

// TestResizeOpErrors checks that bad Resize specs are errors naming the problem.
func TestResizeOpErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		spec ResizeSpec
		dt   tensor.DType
		want string
	}{
		{"rank", ResizeSpec{Sizes: []int{2, 2}, Scales: []float64{1, 1}}, tensor.F32, "one value per input axis"},
		{"scale", ResizeSpec{Sizes: []int{1, 2, 2}, Scales: []float64{1, 0, 1}}, tensor.F32, "axis 1"},
		{"roi", ResizeSpec{Sizes: []int{1, 2, 2}, Scales: []float64{1, 1, 1}, Coord: CoordTFCropAndResize}, tensor.F32, "ROI of 6"},
		{"stray roi", ResizeSpec{Sizes: []int{1, 2, 2}, Scales: []float64{1, 1, 1}, ROI: make([]float64, 6)}, tensor.F32, "only read by tf_crop_and_resize"},
		{"int", ResizeSpec{Sizes: []int{1, 2, 2}, Scales: []float64{1, 1, 1}}, tensor.I32, "float only"},
		{"mode", ResizeSpec{Sizes: []int{1, 2, 2}, Scales: []float64{1, 1, 1}, Mode: 7}, tensor.F32, "ResizeMode(7)"},
	} {
		g := New()
		g.Resize(g.Input("x", c.dt, 1, 2, 2), c.spec)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Resize") {
			t.Errorf("%s: error %v, want one naming Resize and %q", c.name, err, c.want)
		}
	}
	g := New()
	g.ConvTranspose(f32(g, 1, 2, 3, 3), f32(g, 3, 2, 3, 3), nil, ConvTransposeOpts{})
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "input channels 2") {
		t.Errorf("ConvTranspose with a wrong weight: error %v", err)
	}
}
