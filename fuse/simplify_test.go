package fuse

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestSimplifyIdentities(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	y := g.Reshape(x, 2, 3)
	y = g.Transpose(y, 0, 1)
	y = g.Cast(y, tensor.F32)
	y = g.Mul(y, g.Scalar(1))
	y = g.Div(y, f32s(g, tensor.Shape{3}, 1, 1, 1))
	y = g.Sub(y, g.Scalar(0))
	y = g.Mul(g.Scalar(1), y)
	y = g.Slice(y, graph.SliceSpec{Starts: []int{0}, Ends: []int{10}})
	y = g.Add(y, g.Scalar(0))                                                              // -0 + 0 is +0: kept
	y = g.Slice(y, graph.SliceSpec{Starts: []int{-1}, Ends: []int{-10}, Steps: []int{-1}}) // a reversal: kept
	y = g.Mul(y, f32s(g, tensor.Shape{2, 1, 3}, 1, 1, 1, 1, 1, 1))                         // broadcasts x up: kept
	g.Output(y)
	_, orig := runPass(t, g, simplify)
	want := map[graph.Op]int{graph.OpReshape: 0, graph.OpTranspose: 0, graph.OpCast: 0, graph.OpDiv: 0,
		graph.OpSub: 0, graph.OpAdd: 1, graph.OpSlice: 1, graph.OpMul: 1}
	for op, n := range want {
		if got := count(g, op); got != n {
			t.Errorf("%d %v nodes, want %d:\n%s", got, op, n, graph.Dump(g))
		}
	}
	if a := find(g, graph.OpAdd); a.Inputs[0] != x {
		t.Errorf("add reads %s, want x", a.Inputs[0].Name)
	}
	sameResults(t, orig, g, 0)
}

func TestSimplifyViewChainsAndTransposes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 4)
	v := g.Flatten(g.Unsqueeze(g.Reshape(x, 6, 4), 0), 2) // [24, 1]? Flatten(axis 2) of [1,6,4]: [6, 4]
	v = g.Squeeze(g.Reshape(v, 1, 24))
	tt := g.Transpose(g.Transpose(x, 2, 0, 1), 1, 2, 0) // composes to the identity
	t3 := g.Transpose(g.Transpose(x, 1, 0, 2), 0, 2, 1) // composes to (1, 2, 0)
	g.Output(g.Relu(v), g.Relu(tt), g.Relu(t3))
	log, orig := runPass(t, g, simplify)
	if n := count(g, graph.OpReshape) + count(g, graph.OpFlatten) + count(g, graph.OpSqueeze) + count(g, graph.OpUnsqueeze); n != 1 {
		t.Errorf("%d views left, want one Reshape:\n%s", n, graph.Dump(g))
	}
	if r := find(g, graph.OpReshape); r == nil || r.Inputs[0] != x || !r.Shape.Equal(tensor.Shape{24}) {
		t.Errorf("reshape %v", r)
	}
	if n := count(g, graph.OpTranspose); n != 1 {
		t.Fatalf("%d transposes, want 1:\n%s", n, graph.Dump(g))
	}
	tr := find(g, graph.OpTranspose)
	if p := tr.Attrs.Perm; tr.Inputs[0] != x || p[0] != 1 || p[1] != 2 || p[2] != 0 {
		t.Errorf("transpose %v of %s, want perm [1 2 0] of x", p, tr.Inputs[0].Name)
	}
	if !logged(log.Fused, "collapsed") || !logged(log.Fused, "composed") {
		t.Errorf("log %v", log.Fused)
	}
	sameResults(t, orig, g, 0)
}
