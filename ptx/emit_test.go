package ptx

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
// elementwise formula included, and custom ops run the user's PTX.
func TestOps(t *testing.T) {
	if got, want := Ops(), append(emittedOps(), graph.OpCustom); !slices.Equal(got, want) {
		t.Errorf("Ops() = %v\nwant %v", got, want)
	}
	if Supports(graph.OpInput) || !Supports(graph.OpGelu) || !Supports(graph.OpFusedConv2D) {
		t.Error("Supports disagrees with Ops")
	}
}

// TestCheckNode: nodes that need no kernel pass, lowerable ones pass
// with the kernel EmitNode writes, and the limits only a node shows (a
// dtype, a size) are reported.
func TestCheckNode(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4, 8)
	sq := g.Mul(x, x)
	view := g.Reshape(x, 32)
	f64 := g.Softmax(g.Input("d", tensor.F64, 2, 3), 1)
	q := g.Input("q", tensor.F32, 1, 1, 1, 8)
	kv := g.Input("kv", tensor.F32, 1, 1, 9000, 8)
	att := g.Attention(q, kv, kv, nil, graph.AttentionOpts{})
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*graph.Node{x, sq, view} {
		if err := CheckNode(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	k, ins, err := EmitNode("sq", sq)
	if err != nil || len(k.Params) != 2 || !slices.Equal(ins, []*graph.Node{x}) {
		t.Errorf("EmitNode(x·x): %d parameters, reads %v, %v; want out and x once", len(k.Params), ins, err)
	}
	for n, want := range map[*graph.Node]string{f64: "dtype f64", att: "keys 9000"} {
		if err := CheckNode(n); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", n, err, want)
		}
	}
}

// emittedOps is kdesc.DescribedOps without the kinds this emitter does
// not write (kdesc.NotEmitted).
func emittedOps() []graph.Op {
	return slices.DeleteFunc(kdesc.DescribedOps(), func(op graph.Op) bool { return kdesc.NotEmitted("ptx", kdesc.KindOf(op)) != "" })
}
