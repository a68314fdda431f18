package fuse

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

var pool2x2 = graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}}

// The ResNet stem: Conv2D (bias) + Relu + a 2×2 max pool is one pooled
// FusedConv2D, and so is a plain Conv2D + pool; odd sizes pool in floor
// mode as MaxPool2D does.
func TestEpiloguePool2x2(t *testing.T) {
	g := graph.New()
	img := g.Input("img", tensor.F32, 1, 3, 9, 7)
	k := g.Param("k", tensor.F32, 4, 3, 3, 3)
	kb := g.Param("kb", tensor.F32, 4)
	pad1 := graph.ConvOpts{Pads: []int{1, 1, 1, 1}}
	g.Output(g.MaxPool2D(g.Relu(g.Conv2D(img, k, kb, pad1)), pool2x2))
	k2 := g.Param("k2", tensor.F32, 5, 3, 2, 2)
	g.Output(g.MaxPool2D(g.Conv2D(img, k2, nil, graph.ConvOpts{}), pool2x2))
	log, orig := runPass(t, g, epilogues)
	if count(g, graph.OpMaxPool2D) != 0 || count(g, graph.OpConv2D) != 0 || count(g, graph.OpFusedConv2D) != 2 {
		t.Fatalf("after epilogue:\n%s", graph.Dump(g))
	}
	want := []graph.Epilogue{{Bias: true, Act: graph.OpRelu, Pool2x2: true}, {Pool2x2: true}}
	for i, o := range g.Outputs() {
		if o.Op != graph.OpFusedConv2D || o.Attrs.Epilogue != want[i] {
			t.Errorf("output %d: %v %+v, want epilogue %+v", i, o.Op, o.Attrs.Epilogue, want[i])
		}
	}
	if !logged(log.Fused, "bias, Relu, pool2x2") || !logged(log.Fused, "(pool2x2)") {
		t.Errorf("log %q", log.Fused)
	}
	sameResults(t, orig, g, 0) // the reference kernels round exactly as the chain
}

// Near misses: other pools, a shared conv output and a residual keep the
// MaxPool2D (the rest of the chain still fuses).
func TestEpiloguePool2x2NearMisses(t *testing.T) {
	g := graph.New()
	img := g.Input("img", tensor.F32, 1, 3, 8, 8)
	k := g.Param("k", tensor.F32, 4, 3, 3, 3)
	pad1 := graph.ConvOpts{Pads: []int{1, 1, 1, 1}}
	conv := func() *graph.Node { return g.Conv2D(img, k, nil, pad1) }
	g.Output(g.MaxPool2D(g.Relu(conv()), graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}}))
	g.Output(g.MaxPool2D(g.Relu(conv()), graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}, Pads: []int{0, 0, 1, 1}}))
	g.Output(g.MaxPool2D(g.Relu(conv()), graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{1, 1}}))
	g.Output(g.AvgPool2D(g.Relu(conv()), pool2x2))
	shared := g.Relu(conv())
	g.Output(g.MaxPool2D(shared, pool2x2), g.Sigmoid(shared))
	r := g.Input("r", tensor.F32, 1, 4, 8, 8)
	g.Output(g.MaxPool2D(g.Add(g.Relu(conv()), r), pool2x2))
	log, orig := runPass(t, g, epilogues)
	if n := count(g, graph.OpMaxPool2D); n != 5 {
		t.Errorf("%d MaxPool2D left, want 5:\n%s", n, graph.Dump(g))
	}
	for _, n := range g.Nodes {
		if n.Op == graph.OpFusedConv2D && n.Attrs.Epilogue.Pool2x2 {
			t.Errorf("%s pools:\n%s", n.Name, graph.Dump(g))
		}
	}
	if count(g, graph.OpConv2D) != 0 || count(g, graph.OpFusedConv2D) != 6 {
		t.Errorf("convs not fused:\n%s", graph.Dump(g))
	}
	if !logged(log.NearMiss, "is not a 2×2, stride-2, unpadded max pool") || !logged(log.NearMiss, "has 2 consumers") {
		t.Errorf("near misses %q", log.NearMiss)
	}
	sameResults(t, orig, g, 0)
}
