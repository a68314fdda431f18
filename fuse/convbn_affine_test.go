package fuse

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestBatchNormAffine checks that a BatchNorm no conv precedes (DenseNet's,
// after a Concat) becomes x·s + t per channel, with the same results, and
// that the whole pipeline then fuses it with the Relu after it.
func TestBatchNormAffine(t *testing.T) {
	build := func() *graph.Graph {
		g := graph.New()
		a := g.Input("a", tensor.F32, 2, 3, 5, 4)
		b := g.Input("b", tensor.F32, 2, 2, 5, 4)
		ch := func(name string) *graph.Node { return g.Param(name, tensor.F32, 5) }
		// var is fed in [0.5, 1.5) by RandomFeeds.
		y := g.BatchNorm(g.Concat(1, a, b), ch("scale"), ch("shift"), ch("mean"), ch("var"), 1e-3)
		g.Output(g.Relu(y))
		return g
	}
	g := build()
	log, orig := runPass(t, g, convBatchNorm)
	if count(g, graph.OpBatchNorm) != 0 || count(g, graph.OpMul) == 0 || count(g, graph.OpAdd) == 0 {
		t.Fatalf("after conv_bn:\n%s", graph.Dump(g))
	}
	if !logged(log.Fused, "x·s + t per channel") {
		t.Errorf("log %v", log.Fused)
	}
	sameResults(t, orig, g, 2e-6)

	g = build()
	orig = g.Clone()
	if _, err := Run(g, Options{}); err != nil {
		t.Fatal(err)
	}
	// One step over the activations: x·s + t and the Relu (the params'
	// arithmetic is fused apart, evaluated once per weights change).
	out := g.Outputs()[0]
	if count(g, graph.OpBatchNorm) != 0 || count(g, graph.OpRelu) != 0 || out.Op != graph.OpFusedElementwise || out.Inputs[0].Op != graph.OpConcat {
		t.Fatalf("after the pipeline:\n%s", graph.Dump(g))
	}
	sameResults(t, orig, g, 2e-6)
}

// TestBatchNormAffineNearMiss: a BatchNorm whose statistics are a run-time
// input stays one.
func TestBatchNormAffineNearMiss(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 2, 4, 4)
	mean := g.Input("mean", tensor.F32, 2)
	ch := func(name string) *graph.Node { return g.Param(name, tensor.F32, 2) }
	g.Output(g.BatchNorm(g.Relu(x), ch("s"), ch("b"), mean, ch("v"), 1e-5))
	log, _ := runPass(t, g, convBatchNorm)
	if count(g, graph.OpBatchNorm) != 1 || !logged(log.NearMiss, "mean is not computed from weights") {
		t.Errorf("near misses %q:\n%s", log.NearMiss, graph.Dump(g))
	}
}
