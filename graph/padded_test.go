package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// TestPaddedSources: which readers of a NonMaxSuppression selection keep
// its rows (PaddedSources maps them to it) and which mix them
// (CheckPadded names the first).
func TestPaddedSources(t *testing.T) {
	for _, c := range []struct {
		name string
		read func(g *Graph, sel, boxes *Node) *Node
		keep bool
	}{
		{"column by Gather", func(g *Graph, sel, _ *Node) *Node { return g.Gather(sel, g.Input("i", tensor.I64), 1) }, true},
		{"rows of boxes by index", func(g *Graph, sel, boxes *Node) *Node {
			return g.Gather(g.Reshape(boxes, 6, 4), g.Gather(sel, g.Input("i", tensor.I64), 1), 0)
		}, true},
		{"cast and add", func(g *Graph, sel, _ *Node) *Node {
			f := g.Cast(sel, tensor.F32)
			return g.Add(f, g.Input("b", tensor.F32, 3))
		}, true},
		{"slice of columns", func(g *Graph, sel, _ *Node) *Node {
			return g.Slice(sel, SliceSpec{Axes: []int{1}, Starts: []int{1}, Ends: []int{3}})
		}, true},
		{"transpose keeping rows", func(g *Graph, sel, _ *Node) *Node { return g.Transpose(g.Unsqueeze(sel, 2), 0, 2, 1) }, true},
		{"concat along columns", func(g *Graph, sel, _ *Node) *Node { return g.Concat(-1, sel, sel) }, true},
		{"rows of the selection by index", func(g *Graph, sel, _ *Node) *Node { return g.Gather(sel, g.Input("i", tensor.I64, 2), 0) }, false},
		{"slice dropping a row", func(g *Graph, sel, _ *Node) *Node {
			return g.Slice(sel, SliceSpec{Axes: []int{0}, Starts: []int{1}, Ends: []int{5}})
		}, false},
		{"transpose", func(g *Graph, sel, _ *Node) *Node { return g.Transpose(sel, 1, 0) }, false},
		{"sum over rows", func(g *Graph, sel, _ *Node) *Node { return g.ReduceSum(sel, false, 0) }, false},
		{"concat along rows", func(g *Graph, sel, _ *Node) *Node { return g.Concat(0, sel, sel) }, false},
		{"lower-rank broadcast", func(g *Graph, sel, _ *Node) *Node {
			col := g.Gather(sel, g.Input("i", tensor.I64), 1) // [5], its rows along the last axis of the sum
			return g.Add(col, g.Input("m", tensor.I64, 5, 5))
		}, false},
	} {
		g := New()
		boxes := g.Input("boxes", tensor.F32, 1, 6, 4)
		sel := g.NonMaxSuppression(boxes, g.Input("scores", tensor.F32, 1, 1, 6), NMSSpec{MaxPerClass: 5})
		y := c.read(g, sel, boxes)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		srcs, bad := PaddedSources(g)
		if got := srcs[y] == sel; got != c.keep {
			t.Errorf("%s: follows the selection: %v, want %v", c.name, got, c.keep)
		}
		err := CheckPadded(g)
		if c.keep != (err == nil) || c.keep != (bad == nil) {
			t.Errorf("%s: CheckPadded %v (first bad %v)", c.name, err, bad)
		}
		if err != nil && !strings.Contains(err.Error(), y.Name) {
			t.Errorf("%s: %v does not name %s", c.name, err, y.Name)
		}
	}
}
