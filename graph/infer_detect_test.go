package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func detectCases() []inferCase {
	return []inferCase{
		{name: "GridSample/bicubic", dt: tensor.F32, shape: sh(2, 3, 4, 5), build: func(g *Graph) *Node {
			return g.GridSample(f32(g, 2, 3, 7, 8), f32(g, 2, 4, 5, 2), GridSampleSpec{Mode: SampleBicubic, Padding: PadReflection})
		}},
		{name: "RoiAlign", dt: tensor.F64, shape: sh(5, 3, 2, 4), build: func(g *Graph) *Node {
			return g.RoiAlign(in(g, tensor.F64, 2, 3, 9, 9), in(g, tensor.F64, 5, 4), in(g, tensor.I64, 5), RoiAlignSpec{OutH: 2, OutW: 4, SpatialScale: 1})
		}},
		// 2 batches × 3 classes × min(4, 6 boxes) rows.
		{name: "NonMaxSuppression/bound", dt: tensor.I64, shape: sh(24, 3), build: func(g *Graph) *Node {
			return g.NonMaxSuppression(f32(g, 2, 6, 4), f32(g, 2, 3, 6), NMSSpec{MaxPerClass: 4, IOU: 0.5})
		}},
		{name: "NonMaxSuppression/more than boxes", dt: tensor.I64, shape: sh(6, 3), build: func(g *Graph) *Node {
			return g.NonMaxSuppression(f32(g, 1, 6, 4), f32(g, 1, 1, 6), NMSSpec{MaxPerClass: 1 << 40})
		}},
		{name: "Det", dt: tensor.F32, shape: sh(2, 3), build: func(g *Graph) *Node { return g.Det(f32(g, 2, 3, 4, 4)) }},
	}
}

// TestDetectErrors checks that bad sampling and detection inputs are
// errors naming the op and the problem.
func TestDetectErrors(t *testing.T) {
	for _, c := range []struct {
		name, op, want string
		build          func(g *Graph)
	}{
		{"grid last dim", "GridSample", "[N, Ho, Wo, 2]", func(g *Graph) { g.GridSample(f32(g, 1, 1, 4, 4), f32(g, 1, 2, 2, 3), GridSampleSpec{}) }},
		{"grid dtype", "GridSample", "float dtype", func(g *Graph) {
			g.GridSample(f32(g, 1, 1, 4, 4), in(g, tensor.F64, 1, 2, 2, 2), GridSampleSpec{})
		}},
		{"grid mode", "GridSample", "mode 7", func(g *Graph) { g.GridSample(f32(g, 1, 1, 4, 4), f32(g, 1, 2, 2, 2), GridSampleSpec{Mode: 7}) }},
		{"roi indices", "RoiAlign", "I64", func(g *Graph) {
			g.RoiAlign(f32(g, 1, 1, 4, 4), f32(g, 2, 4), in(g, tensor.I32, 2), RoiAlignSpec{OutH: 1, OutW: 1})
		}},
		{"roi output", "RoiAlign", "output 0×1", func(g *Graph) {
			g.RoiAlign(f32(g, 1, 1, 4, 4), f32(g, 2, 4), in(g, tensor.I64, 2), RoiAlignSpec{OutW: 1})
		}},
		{"nms scores", "NonMaxSuppression", "[B, C, N]", func(g *Graph) { g.NonMaxSuppression(f32(g, 1, 6, 4), f32(g, 1, 2, 5), NMSSpec{}) }},
		{"nms max", "NonMaxSuppression", ">= 0", func(g *Graph) { g.NonMaxSuppression(f32(g, 1, 6, 4), f32(g, 1, 2, 6), NMSSpec{MaxPerClass: -1}) }},
		{"det square", "Det", "[..., M, M]", func(g *Graph) { g.Det(f32(g, 2, 3, 4)) }},
		{"det int", "Det", "dtype", func(g *Graph) { g.Det(in(g, tensor.I32, 2, 2)) }},
	} {
		g := New()
		c.build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.op) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and %q", c.name, err, c.op, c.want)
		}
	}
}
