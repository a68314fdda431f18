package fuse

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestElementwiseRegion(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 4)
	b := g.Input("b", tensor.F32, 4)
	h := g.Add(x, b)
	y := g.Mul(h, g.Sigmoid(h)) // a diamond: h feeds two region members
	y = g.Where(g.Greater(y, g.Scalar(0.1)), y, g.Neg(y))
	g.Output(y)
	log, orig := runPass(t, g, elementwiseRegions)
	f := find(g, graph.OpFusedElementwise)
	if f == nil || len(g.Nodes) != 4 { // x, b, 0.1 and the fused node
		t.Fatalf("after elementwise:\n%s", graph.Dump(g))
	}
	if len(f.Attrs.Program) != 6 || len(f.Inputs) != 3 || f.Inputs[0] != x {
		t.Errorf("program of %d ops on %v, want 6 ops on x first", len(f.Attrs.Program), f.Inputs)
	}
	if !logged(log.Fused, "6 ops, 3 inputs") {
		t.Errorf("log %v", log.Fused)
	}
	sameResults(t, orig, g, 0) // bit-identical: the kernel rounds where the chain stores
}

func TestElementwiseNearMisses(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 4)
	c := g.Input("c", tensor.F32, 4)
	ec := g.Exp(c) // [4] feeding a [3 4] result: the shapes differ
	shared := g.Tanh(x)
	y := g.Sub(g.Mul(shared, ec), x)
	g.Output(y, g.Relu(shared)) // shared also feeds a node outside the region
	i := g.Input("i", tensor.I64, 3)
	ci := g.Cast(g.Add(i, i), tensor.F32) // reads i64: not fusable
	g.Output(g.Mul(g.Neg(ci), ci))
	log, orig := runPass(t, g, elementwiseRegions)
	if n := count(g, graph.OpFusedElementwise); n != 2 {
		t.Fatalf("%d regions, want Mul+Sub and Neg+Mul:\n%s", n, graph.Dump(g))
	}
	if count(g, graph.OpExp) != 1 || count(g, graph.OpTanh) != 1 {
		t.Errorf("exp and tanh must stay outside:\n%s", graph.Dump(g))
	}
	for _, want := range []string{"has shape [4], the fused result [3 4]", "has 2 consumers", "Cast on i64 is not fusable"} {
		if !logged(log.NearMiss, want) {
			t.Errorf("no near miss %q in %q", want, log.NearMiss)
		}
	}
	sameResults(t, orig, g, 0)
}

func TestConvBatchNorm(t *testing.T) {
	for _, bias := range []bool{true, false} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 2, 3, 6, 6)
		w := g.Param("w", tensor.F32, 4, 3, 3, 3)
		var b *graph.Node
		if bias {
			b = g.Param("b", tensor.F32, 4)
		}
		ch := func(name string) *graph.Node { return g.Param(name, tensor.F32, 4) }
		y := g.Conv2D(x, w, b, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
		// var is fed in [0.5, 1.5) by RandomFeeds.
		y = g.BatchNorm(y, ch("scale"), ch("shift"), ch("mean"), ch("var"), 1e-3)
		g.Output(g.Relu(y))
		log, orig := runPass(t, g, convBatchNorm)
		if count(g, graph.OpBatchNorm) != 0 || count(g, graph.OpConv2D) != 1 {
			t.Fatalf("after conv_bn:\n%s", graph.Dump(g))
		}
		cv := find(g, graph.OpConv2D)
		if cv.Inputs[0] != x || len(cv.Inputs) != 3 || cv.Inputs[1].Op != graph.OpMul {
			t.Errorf("conv %v inputs %v", cv, cv.Inputs)
		}
		if !logged(log.Fused, "weights rewritten") {
			t.Errorf("log %v", log.Fused)
		}
		sameResults(t, orig, g, 2e-6)
	}
}

// TestConvTransposeBatchNorm folds a BatchNorm into the ConvTranspose
// before it (a generator's upsampling step), with and without a bias,
// 2-D and 1-D; a grouped one keeps it (as x·s + t).
func TestConvTransposeBatchNorm(t *testing.T) {
	for _, c := range []struct {
		name   string
		x, w   []int
		groups int
		bias   bool
	}{
		{"2-D bias", []int{2, 3, 4, 5}, []int{3, 4, 4, 4}, 1, true},
		{"2-D", []int{1, 3, 4, 4}, []int{3, 4, 3, 3}, 1, false},
		{"1-D", []int{2, 3, 7}, []int{3, 4, 4}, 1, true},
		{"grouped", []int{1, 4, 4, 4}, []int{4, 2, 4, 4}, 2, false},
	} {
		g := graph.New()
		x := g.Input("x", tensor.F32, c.x...)
		w := g.Param("w", tensor.F32, c.w...)
		m := c.w[1] * c.groups
		var b *graph.Node
		if c.bias {
			b = g.Param("b", tensor.F32, m)
		}
		ch := func(name string) *graph.Node { return g.Param(name, tensor.F32, m) }
		strides := make([]int, len(c.x)-2)
		for i := range strides {
			strides[i] = 2
		}
		y := g.ConvTranspose(x, w, b, graph.ConvTransposeOpts{Strides: strides, Groups: c.groups})
		y = g.BatchNorm(y, ch("scale"), ch("shift"), ch("mean"), ch("var"), 1e-3)
		g.Output(g.Relu(y))
		log, orig := runPass(t, g, convBatchNorm)
		if count(g, graph.OpBatchNorm) != 0 || count(g, graph.OpConvTranspose) != 1 {
			t.Fatalf("%s: after conv_bn:\n%s", c.name, graph.Dump(g))
		}
		ct := find(g, graph.OpConvTranspose)
		folded := ct.Inputs[0] == x && len(ct.Inputs) == 3 && ct.Inputs[1].Op == graph.OpMul
		if folded != (c.groups == 1) || logged(log.Fused, "weights rewritten") != folded {
			t.Errorf("%s: conv %v inputs %v, log %v", c.name, ct, ct.Inputs, log.Fused)
		}
		sameResults(t, orig, g, 2e-6)
	}
}

func TestConvBatchNormNearMiss(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 2, 4, 4)
	w := g.Param("w", tensor.F32, 2, 2, 1, 1)
	mean := g.Input("mean", tensor.F32, 2) // a run-time input: cannot be folded into weights
	ch := func(name string) *graph.Node { return g.Param(name, tensor.F32, 2) }
	g.Output(g.BatchNorm(g.Conv2D(x, w, nil, graph.ConvOpts{}), ch("s"), ch("b"), mean, ch("v"), 1e-5))
	log, _ := runPass(t, g, convBatchNorm)
	if count(g, graph.OpBatchNorm) != 1 || !logged(log.NearMiss, "mean is not computed from weights") {
		t.Errorf("near misses %q:\n%s", log.NearMiss, graph.Dump(g))
	}
}
