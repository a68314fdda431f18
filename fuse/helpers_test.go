package fuse

import (
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// runPass applies one pass to g and verifies the graph, returning what
// the pass logged and the unfused original (a clone taken before).
func runPass(t *testing.T, g *graph.Graph, pass func(*graph.Graph, *Log) error) (*Log, *graph.Graph) {
	t.Helper()
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if err := graph.Verify(g); err != nil {
		t.Fatal(err)
	}
	orig := g.Clone()
	var log Log
	if err := pass(g, &log); err != nil {
		t.Fatalf("pass: %v", err)
	}
	if err := graph.Verify(g); err != nil {
		t.Fatalf("graph invalid after the pass: %v\n%s", err, graph.Dump(g))
	}
	if err := g.Prune(); err != nil {
		t.Fatal(err)
	}
	return &log, orig
}

// count is how many nodes of op g holds (after Prune: live ones).
func count(g *graph.Graph, op graph.Op) int {
	n := 0
	for _, x := range g.Nodes {
		if x.Op == op {
			n++
		}
	}
	return n
}

func find(g *graph.Graph, op graph.Op) *graph.Node {
	for _, x := range g.Nodes {
		if x.Op == op {
			return x
		}
	}
	return nil
}

// sameResults interprets the original and the rewritten graph on the same
// seeded feeds and requires the outputs to agree within tol relative to
// max(1, |want|) (0: exactly, NaN matching NaN).
func sameResults(t *testing.T, orig, got *graph.Graph, tol float64) {
	t.Helper()
	feeds, err := testmodels.RandomFeeds(orig, 7)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ops.Interpret(orig, feeds)
	if err != nil {
		t.Fatalf("interpret original: %v", err)
	}
	have, err := ops.Interpret(got, feeds)
	if err != nil {
		t.Fatalf("interpret rewritten: %v\n%s", err, graph.Dump(got))
	}
	for i := range want {
		compare(t, i, have[i], want[i], tol)
	}
}

func compare(t *testing.T, i int, got, want tensor.Tensor, tol float64) {
	t.Helper()
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		t.Fatalf("output %d: %v, want %v", i, got, want)
	}
	g, w := got.Float64s(), want.Float64s()
	for j := range w {
		if math.IsNaN(w[j]) && math.IsNaN(g[j]) {
			continue
		}
		if d := math.Abs(g[j] - w[j]); !(d <= tol*max(1, math.Abs(w[j]))) {
			t.Fatalf("output %d element %d: got %v, want %v (tol %g)", i, j, g[j], w[j], tol)
		}
	}
}

// logged reports whether some line of lines contains every part.
func logged(lines []string, parts ...string) bool {
	for _, l := range lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func f32s(g *graph.Graph, s tensor.Shape, v ...float32) *graph.Node { return g.ConstF32(s, v) }
