package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func moeCases() []inferCase {
	return []inferCase{
		// One row per token read by both slots.
		{name: "GroupedMatMul/rows", dt: tensor.F32, shape: sh(5, 2, 7), build: func(g *Graph) *Node {
			return g.GroupedMatMul(f32(g, 5, 3), f32(g, 4, 3, 7), in(g, tensor.I64, 5, 2))
		}},
		// A row per slot (the down projection), I32 ids.
		{name: "GroupedMatMul/slots-f64", dt: tensor.F64, shape: sh(3, 2, 4), build: func(g *Graph) *Node {
			return g.GroupedMatMul(in(g, tensor.F64, 3, 2, 6), in(g, tensor.F64, 8, 6, 4), in(g, tensor.I32, 3, 2))
		}},
		{name: "MoE/experts", dt: tensor.F32, shape: sh(6, 4), build: func(g *Graph) *Node {
			return g.MoEExperts(f32(g, 6, 4), in(g, tensor.I64, 6, 2), f32(g, 6, 2), f32(g, 3, 4, 5), f32(g, 3, 4, 5), f32(g, 3, 5, 4))
		}},
	}
}

// TestMoEErrors: bad operands of the MoE ops are errors naming the op and
// the operand.
func TestMoEErrors(t *testing.T) {
	for _, c := range []struct {
		name, op, want string
		build          func(g *Graph)
	}{
		{"float ids", "GroupedMatMul", "expert ids", func(g *Graph) { g.GroupedMatMul(f32(g, 2, 3), f32(g, 4, 3, 5), f32(g, 2, 1)) }},
		{"ids tokens", "GroupedMatMul", "[2, k]", func(g *Graph) { g.GroupedMatMul(f32(g, 2, 3), f32(g, 4, 3, 5), in(g, tensor.I64, 3, 1)) }},
		{"w depth", "GroupedMatMul", "w ", func(g *Graph) { g.GroupedMatMul(f32(g, 2, 3), f32(g, 4, 4, 5), in(g, tensor.I64, 2, 1)) }},
		{"slots", "GroupedMatMul", "slots", func(g *Graph) {
			g.GroupedMatMul(f32(g, 2, 3, 3), f32(g, 4, 3, 5), in(g, tensor.I64, 2, 2))
		}},
		{"int x", "GroupedMatMul", "float", func(g *Graph) {
			g.GroupedMatMul(in(g, tensor.I32, 2, 3), in(g, tensor.I32, 4, 3, 5), in(g, tensor.I64, 2, 2))
		}},
		{"weights shape", "MoE", "routing weights", func(g *Graph) {
			g.MoEExperts(f32(g, 6, 4), in(g, tensor.I64, 6, 2), f32(g, 6, 1), f32(g, 3, 4, 5), f32(g, 3, 4, 5), f32(g, 3, 5, 4))
		}},
		{"up shape", "MoE", "up", func(g *Graph) {
			g.MoEExperts(f32(g, 6, 4), in(g, tensor.I64, 6, 2), f32(g, 6, 2), f32(g, 3, 4, 5), f32(g, 3, 4, 6), f32(g, 3, 5, 4))
		}},
		{"down experts", "MoE", "down", func(g *Graph) {
			g.MoEExperts(f32(g, 6, 4), in(g, tensor.I64, 6, 2), f32(g, 6, 2), f32(g, 3, 4, 5), f32(g, 3, 4, 5), f32(g, 2, 5, 4))
		}},
		{"3-D x", "MoE", "[T, H]", func(g *Graph) {
			g.MoEExperts(f32(g, 1, 6, 4), in(g, tensor.I64, 6, 2), f32(g, 6, 2), f32(g, 3, 4, 5), f32(g, 3, 4, 5), f32(g, 3, 5, 4))
		}},
		{"k past E", "TopK", "k = 4", func(g *Graph) {
			g.MoE(f32(g, 2, 4), MoESpec{Router: f32(g, 4, 3), Gate: f32(g, 3, 4, 5), Up: f32(g, 3, 4, 5), Down: f32(g, 3, 5, 4), K: 4})
		}},
		{"no router", "MoE", "Router", func(g *Graph) { g.MoE(f32(g, 2, 4), MoESpec{K: 1}) }},
		{"half a shared expert", "MoE", "go together", func(g *Graph) {
			g.MoE(f32(g, 2, 4), MoESpec{Router: f32(g, 4, 3), Gate: f32(g, 3, 4, 5), Up: f32(g, 3, 4, 5), Down: f32(g, 3, 5, 4), K: 1, SharedGate: f32(g, 4, 2)})
		}},
	} {
		g := New()
		c.build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.op) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and %q", c.name, err, c.op, c.want)
		}
	}
}

// TestMoELayerShape: the layer keeps x's shape through the flattening of
// its leading dims, with softmax or sigmoid scoring and a shared expert,
// and verifies.
func TestMoELayerShape(t *testing.T) {
	for _, sc := range []MoEScoring{MoESoftmax, MoESigmoid} {
		g := New()
		x := f32(g, 2, 3, 4)
		y := g.MoE(x, MoESpec{Router: f32(g, 4, 5), RouterBias: f32(g, 5), Gate: f32(g, 5, 4, 6), Up: f32(g, 5, 4, 6), Down: f32(g, 5, 6, 4),
			K: 2, Scoring: sc, Renormalize: true, SharedGate: f32(g, 4, 3), SharedUp: f32(g, 4, 3), SharedDown: f32(g, 3, 4)})
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		if !y.Shape.Equal(sh(2, 3, 4)) || y.DType != tensor.F32 {
			t.Errorf("%v: %v%v, want F32[2 3 4]", sc, y.DType, y.Shape)
		}
		g.Output(y)
		if err := Verify(g); err != nil {
			t.Error(err)
		}
	}
}
