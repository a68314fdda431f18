package fuse

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestFoldConstants(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	a := f32s(g, tensor.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	b := f32s(g, tensor.Shape{3}, 10, 20, 30)
	// Reshape of a constant is a view: the Add sees through it.
	c := g.Add(g.Reshape(a, 6), g.Reshape(g.Tile(b, 2), 6)) // [11 22 33 14 25 36]
	g.Output(g.Mul(x, g.Reshape(g.Neg(c), 2, 3)))
	log, orig := runPass(t, g, foldConstants)
	if n := count(g, graph.OpAdd) + count(g, graph.OpNeg) + count(g, graph.OpTile); n != 0 {
		t.Fatalf("%d constant ops left:\n%s", n, graph.Dump(g))
	}
	var folded *graph.Node
	for _, n := range g.Nodes {
		if n.Op == graph.OpConstant && n.Shape.NumElements() == 6 && n.Value.F32()[0] < 0 {
			folded = n
		}
	}
	if folded == nil {
		t.Fatalf("no folded constant:\n%s", graph.Dump(g))
	}
	want := []float32{-11, -22, -33, -14, -25, -36}
	for i, v := range folded.Value.F32() {
		if v != want[i] {
			t.Fatalf("folded %v, want %v", folded.Value.F32(), want)
		}
	}
	if len(log.Fused) != 3 {
		t.Errorf("log %v: want 3 folds (Tile, Add, Neg)", log.Fused)
	}
	sameResults(t, orig, g, 0)
}

func TestFoldNearMisses(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1024, 1024)
	big := g.Expand(g.Scalar(2), 1024, 1024) // 4 MiB from 4 bytes: left to run time
	zero, _ := tensor.FromI32(tensor.Shape{2}, []int32{1, 0})
	num, _ := tensor.FromI32(tensor.Shape{2}, []int32{6, 6})
	div := g.Div(g.Constant(num), g.Constant(zero)) // division by zero: an error at run time
	g.Output(g.Mul(x, big))
	g.Output(div)
	log, _ := runPass(t, g, foldConstants)
	if count(g, graph.OpExpand) != 1 || count(g, graph.OpDiv) != 1 {
		t.Fatalf("folded what it should not:\n%s", graph.Dump(g))
	}
	if !logged(log.NearMiss, "expand", "too large") || !logged(log.NearMiss, "div", "division by zero") {
		t.Errorf("near misses %q", log.NearMiss)
	}
}

func TestCommonSubexpressions(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4, 5)
	e1, e2 := g.Exp(x), g.Exp(x)
	s1, s2 := g.Softmax(x, 0), g.Softmax(x, 1) // different attributes: kept
	k1, k2 := g.Scalar(3), g.Scalar(3)
	g.Output(g.Add(g.Mul(e1, k1), g.Mul(e2, k2)))
	g.Output(g.Sub(s1, s2))
	log, orig := runPass(t, g, commonSubexpressions)
	if count(g, graph.OpExp) != 1 || count(g, graph.OpMul) != 1 || count(g, graph.OpSoftmax) != 2 {
		t.Fatalf("after CSE:\n%s", graph.Dump(g))
	}
	if count(g, graph.OpConstant) != 1 {
		t.Errorf("%d constants, want the two 3s merged", count(g, graph.OpConstant))
	}
	if !logged(log.Fused, "merged") {
		t.Errorf("log %v", log.Fused)
	}
	// The Add now adds a value to itself.
	add := find(g, graph.OpAdd)
	if add.Inputs[0] != add.Inputs[1] {
		t.Errorf("add inputs %v, %v", add.Inputs[0], add.Inputs[1])
	}
	sameResults(t, orig, g, 0)
}

func TestCommonSubexpressionOutputKept(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3)
	g.Output(g.Relu(x), g.Relu(x))
	log, _ := runPass(t, g, commonSubexpressions)
	if count(g, graph.OpRelu) != 2 || !logged(log.NearMiss, "graph output") {
		t.Errorf("relus %d, near misses %q", count(g, graph.OpRelu), log.NearMiss)
	}
}
