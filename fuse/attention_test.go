package fuse

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// decomposed builds softmax(q·kᵀ·scale + mask)·v the way exported models
// spell it, on operands of the given rank.
func decomposed(g *graph.Graph, q, k, v, mask *graph.Node, scale float32, div bool) *graph.Node {
	r := k.Shape.Rank()
	s := g.MatMul(q, g.Transpose(k, swapPerm(r)...))
	if div {
		s = g.Div(s, g.Scalar(1/scale))
	} else {
		s = g.Mul(s, g.Scalar(scale))
	}
	if mask != nil {
		s = g.Add(s, mask)
	}
	return g.MatMul(g.Softmax(s, -1), v)
}

func swapPerm(r int) []int {
	p := make([]int, r)
	for i := range p {
		p[i] = i
	}
	p[r-1], p[r-2] = p[r-2], p[r-1]
	return p
}

func TestAttentionPattern4D(t *testing.T) {
	g := graph.New()
	q := g.Input("q", tensor.F32, 2, 3, 5, 8)
	k := g.Input("k", tensor.F32, 2, 3, 6, 8)
	v := g.Input("v", tensor.F32, 2, 3, 6, 4)
	mask := g.Input("mask", tensor.F32, 2, 1, 1, 6)
	g.Output(g.Relu(decomposed(g, q, k, v, mask, 0.25, false)))
	log, orig := runPass(t, g, attention)
	a := find(g, graph.OpAttention)
	if a == nil || count(g, graph.OpSoftmax) != 0 || count(g, graph.OpMatMul) != 0 {
		t.Fatalf("no attention:\n%s", graph.Dump(g))
	}
	if a.Inputs[0] != q || a.Inputs[1] != k || a.Inputs[2] != v || a.Inputs[3] != mask || a.Attrs.Scale != 0.25 || a.Attrs.Causal {
		t.Errorf("attention %v inputs %v attrs %+v", a, a.Inputs, a.Attrs)
	}
	if !logged(log.Fused, "attention", "scale 0.25") {
		t.Errorf("log %v", log.Fused)
	}
	sameResults(t, orig, g, 1e-5)
}

func TestAttentionPattern3DDivCausal(t *testing.T) {
	const sq, sk = 4, 6
	g := graph.New()
	q := g.Input("q", tensor.F32, 6, sq, 8)
	k := g.Input("k", tensor.F32, 6, sk, 8)
	v := g.Input("v", tensor.F32, 6, sk, 8)
	causal := make([]float32, sq*sk)
	for i := range sq {
		for j := range sk {
			if j > i+sk-sq {
				causal[i*sk+j] = float32(math.Inf(-1))
			}
		}
	}
	mask := g.ConstF32(tensor.Shape{sq, sk}, causal)
	g.Output(decomposed(g, q, k, v, mask, float32(1/math.Sqrt(8)), true))
	_, orig := runPass(t, g, attention)
	a := find(g, graph.OpAttention)
	if a == nil || len(a.Inputs) != 3 || !a.Attrs.Causal {
		t.Fatalf("want a causal attention without mask input:\n%s", graph.Dump(g))
	}
	if !a.Inputs[0].Shape.Equal(tensor.Shape{1, 6, sq, 8}) || g.Outputs()[0].Op != graph.OpReshape {
		t.Errorf("rank-3 operands not viewed as rank 4:\n%s", graph.Dump(g))
	}
	sameResults(t, orig, g, 1e-5)
}

func TestAttentionPatternBoolWhereAndQScale(t *testing.T) {
	g := graph.New()
	q := g.Input("q", tensor.F32, 1, 2, 3, 4)
	k := g.Input("k", tensor.F32, 1, 2, 5, 4)
	v := g.Input("v", tensor.F32, 1, 2, 5, 4)
	keep := g.Input("keep", tensor.Bool, 3, 5)
	qs := g.Mul(q, g.Scalar(0.5))
	s := g.MatMul(qs, g.Transpose(k, 0, 1, 3, 2))
	s = g.Where(keep, s, g.Scalar(float32(math.Inf(-1))))
	g.Output(g.MatMul(g.Softmax(s, 3), v))
	_, orig := runPass(t, g, attention)
	a := find(g, graph.OpAttention)
	if a == nil || a.Inputs[0] != q || a.Attrs.Scale != 0.5 || a.Inputs[3] != keep {
		t.Fatalf("attention %v:\n%s", a, graph.Dump(g))
	}
	// A row with every key masked is NaN both spelled out and fused.
	sameResults(t, orig, g, 1e-5)
}

func TestAttentionNearMisses(t *testing.T) {
	g := graph.New()
	q := g.Input("q", tensor.F32, 1, 2, 3, 4)
	k := g.Input("k", tensor.F32, 1, 2, 3, 4)
	v := g.Input("v", tensor.F32, 1, 2, 3, 4)
	// Softmax over the wrong axis.
	s1 := g.MatMul(q, g.Transpose(k, 0, 1, 3, 2))
	g.Output(g.MatMul(g.Softmax(s1, 2), v))
	// Scores read twice (for a second output).
	s2 := g.Mul(g.MatMul(q, g.Transpose(k, 0, 1, 3, 2)), g.Scalar(0.5))
	g.Output(g.MatMul(g.Softmax(s2, -1), v), s2)
	log, _ := runPass(t, g, attention)
	if count(g, graph.OpAttention) != 0 {
		t.Fatalf("fused a near miss:\n%s", graph.Dump(g))
	}
	if !logged(log.NearMiss, "softmax over axis 2") || !logged(log.NearMiss, "graph output") {
		t.Errorf("near misses %q", log.NearMiss)
	}
}
