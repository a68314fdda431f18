package fuse

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestTransposeIntoMatMul(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 5, 7)
	w := g.Param("w", tensor.F32, 6, 7)
	a := g.Param("a", tensor.F32, 7, 5)
	b := g.Param("b", tensor.F32, 7, 6)
	y := g.MatMul(x, g.Transpose(w, 1, 0))                        // → TransB
	z := g.Gemm(g.Transpose(a, 1, 0), b, nil, 1, 0, false, false) // → Gemm TransA
	tw := g.Transpose(w, 1, 0)                                    // read twice: near miss
	g.Output(y, z, g.MatMul(x, tw), tw)
	log, orig := runPass(t, g, transposeIntoMatMul)
	f := find(g, graph.OpFusedMatMul)
	gm := find(g, graph.OpGemm)
	if f == nil || !f.Attrs.TransB || f.Attrs.TransA || f.Inputs[1] != w {
		t.Fatalf("fused matmul %v:\n%s", f, graph.Dump(g))
	}
	if gm == nil || !gm.Attrs.TransA || gm.Inputs[0] != a {
		t.Fatalf("gemm %v:\n%s", gm, graph.Dump(g))
	}
	if count(g, graph.OpTranspose) != 1 || !logged(log.NearMiss, "graph output") {
		t.Errorf("transposes %d, near misses %q", count(g, graph.OpTranspose), log.NearMiss)
	}
	sameResults(t, orig, g, 1e-5)
}

func TestEpilogueBiasActResidual(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 5, 8)
	w := g.Param("w", tensor.F32, 8, 8)
	b := g.Param("b", tensor.F32, 8)
	h := g.Add(x, g.Gelu(g.Add(b, g.MatMul(x, w)))) // bias first operand, residual second
	g.Output(h)
	log, orig := runPass(t, g, epilogues)
	f := find(g, graph.OpFusedMatMul)
	if f == nil || len(g.Nodes) != 4 { // x, w, b and the fused node
		t.Fatalf("after epilogue:\n%s", graph.Dump(g))
	}
	want := graph.Epilogue{Bias: true, Act: graph.OpGelu, Residual: true}
	if f.Attrs.Epilogue != want || f.Inputs[2] != b || f.Inputs[3] != x {
		t.Errorf("epilogue %+v inputs %v", f.Attrs.Epilogue, f.Inputs)
	}
	if !logged(log.Fused, "bias, Gelu, residual") {
		t.Errorf("log %v", log.Fused)
	}
	sameResults(t, orig, g, 0) // the reference kernels round exactly as the chain
}

func TestEpilogueNearMisses(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4, 8)
	w := g.Param("w", tensor.F32, 8, 8)
	b := g.Param("b", tensor.F32, 8)
	m := g.MatMul(x, w)
	biased := g.Add(m, b)
	g.Output(g.Relu(biased), g.Sigmoid(biased)) // bias fuses; the biased sum feeds two activations
	c := g.Param("c", tensor.F32, 4, 8)
	g.Output(g.Gemm(x, w, c, 1, 1, false, false))   // C is not a bias
	g.Output(g.Gemm(x, w, nil, 2, 0, false, false)) // alpha 2
	log, orig := runPass(t, g, epilogues)
	if f := find(g, graph.OpFusedMatMul); f == nil || f.Attrs.Epilogue != (graph.Epilogue{Bias: true}) {
		t.Fatalf("fused %v:\n%s", f, graph.Dump(g))
	}
	for _, want := range []string{"has 2 consumers", "alpha 2 is not 1", "is not a bias"} {
		if !logged(log.NearMiss, want) {
			t.Errorf("no near miss %q in %q", want, log.NearMiss)
		}
	}
	sameResults(t, orig, g, 0)
}

func TestEpilogueGemmAndConv(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4, 8)
	w := g.Param("w", tensor.F32, 6, 8)
	c := g.Param("c", tensor.F32, 6)
	g.Output(g.Tanh(g.Gemm(x, w, c, 1, 1, false, true)))
	img := g.Input("img", tensor.F32, 1, 2, 5, 5)
	k := g.Param("k", tensor.F32, 3, 2, 3, 3)
	kb := g.Param("kb", tensor.F32, 3)
	conv := g.Conv2D(img, k, kb, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
	g.Output(g.Add(g.Relu(conv), g.Input("r", tensor.F32, 1, 3, 5, 5)))
	_, orig := runPass(t, g, epilogues)
	f := find(g, graph.OpFusedMatMul)
	if f == nil || !f.Attrs.TransB || f.Attrs.Epilogue != (graph.Epilogue{Bias: true, Act: graph.OpTanh}) {
		t.Fatalf("gemm not fused:\n%s", graph.Dump(g))
	}
	fc := find(g, graph.OpFusedConv2D)
	if fc == nil || fc.Attrs.Epilogue != (graph.Epilogue{Bias: true, Act: graph.OpRelu, Residual: true}) || count(g, graph.OpConv2D) != 0 {
		t.Fatalf("conv not fused:\n%s", graph.Dump(g))
	}
	// Gemm rounds alpha·AB + beta·C once; the fused node rounds the
	// product, then the bias add.
	sameResults(t, orig, g, 1e-6)
}

func TestResidualNorms(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 4, 8)
	r := g.Input("r", tensor.F32, 4, 8) // broadcasts over the batch
	s := g.Param("s", tensor.F32, 8)
	b := g.Param("b", tensor.F32, 8)
	h := g.LayerNorm(g.Add(r, x), s, b, -1, 1e-5)
	h2 := g.Add(h, x)
	g.Output(g.RMSNorm(h2, s, -1, 1e-6), h2) // the sum is also an output: near miss
	y := g.RMSNorm(g.Add(x, h), s, -1, 1e-6)
	g.Output(y)
	log, orig := runPass(t, g, residualNorms)
	if count(g, graph.OpAddLayerNorm) != 1 || count(g, graph.OpAddRMSNorm) != 1 || count(g, graph.OpRMSNorm) != 1 {
		t.Fatalf("after norm pass:\n%s", graph.Dump(g))
	}
	ln := find(g, graph.OpAddLayerNorm)
	if ln.Inputs[0] != x || ln.Inputs[1] != r {
		t.Errorf("AddLayerNorm inputs %v: want x (full shape) first", ln.Inputs)
	}
	if !logged(log.NearMiss, "graph output") {
		t.Errorf("near misses %q", log.NearMiss)
	}
	sameResults(t, orig, g, 0)
}
