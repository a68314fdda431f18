package graph

import (
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// indexCases: shapes worked out by hand from the ONNX operator specs.
func indexCases() []inferCase {
	F, I64 := tensor.F32, tensor.I64
	wantBatch := func(b int) func(*testing.T, Attrs) {
		return func(t *testing.T, a Attrs) {
			if a.BatchDims != b {
				t.Errorf("BatchDims %d, want %d", a.BatchDims, b)
			}
		}
	}
	return []inferCase{
		{name: "GatherElements", build: func(g *Graph) *Node { return g.GatherElements(f32(g, 3, 4), in(g, I64, 2, 4), 0) }, dt: F, shape: sh(2, 4), attrs: wantAxis(0)},
		{name: "GatherElements/longer-axis-neg", build: func(g *Graph) *Node {
			return g.GatherElements(in(g, tensor.I32, 3, 4), in(g, tensor.I32, 2, 7), -1)
		}, dt: tensor.I32, shape: sh(2, 7), attrs: wantAxis(1)},
		{name: "GatherND", build: func(g *Graph) *Node { return g.GatherND(f32(g, 2, 3, 4), in(g, I64, 5, 2), 0) }, dt: F, shape: sh(5, 4)},
		{name: "GatherND/batch", build: func(g *Graph) *Node { return g.GatherND(f32(g, 2, 3, 4), in(g, I64, 2, 1), 1) }, dt: F, shape: sh(2, 4),
			attrs: wantBatch(1)},
		{name: "GatherND/full-tuple", build: func(g *Graph) *Node { return g.GatherND(f32(g, 2, 3), in(g, I64, 4, 2), 0) }, dt: F, shape: sh(4)},
		{name: "ScatterElements", build: func(g *Graph) *Node {
			return g.ScatterElements(f32(g, 3, 3), in(g, I64, 2, 3), f32(g, 2, 3), -2, ScatterAdd)
		}, dt: F, shape: sh(3, 3), attrs: wantAxis(0)},
		{name: "ScatterND", build: func(g *Graph) *Node {
			return g.ScatterND(f32(g, 4, 4, 4), in(g, I64, 2, 1), f32(g, 2, 4, 4), ScatterMul)
		}, dt: F, shape: sh(4, 4, 4)},
		{name: "ScatterND/elements", build: func(g *Graph) *Node {
			return g.ScatterND(in(g, tensor.Bool, 8), in(g, tensor.I32, 4, 1), in(g, tensor.Bool, 4), ScatterNone)
		}, dt: tensor.Bool, shape: sh(8)},
	}
}

// TestIndexErrors: a malformed indexing node is an error naming the
// problem.
func TestIndexErrors(t *testing.T) {
	for _, c := range []errCase{
		{"GatherElements/rank", func(g *Graph, f fixture) { g.GatherElements(f.x, g.Input("k", tensor.I64, 3), 0) }, []string{"GatherElements", "rank"}},
		{"GatherElements/float-indices", func(g *Graph, f fixture) { g.GatherElements(f.x, f.x, 0) }, []string{"GatherElements", "i32 or i64"}},
		{"GatherElements/exceeds", func(g *Graph, f fixture) { g.GatherElements(f.x, g.Input("k", tensor.I64, 2, 4), 0) }, []string{"exceed", "axis 1"}},
		{"GatherElements/axis", func(g *Graph, f fixture) { g.GatherElements(f.x, f.i, 2) }, []string{"GatherElements", "axis"}},
		{"ScatterElements/updates", func(g *Graph, f fixture) { g.ScatterElements(f.x, f.i, f.v, 0, ScatterNone) }, []string{"updates", "[4]"}},
		{"ScatterElements/bool-add", func(g *Graph, f fixture) { g.ScatterElements(f.b, f.i, f.b, 0, ScatterAdd) }, []string{"reduction add", "bool"}},
		{"GatherND/batch", func(g *Graph, f fixture) { g.GatherND(f.x, f.i, 2) }, []string{"GatherND", "batch dims 2"}},
		{"GatherND/tuple", func(g *Graph, f fixture) { g.GatherND(f.x, g.Input("k", tensor.I64, 4, 3), 0) }, []string{"tuples of length 3"}},
		{"ScatterND/updates", func(g *Graph, f fixture) {
			g.ScatterND(f.x, g.Input("k", tensor.I64, 4, 1), g.Input("u", tensor.F32, 4, 2), ScatterNone)
		}, []string{"ScatterND", "updates [4 2], want [4 3]"}},
		{"ScatterND/dtype", func(g *Graph, f fixture) {
			g.ScatterND(f.x, g.Input("k", tensor.I64, 1, 2), g.Input("u", tensor.I32, 1), ScatterNone)
		}, []string{"dtype i32"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := New()
			c.build(g, newFixture(g))
			mustContain(t, g.Err(), c.words...)
		})
	}
}

// TestIndexedDim: index inputs and the smallest dim they index.
func TestIndexedDim(t *testing.T) {
	g := New()
	x := f32(g, 5, 3, 4)
	i2 := in(g, tensor.I64, 2, 2)
	for _, c := range []struct {
		n    *Node
		i    int
		want int
		ok   bool
	}{
		{g.Gather(x, in(g, tensor.I32, 7), 1), 1, 3, true},
		{g.GatherElements(x, in(g, tensor.I64, 5, 3, 2), 2), 1, 4, true},
		{g.GatherND(x, i2, 0), 1, 3, true},
		{g.GatherND(x, in(g, tensor.I64, 5, 1), 1), 1, 3, true},
		{g.ScatterND(x, i2, f32(g, 2, 4), ScatterNone), 1, 3, true},
		{g.ScatterElements(x, in(g, tensor.I64, 1, 1, 1), f32(g, 1, 1, 1), 0, ScatterAdd), 1, 5, true},
		{g.ScatterND(x, i2, f32(g, 2, 4), ScatterNone), 2, 0, false},
		{g.Add(x, x), 1, 0, false},
	} {
		if got, ok := IndexedDim(c.n, c.i); got != c.want || ok != c.ok {
			t.Errorf("%v input %d: %d %v, want %d %v", c.n.Op, c.i, got, ok, c.want, c.ok)
		}
	}
}
