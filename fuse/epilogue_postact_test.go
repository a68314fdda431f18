package fuse

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// resBlock builds a ResNet basic block's tail on g: Relu(Conv(x) + b +
// id) with the conv's own Relu first when inner, returning the Add (the
// caller may give it other users) and the final Relu.
func resBlock(g *graph.Graph, x, id *graph.Node, inner bool) (add, relu *graph.Node) {
	k := g.Param("k", tensor.F32, 3, 3, 3, 3)
	kb := g.Param("kb", tensor.F32, 3)
	var y *graph.Node = g.Conv2D(x, k, kb, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
	if inner {
		y = g.Relu(y)
	}
	add = g.Add(y, id)
	return add, g.Relu(add)
}

// TestEpiloguePostResidualAct: Relu(Add(Relu(Conv+b), identity)) is one
// FusedConv2D with a post-residual Relu, and so is the form without the
// inner activation; the fused graph computes what the unfused one does,
// bit for bit, also where the input and the identity hold NaNs.
func TestEpiloguePostResidualAct(t *testing.T) {
	for _, inner := range []bool{true, false} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 1, 3, 6, 5)
		_, out := resBlock(g, x, x, inner)
		g.Output(out)
		log, orig := runPass(t, g, epilogues)
		f := find(g, graph.OpFusedConv2D)
		want := graph.Epilogue{Bias: true, Residual: true, PostAct: graph.OpRelu}
		if inner {
			want.Act = graph.OpRelu
		}
		if f == nil || f.Attrs.Epilogue != want || count(g, graph.OpRelu) != 0 || count(g, graph.OpAdd) != 0 || f.Inputs[3] != x {
			t.Fatalf("inner %v: after epilogue:\n%s", inner, graph.Dump(g))
		}
		if !logged(log.Fused, "residual, then Relu") {
			t.Errorf("log %q", log.Fused)
		}
		sameResults(t, orig, g, 0)
		feeds, err := testmodels.RandomFeeds(orig, 3)
		if err != nil {
			t.Fatal(err)
		}
		xs := feeds["x"].F32()
		xs[0], xs[17], xs[29] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
		sameOn(t, orig, g, feeds)
	}
}

// TestEpiloguePostActNearMiss: a Relu whose Add has other users (another
// op, or the graph's outputs) stays: the Add is the fused node's output,
// which they read, and the Relu reads it too.
func TestEpiloguePostActNearMiss(t *testing.T) {
	for _, asOutput := range []bool{false, true} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 1, 3, 6, 5)
		add, out := resBlock(g, x, x, true)
		g.Output(out)
		if asOutput {
			g.Output(add)
		} else {
			g.Output(g.Sigmoid(add))
		}
		log, orig := runPass(t, g, epilogues)
		f := find(g, graph.OpFusedConv2D)
		want := graph.Epilogue{Bias: true, Act: graph.OpRelu, Residual: true}
		if f == nil || f.Attrs.Epilogue != want || count(g, graph.OpRelu) != 1 || find(g, graph.OpRelu).Inputs[0] != f {
			t.Fatalf("output %v: after epilogue:\n%s", asOutput, graph.Dump(g))
		}
		why := "has 2 consumers"
		if asOutput {
			why = "graph output"
		}
		if !logged(log.NearMiss, why) {
			t.Errorf("near misses %q, want %q", log.NearMiss, why)
		}
		sameResults(t, orig, g, 0)
	}
}

// sameOn interprets orig and got on feeds and requires equal outputs,
// NaN matching NaN (compare's tolerance test would reject Inf against
// Inf), and some NaN among them.
func sameOn(t *testing.T, orig, got *graph.Graph, feeds map[string]tensor.Tensor) {
	t.Helper()
	want, err := ops.Interpret(orig, feeds)
	if err != nil {
		t.Fatal(err)
	}
	have, err := ops.Interpret(got, feeds)
	if err != nil {
		t.Fatal(err)
	}
	nan := false
	for i := range want {
		h, w := have[i].Float64s(), want[i].Float64s()
		for j := range w {
			if h[j] != w[j] && !(math.IsNaN(h[j]) && math.IsNaN(w[j])) {
				t.Fatalf("output %d element %d: got %v, want %v", i, j, h[j], w[j])
			}
			nan = nan || math.IsNaN(w[j])
		}
	}
	if !nan {
		t.Error("no NaN reached the outputs")
	}
}
