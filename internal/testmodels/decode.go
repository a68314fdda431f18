package testmodels

import (
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// DecodeStep is one decode step of single-head attention over a KV cache
// of maxLen rows, the graph the device tests decode with GPU handles: x
// [1,1,d] is the token, pos [1,maxLen,1] the one-hot of its row, mask
// [1,1,1,maxLen] the causal mask, k_cache and v_cache [1,maxLen,d] the
// caches (params wq, wk, wv [d,d]). Outputs: the attention result "out"
// [1,d] (0) and the caches with the row written, "k_cache_out" (1) and
// "v_cache_out" (2), which feed the cache handles.
func DecodeStep(maxLen, d int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 1, d)
	pos := g.Input("pos", tensor.F32, 1, maxLen, 1)
	mask := g.Input("mask", tensor.F32, 1, 1, 1, maxLen)
	kc := g.Input("k_cache", tensor.F32, 1, maxLen, d)
	vc := g.Input("v_cache", tensor.F32, 1, maxLen, d)
	proj := func(w string) *graph.Node { return g.MatMul(x, g.Param(w, tensor.F32, d, d)) }
	write := func(cache, row *graph.Node) *graph.Node {
		return g.Add(g.Mul(cache, g.Sub(g.Scalar(1), pos)), g.Mul(pos, row))
	}
	k, v := write(kc, proj("wk")), write(vc, proj("wv"))
	heads := func(t *graph.Node) *graph.Node { return g.Reshape(t, 1, 1, maxLen, d) }
	a := g.Attention(g.Reshape(proj("wq"), 1, 1, 1, d), heads(k), heads(v), mask, graph.AttentionOpts{})
	g.OutputNamed("out", g.Reshape(a, 1, d))
	g.OutputNamed("k_cache_out", k)
	g.OutputNamed("v_cache_out", v)
	return g
}

// DecodeInputs are DecodeStep's inputs at step t: a token varying with t,
// the one-hot of row t and the mask hiding the rows after t.
func DecodeInputs(t, maxLen, d int) (x, pos, mask []float32) {
	x, pos, mask = make([]float32, d), make([]float32, maxLen), make([]float32, maxLen)
	for j := range x {
		x[j] = float32(math.Sin(float64(3*t + j + 1)))
	}
	pos[t] = 1
	for j := t + 1; j < maxLen; j++ {
		mask[j] = -1e9
	}
	return x, pos, mask
}
