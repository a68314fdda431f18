package fuse

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// TestEpilogueClip: Clip(Conv + b) (ReLU6, and one-sided bounds) is one
// FusedConv2D whose epilogue carries the bounds, computing what the
// unfused graph does bit for bit, also with NaN and ±Inf in the input.
func TestEpilogueClip(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, b := range [][2]float32{{0, 6}, {0, inf}, {-inf, 0.5}} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 1, 3, 6, 5)
		k := g.Param("k", tensor.F32, 4, 3, 3, 3)
		kb := g.Param("kb", tensor.F32, 4)
		g.Output(g.Clip(g.Conv2D(x, k, kb, graph.ConvOpts{Pads: []int{1, 1, 1, 1}}), b[0], b[1]))
		log, orig := runPass(t, g, epilogues)
		f := find(g, graph.OpFusedConv2D)
		want := graph.Epilogue{Bias: true, Act: graph.OpClip, Min: b[0], Max: b[1]}
		if f == nil || f.Attrs.Epilogue != want || count(g, graph.OpClip) != 0 {
			t.Fatalf("%v: after epilogue:\n%s", b, graph.Dump(g))
		}
		if !logged(log.Fused, "Clip [") {
			t.Errorf("log %q", log.Fused)
		}
		sameResults(t, orig, g, 0)
		feeds, err := testmodels.RandomFeeds(orig, 3)
		if err != nil {
			t.Fatal(err)
		}
		xs := feeds["x"].F32()
		xs[0], xs[17], xs[29] = float32(math.NaN()), inf, -inf
		sameOn(t, orig, g, feeds)
	}
}

// TestEpilogueClipNearMiss: a Clip stays when the conv's output has
// another consumer or is a graph output; a MatMul's Clip, a post-residual
// Clip and an integer or unordered Clip are not epilogue activations.
func TestEpilogueClipNearMiss(t *testing.T) {
	for _, asOutput := range []bool{false, true} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 1, 3, 6, 5)
		k := g.Param("k", tensor.F32, 4, 3, 3, 3)
		conv := g.Conv2D(x, k, nil, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
		g.Output(g.Clip(conv, 0, 6))
		if asOutput {
			g.Output(conv)
		} else {
			g.Output(g.Sigmoid(conv))
		}
		log, orig := runPass(t, g, epilogues)
		if count(g, graph.OpClip) != 1 || find(g, graph.OpClip).Inputs[0] != conv || count(g, graph.OpFusedConv2D) != 0 {
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
	g := graph.New()
	a := g.Input("a", tensor.F32, 4, 8)
	w := g.Param("w", tensor.F32, 8, 5)
	g.Output(g.Clip(g.MatMul(a, w), 0, 6))
	x := g.Input("x", tensor.F32, 1, 3, 6, 5)
	k := g.Param("k", tensor.F32, 3, 3, 3, 3)
	g.Output(g.Clip(g.Add(g.Conv2D(x, k, nil, graph.ConvOpts{Pads: []int{1, 1, 1, 1}}), x), 0, 6))
	runPass(t, g, epilogues)
	if count(g, graph.OpClip) != 2 {
		t.Fatalf("after epilogue:\n%s", graph.Dump(g))
	}
	for _, f := range g.Nodes {
		if f.Op.IsFused() && f.Attrs.Epilogue.Act == graph.OpClip {
			t.Fatalf("%s clips:\n%s", f.Name, graph.Dump(g))
		}
	}
}
