package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// countBody is a loop body: acc [2] F32 carried, k F32 [2] captured;
// outputs cond = iter < 3, acc + k, and the scan of acc + k.
func countBody() *Graph {
	b := New()
	it := b.Input("iter", tensor.I64)
	b.Input("cond", tensor.Bool)
	acc := b.Input("acc", tensor.F32, 2)
	k := b.Input("k", tensor.F32, 2)
	three, _ := tensor.FromI64(tensor.Shape{}, []int64{3})
	next := b.Add(acc, k)
	b.Output(b.Less(it, b.Constant(three)), next, next)
	return b
}

// loopCases: the packed value is the carried [2] F32 (64 bytes aligned),
// the scan [Bound 5, 2] F32 (64), the count I64 (64); LoopOutput reads
// each with its own dtype and shape.
func loopCases() []inferCase {
	build := func(g *Graph) *Node {
		n := g.Input("n", tensor.I64)
		return g.Loop(&LoopSpec{Body: countBody(), HasTrip: true, Carried: 1, Bound: 5}, n, g.Input("a", tensor.F32, 2), g.Input("k", tensor.F32, 2))
	}
	return []inferCase{
		{"Loop/packed", build, tensor.U8, tensor.Shape{192}, nil},
		{"LoopOutput/carried", func(g *Graph) *Node { return g.LoopOutput(build(g), 0) }, tensor.F32, tensor.Shape{2}, nil},
		{"LoopOutput/scan", func(g *Graph) *Node { return g.LoopOutput(build(g), 1) }, tensor.F32, tensor.Shape{5, 2}, nil},
		{"LoopOutput/count", func(g *Graph) *Node { return g.LoopOutput(build(g), 2) }, tensor.I64, tensor.Shape{}, nil},
	}
}

// TestLoopErrors: every inconsistency between a spec, its body and the
// node's inputs is an error on the graph naming the problem.
func TestLoopErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(g *Graph)
		want  string
	}{
		{"no spec", func(g *Graph) { g.Loop(nil) }, "no LoopSpec"},
		{"no bound for scans", func(g *Graph) {
			g.Loop(&LoopSpec{Body: countBody(), HasTrip: true, Carried: 1}, g.Input("n", tensor.I64), g.Input("a", tensor.F32, 2), g.Input("k", tensor.F32, 2))
		}, "no bound"},
		{"trip dtype", func(g *Graph) {
			g.Loop(&LoopSpec{Body: countBody(), HasTrip: true, Carried: 1, Bound: 2}, g.Input("n", tensor.I32), g.Input("a", tensor.F32, 2), g.Input("k", tensor.F32, 2))
		}, "trip count is i32"},
		{"carried shape", func(g *Graph) {
			g.Loop(&LoopSpec{Body: countBody(), HasTrip: true, Carried: 1, Bound: 2}, g.Input("n", tensor.I64), g.Input("a", tensor.F32, 3), g.Input("k", tensor.F32, 2))
		}, "body input 2 (acc)"},
		{"input count", func(g *Graph) {
			g.Loop(&LoopSpec{Body: countBody(), HasTrip: true, Carried: 1, Bound: 2}, g.Input("n", tensor.I64), g.Input("a", tensor.F32, 2))
		}, "the body has 4 inputs, want 3"},
		{"never ends", func(g *Graph) {
			b := New()
			b.Input("i", tensor.I64)
			c := b.Input("c", tensor.Bool)
			b.Output(c)
			g.Loop(&LoopSpec{Body: b})
		}, "never ends"},
		{"carried changes shape", func(g *Graph) {
			b := New()
			b.Input("i", tensor.I64)
			c := b.Input("c", tensor.Bool)
			a := b.Input("a", tensor.F32, 2)
			b.Output(c, b.Concat(0, a, a))
			g.Loop(&LoopSpec{Body: b, HasCond: true, Carried: 1, Bound: 3}, g.Input("c", tensor.Bool), g.Input("a", tensor.F32, 2))
		}, "keep their dtype and shape"},
		{"not a loop", func(g *Graph) { g.LoopOutput(g.Input("x", tensor.F32, 2), 0) }, "want a Loop node"},
		{"result range", func(g *Graph) {
			l := g.Loop(&LoopSpec{Body: countBody(), HasTrip: true, Carried: 1, Bound: 2}, g.Input("n", tensor.I64), g.Input("a", tensor.F32, 2), g.Input("k", tensor.F32, 2))
			g.LoopOutput(l, 3)
		}, "result 3 of a loop with 3 results"},
	} {
		g := New()
		c.build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
