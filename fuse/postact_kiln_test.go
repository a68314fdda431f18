package fuse_test

import (
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestPostResidualReluCompiled compiles two ResNet basic blocks' tails,
// Relu(Relu(Conv(x) + b) + x), on the CPU with every pass and the fast
// kernels, and checks them against the unfused graph on the reference
// kernels, with NaN and infinite inputs. The first block's Relu fuses
// into its conv (7×7 planes of 32 channels: tiles split the channels);
// the second block's Add is also read by a Sigmoid, so its Relu stays.
func TestPostResidualReluCompiled(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 32, 7, 7)
	pad := graph.ConvOpts{Pads: []int{1, 1, 1, 1}}
	block := func(in *graph.Node, name string) (add, out *graph.Node) {
		k := g.Param(name+"_k", tensor.F32, 32, 32, 3, 3)
		kb := g.Param(name+"_kb", tensor.F32, 32)
		add = g.Add(g.Relu(g.Conv2D(in, k, kb, pad)), in)
		return add, g.Relu(add)
	}
	_, y1 := block(x, "b1")
	add2, y2 := block(y1, "b2")
	g.Output(y2, g.Sigmoid(add2))
	feeds := feedsFor(t, g, 5)
	xs := feeds["x"].F32()
	xs[10], xs[200], xs[1000] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	want, _ := compiledRun(t, session(false, true), g, feeds)
	got, cg := compiledRun(t, session(true, false), g, feeds)
	if err := agree(got, want, 1e-5); err != nil {
		t.Fatalf("%v\n%s", err, cg.Report())
	}
	rep := cg.Report()
	if strings.Count(rep, "residual, then Relu") != 1 {
		t.Errorf("want one post-residual Relu fused:\n%s", rep)
	}
	nan := 0
	for _, v := range want[0].Float64s() {
		if math.IsNaN(v) {
			nan++
		}
	}
	if nan == 0 {
		t.Error("no NaN reached the output")
	}
}
