package msl

import (
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// TestOps: the emitter covers every op kdesc describes (but the kinds
// kdesc.NotEmitted names, which it must not cover: remove them there), every
// elementwise formula included; Metal runs no custom ops.
func TestOps(t *testing.T) {
	if got, want := Ops(), emittedOps(); !slices.Equal(got, want) {
		t.Errorf("Ops() = %v\nwant %v", got, want)
	}
	if Supports(graph.OpCustom) || !Supports(graph.OpAttention) {
		t.Error("Supports disagrees with Ops")
	}
}

// TestCheckNode: lowerable nodes pass; Metal's dtype limits show.
func TestCheckNode(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4, 8)
	sum := g.ReduceSum(g.Input("i", tensor.I32, 4, 8), false, 1)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*graph.Node{x, g.Relu(x), g.Reshape(x, 32), g.ReduceSum(x, false, 1)} {
		if err := CheckNode(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if err := CheckNode(sum); err == nil || !strings.Contains(err.Error(), "reductions of i32 are not supported on Metal") {
		t.Errorf("I32 ReduceSum: %v", err)
	}
}

// emittedOps is kdesc.DescribedOps without the kinds this emitter does
// not write (kdesc.NotEmitted).
func emittedOps() []graph.Op {
	return slices.DeleteFunc(kdesc.DescribedOps(), func(op graph.Op) bool { return kdesc.NotEmitted("msl", kdesc.KindOf(op)) != "" })
}
