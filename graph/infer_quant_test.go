package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func quantCases() []inferCase {
	axisIs := func(want int) func(t *testing.T, a Attrs) {
		return func(t *testing.T, a Attrs) {
			if a.Axis != want {
				t.Errorf("axis %d, want %d", a.Axis, want)
			}
		}
	}
	return []inferCase{
		// A nil zero point is a U8 zero: the result is U8.
		{name: "QuantizeLinear/default-u8", dt: tensor.U8, shape: sh(2, 3), attrs: axisIs(0), build: func(g *Graph) *Node {
			return g.QuantizeLinear(f32(g, 2, 3), f32(g), nil, 1)
		}},
		// Per axis: -3 of rank 4 is axis 1, with 3 scales.
		{name: "QuantizeLinear/per-axis-i8", dt: tensor.I8, shape: sh(1, 3, 2, 2), attrs: axisIs(1), build: func(g *Graph) *Node {
			return g.QuantizeLinear(f32(g, 1, 3, 2, 2), f32(g, 3), in(g, tensor.I8, 3), -3)
		}},
		{name: "DequantizeLinear/u8-f64", dt: tensor.F64, shape: sh(4), build: func(g *Graph) *Node {
			return g.DequantizeLinear(in(g, tensor.U8, 4), in(g, tensor.F64), nil, 0)
		}},
		// A [1] scale is per tensor whatever the axis says.
		{name: "DequantizeLinear/i32-one-scale", dt: tensor.F16, shape: sh(5, 2), attrs: axisIs(0), build: func(g *Graph) *Node {
			return g.DequantizeLinear(in(g, tensor.I32, 5, 2), in(g, tensor.F16, 1), in(g, tensor.I32, 1), 7)
		}},
		{name: "DynamicQuantizeLinear/q", dt: tensor.U8, shape: sh(2, 5), build: func(g *Graph) *Node {
			q, _, _ := g.DynamicQuantizeLinear(f32(g, 2, 5))
			return q
		}},
		{name: "DynamicQuantizeLinear/scale", dt: tensor.F32, shape: sh(), build: func(g *Graph) *Node {
			_, s, _ := g.DynamicQuantizeLinear(f32(g, 2, 5))
			return s
		}},
		{name: "DynamicQuantizeLinear/zero", dt: tensor.U8, shape: sh(), build: func(g *Graph) *Node {
			_, _, z := g.DynamicQuantizeLinear(f32(g, 2, 5))
			return z
		}},
		// Batched, a per-row [M, 1] and a per-column [N] zero point.
		{name: "MatMulInteger/batched-per-row-col", dt: tensor.I32, shape: sh(2, 4, 3), build: func(g *Graph) *Node {
			return g.MatMulInteger(in(g, tensor.U8, 2, 4, 5), in(g, tensor.I8, 5, 3), in(g, tensor.U8, 4, 1), in(g, tensor.I8, 3))
		}},
		{name: "MatMulInteger/vector", dt: tensor.I32, shape: sh(3), build: func(g *Graph) *Node {
			return g.MatMulInteger(in(g, tensor.I8, 5), in(g, tensor.I8, 5, 3), nil, nil)
		}},
		{name: "ConvInteger/per-channel", dt: tensor.I32, shape: sh(1, 4, 3, 2), build: func(g *Graph) *Node {
			return g.ConvInteger(in(g, tensor.U8, 1, 2, 5, 4), in(g, tensor.I8, 4, 1, 3, 3), in(g, tensor.U8), in(g, tensor.I8, 4),
				ConvOpts{Strides: []int{1, 2}, Pads: []int{0, 1, 0, 1}, Groups: 2})
		}},
	}
}

// TestQuantErrors checks that bad quantization operands are errors
// naming the op and the problem.
func TestQuantErrors(t *testing.T) {
	for _, c := range []struct {
		name, op, want string
		build          func(g *Graph)
	}{
		{"int x", "QuantizeLinear", "float dtype", func(g *Graph) { g.QuantizeLinear(in(g, tensor.I32, 3), f32(g), nil, 0) }},
		{"scale dtype", "QuantizeLinear", "share a float dtype", func(g *Graph) { g.QuantizeLinear(f32(g, 3), in(g, tensor.F64), nil, 0) }},
		{"i32 zero", "QuantizeLinear", "i8 or u8", func(g *Graph) { g.QuantizeLinear(f32(g, 3), f32(g), in(g, tensor.I32), 0) }},
		{"axis length", "QuantizeLinear", "must have 3 values", func(g *Graph) { g.QuantizeLinear(f32(g, 2, 3), f32(g, 2), in(g, tensor.U8, 2), 1) }},
		{"axis range", "QuantizeLinear", "axis", func(g *Graph) { g.QuantizeLinear(f32(g, 2, 3), f32(g, 3), in(g, tensor.U8, 3), 2) }},
		{"2-D scale", "DequantizeLinear", "scalar or 1-D", func(g *Graph) {
			g.DequantizeLinear(in(g, tensor.U8, 2, 3), f32(g, 2, 3), in(g, tensor.U8, 6), 0)
		}},
		{"zero count", "DequantizeLinear", "as many values", func(g *Graph) {
			g.DequantizeLinear(in(g, tensor.U8, 2, 3), f32(g, 3), in(g, tensor.U8), 1)
		}},
		{"zero dtype", "DequantizeLinear", "zero point of its dtype", func(g *Graph) {
			g.DequantizeLinear(in(g, tensor.U8, 3), f32(g), in(g, tensor.I8), 0)
		}},
		{"f64 dynamic", "DynamicQuantizeLinear", "f32", func(g *Graph) { g.DynamicQuantizeLinear(in(g, tensor.F64, 3)) }},
		{"i32 operand", "MatMulInteger", "i8 or u8", func(g *Graph) { g.MatMulInteger(in(g, tensor.I32, 2, 3), in(g, tensor.I8, 3, 2), nil, nil) }},
		// [M] would broadcast along K: per-row zero points are [M, 1].
		{"row zero along K", "MatMulInteger", "constant along K", func(g *Graph) {
			g.MatMulInteger(in(g, tensor.U8, 3, 3), in(g, tensor.U8, 3, 2), in(g, tensor.U8, 3), nil)
		}},
		{"col zero along K", "MatMulInteger", "constant along K", func(g *Graph) {
			g.MatMulInteger(in(g, tensor.U8, 2, 3), in(g, tensor.U8, 3, 2), nil, in(g, tensor.U8, 3, 2))
		}},
		{"zero grows", "MatMulInteger", "does not broadcast", func(g *Graph) {
			g.MatMulInteger(in(g, tensor.U8, 2, 3), in(g, tensor.U8, 3, 2), in(g, tensor.U8, 4, 2, 1), nil)
		}},
		{"conv zero", "ConvInteger", "[4] (per output channel)", func(g *Graph) {
			g.ConvInteger(in(g, tensor.U8, 1, 1, 3, 3), in(g, tensor.U8, 4, 1, 2, 2), nil, in(g, tensor.U8, 2), ConvOpts{})
		}},
		{"conv float", "ConvInteger", "i8 or u8", func(g *Graph) {
			g.ConvInteger(f32(g, 1, 1, 3, 3), in(g, tensor.U8, 4, 1, 2, 2), nil, nil, ConvOpts{})
		}},
	} {
		g := New()
		c.build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.op) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and %q", c.name, err, c.op, c.want)
		}
	}
}
