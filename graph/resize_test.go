package graph

import (
	"reflect"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// sameGraph fails unless a and b have the same nodes (op, name, dtype,
// shape, attributes), inputs, params and outputs.
func sameGraph(t *testing.T, a, b *Graph) {
	t.Helper()
	if len(a.Nodes) != len(b.Nodes) {
		t.Fatalf("%d nodes, want %d", len(a.Nodes), len(b.Nodes))
	}
	for i, n := range a.Nodes {
		m := b.Nodes[i]
		if n.Op != m.Op || n.Name != m.Name || n.DType != m.DType || !n.Shape.Equal(m.Shape) || !reflect.DeepEqual(n.Attrs, m.Attrs) {
			t.Errorf("node %d: got %s %+v, want %s %+v", i, n, n.Attrs, m, m.Attrs)
		}
	}
	ids := func(ns []*Node) (out []int) {
		for _, n := range ns {
			out = append(out, n.ID)
		}
		return out
	}
	if !reflect.DeepEqual(ids(a.Inputs()), ids(b.Inputs())) || !reflect.DeepEqual(ids(a.Params()), ids(b.Params())) ||
		!reflect.DeepEqual(ids(a.Outputs()), ids(b.Outputs())) || !reflect.DeepEqual(a.OutputNames(), b.OutputNames()) {
		t.Errorf("interface differs: inputs %v/%v params %v/%v outputs %v/%v", ids(a.Inputs()), ids(b.Inputs()),
			ids(a.Params()), ids(b.Params()), ids(a.Outputs()), ids(b.Outputs()))
	}
}

// TestResizeMatchesBuilder checks that resizing a graph built at extent
// 16 gives the graph the builder makes at the smaller extent directly.
func TestResizeMatchesBuilder(t *testing.T) {
	cases := map[string]struct {
		to    int
		build func(s int) *Graph
	}{
		"heads reshape and merged rows": {5, func(s int) *Graph {
			g := New()
			x := g.Input("x", tensor.F32, 2, s, 32)
			h := g.Transpose(g.Reshape(x, 2, s, 4, 8), 0, 2, 1, 3)
			y := g.Reshape(g.Transpose(h, 0, 2, 1, 3), 2, s, 32)
			rows := g.MatMul(g.Reshape(y, 2*s, 32), g.Param("w", tensor.F32, 32, 16))
			g.Output(g.Reshape(rows, 2, s, 16))
			return g
		}},
		"expanded mask": {3, func(s int) *Graph {
			g := New()
			m := g.Input("mask", tensor.F32, 2, 1, 1, s)
			g.Output(g.Expand(m, 2, 4, s, s))
			return g
		}},
		"position table slice and tile": {5, func(s int) *Graph {
			g := New()
			x := g.Input("x", tensor.F32, s, 32)
			pos := g.Slice(g.Param("pos", tensor.F32, 64, 32), SliceSpec{Starts: []int{0}, Ends: []int{s}})
			bias := g.Tile(g.Param("b", tensor.F32, 1, 32), s, 1)
			g.Output(g.Add(g.Add(x, pos), bias))
			return g
		}},
		"slice of the bucketed axis to its end": {5, func(s int) *Graph {
			g := New()
			x := g.Input("x", tensor.F32, 2, s)
			g.Output(g.Slice(x, SliceSpec{Axes: []int{1}, Starts: []int{1}, Ends: []int{s}}))
			return g
		}},
		"equal split of the bucketed axis": {6, func(s int) *Graph {
			g := New()
			x := g.Input("x", tensor.F32, s, 4)
			p := g.SplitEqual(x, 0, 2)
			g.Output(g.Mul(p[0], p[1]))
			return g
		}},
		"weights with a coincidental extent dim": {5, func(s int) *Graph {
			g := New()
			x := g.Input("x", tensor.F32, s, 8)
			y := g.MatMul(x, g.Param("w1", tensor.F32, 8, 16))
			g.Output(g.MatMul(y, g.Param("w2", tensor.F32, 16, 16)))
			return g
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			big := c.build(16)
			got, err := Resize(big, 16, c.to)
			if err != nil {
				t.Fatal(err)
			}
			sameGraph(t, got, c.build(c.to))
			if err := Verify(big); err != nil || !big.Inputs()[0].Shape.Equal(c.build(16).Inputs()[0].Shape) {
				t.Errorf("Resize changed its argument: %v", err)
			}
		})
	}
}

func TestResizeErrors(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 16, 8)
	g.Output(g.Add(x, g.Param("table", tensor.F32, 16, 8)))
	_, err := Resize(g, 16, 5)
	mustContain(t, err, "add_2", "Param", `"table"`)

	g = New()
	x = g.Input("x", tensor.F32, 16, 8)
	c := g.ConstF32(sh(16, 1), make([]float32, 16))
	g.Output(g.Mul(x, g.Exp(c)))
	_, err = Resize(g, 16, 5)
	mustContain(t, err, "mul_", "Constant", "[16 1]")

	g = New()
	x = g.Input("x", tensor.F32, 2, 16)
	g.Output(g.Reshape(x, 4, 8))
	_, err = Resize(g, 16, 5)
	mustContain(t, err, "reshape", "cannot adapt")

	_, err = Resize(g, 7, 5)
	mustContain(t, err, "no input has a dim of 7")
	_, err = Resize(g, 16, 0)
	mustContain(t, err, "positive")
	_, err = Resize(nil, 16, 5)
	mustContain(t, err, "nil graph")
}
