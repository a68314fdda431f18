package main

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestSteppedOutputs: an output is stepped where a step op, or a Div's
// divisor, takes a computed value, and not where they take graph inputs
// or where a Div's dividend alone is computed.
func TestSteppedOutputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	y := g.Input("y", tensor.F32, 2, 3)
	w := g.Input("w", tensor.F32, 3, 3)
	s := g.MatMul(x, w) // rounded arithmetic
	outs := []struct {
		n    *graph.Node
		want bool
	}{
		{g.Div(x, s), true},                  // computed divisor
		{g.Div(s, y), false},                 // computed dividend only
		{g.Div(x, y), false},                 // inputs only
		{g.Reciprocal(s), true},              // pole at 0
		{g.Add(g.Log(g.Add(x, y)), x), true}, // a step upstream
		{g.Log(x), false},                    // a step of an input
		{g.Mul(g.Div(y, g.Exp(s)), x), true}, // a computed divisor upstream
	}
	for _, o := range outs {
		g.Output(o.n)
	}
	got := steppedOutputs(g)
	for i, o := range outs {
		if got[i] != o.want {
			t.Errorf("output %d (%s): stepped %v, want %v", i, o.n, got[i], o.want)
		}
	}
}
