package kiln_test

import (
	"fmt"
	"log"
	"math"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// A two-layer perceptron: build, compile, set the weights once, run.
func Example() {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	h := g.Relu(g.Add(g.MatMul(x, g.Param("w1", tensor.F32, 3, 4)), g.Param("b1", tensor.F32, 4)))
	g.Output(g.Add(g.MatMul(h, g.Param("w2", tensor.F32, 4, 2)), g.Param("b2", tensor.F32, 2)))

	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		log.Fatal(err)
	}
	defer cg.Close()
	for name, w := range map[string][]float32{
		"w1": {1, 0, 0, -1, 0, 1, 0, 1, 0, 0, 1, 1},
		"b1": {0, 0, -2, 0},
		"w2": {1, 0, 0, 1, 1, 1, 2, -1},
		"b2": {0.5, -0.5},
	} {
		if err := cg.SetParam(name, w); err != nil {
			log.Fatal(err)
		}
	}
	// Run copies the outputs out; RunSlots (inputs by position) is the
	// allocation-free path, its results viewed with Output.
	outs, err := cg.Run(kiln.In("x", []float32{1, 2, 3, -1, 0, 1}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(outs[0])
	if _, err := cg.RunSlots([]float32{0, 0, 0, 0, 0, 0}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(cg.Output(0))
	// Output:
	// [10.5 -1.5 4.5 -2.5]
	// [0.5 -0.5 0.5 -0.5]
}

// kvDecoder is a toy single-head attention decoder with a KV cache. Each
// step takes one token embedding x [1, 1, d], the one-hot of its position
// pos [1, maxLen, 1] and an additive mask [1, 1, 1, maxLen] (0 up to the
// position, -1e9 after: future positions are hidden). It writes the
// token's key and value into row pos of the caches [1, maxLen, d],
//
//	cache' = cache·(1 - pos) + pos·(x·w)
//
// attends over the updated caches and returns the attention result
// [1, d] and both updated caches (outputs 1 and 2), which FeedHandle
// sends back into the cache inputs for the next step.
func kvDecoder(maxLen, d int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 1, d)
	pos := g.Input("pos", tensor.F32, 1, maxLen, 1)
	mask := g.Input("mask", tensor.F32, 1, 1, 1, maxLen)
	kCache := g.Input("k_cache", tensor.F32, 1, maxLen, d)
	vCache := g.Input("v_cache", tensor.F32, 1, maxLen, d)
	proj := func(w string) *graph.Node { return g.MatMul(x, g.Param(w, tensor.F32, d, d)) }
	write := func(cache, row *graph.Node) *graph.Node {
		return g.Add(g.Mul(cache, g.Sub(g.Scalar(1), pos)), g.Mul(pos, row))
	}
	k, v := write(kCache, proj("wk")), write(vCache, proj("wv"))
	heads := func(t *graph.Node) *graph.Node { return g.Reshape(t, 1, 1, maxLen, d) }
	a := g.Attention(g.Reshape(proj("wq"), 1, 1, 1, d), heads(k), heads(v), mask, graph.AttentionOpts{})
	g.OutputNamed("out", g.Reshape(a, 1, d))
	g.OutputNamed("k_cache_out", k)
	g.OutputNamed("v_cache_out", v)
	return g
}

// kvWeights are kvDecoder's projections: small, varied, deterministic.
func kvWeights(d int) map[string][]float32 {
	w := map[string][]float32{}
	for n, name := range []string{"wq", "wk", "wv"} {
		m := make([]float32, d*d)
		for i := range m {
			m[i] = float32((i*(n+3)+n)%7-3) / 4
		}
		w[name] = m
	}
	return w
}

// kvToken is the embedding of the token at step t.
func kvToken(t, d int) []float32 {
	x := make([]float32, d)
	for j := range x {
		x[j] = float32(math.Sin(float64(3*t + j + 1)))
	}
	return x
}

// kvStepInputs are the position one-hot and the causal mask of step t.
func kvStepInputs(t, maxLen int) (pos, mask []float32) {
	pos, mask = make([]float32, maxLen), make([]float32, maxLen)
	pos[t] = 1
	for j := t + 1; j < maxLen; j++ {
		mask[j] = -1e9
	}
	return pos, mask
}

// Decoding with a KV cache: the caches are handles that live across runs;
// each run writes one row and FeedHandle carries the updated cache into
// the next run, so only the new token crosses the API.
func ExampleCompiledGraph_BindHandle() {
	const maxLen, d, steps = 6, 4, 4
	cg, err := kiln.NewSession(kiln.CPU).Compile(kvDecoder(maxLen, d))
	if err != nil {
		log.Fatal(err)
	}
	defer cg.Close()
	for name, w := range kvWeights(d) {
		if err := cg.SetParam(name, w); err != nil {
			log.Fatal(err)
		}
	}
	for i, name := range []string{"k_cache", "v_cache"} {
		if err := cg.BindHandle(name, make([]float32, maxLen*d)); err != nil {
			log.Fatal(err)
		}
		if err := cg.FeedHandle(name, i+1); err != nil { // outputs 1 and 2
			log.Fatal(err)
		}
	}
	for t := range steps {
		pos, mask := kvStepInputs(t, maxLen)
		// Inputs by position: x, pos, mask, then nil for the two handles.
		if _, err := cg.RunSlots(kvToken(t, d), pos, mask, nil, nil); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("step %d: %.4f\n", t, cg.Output(0))
	}
	keys, err := cg.ReadHandle("k_cache")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cached keys: %d rows written, %d still zero\n", nonZeroRows(keys, d), maxLen-nonZeroRows(keys, d))
	// Output:
	// step 0: [-1.3385 -0.0678 0.8373 0.2697]
	// step 1: [0.7080 -0.1125 -0.3861 -0.0196]
	// step 2: [-0.9471 0.0997 0.5359 0.0684]
	// step 3: [0.5654 -0.1967 -0.2675 0.0729]
	// cached keys: 4 rows written, 2 still zero
}

// nonZeroRows counts rows of width d holding a non-zero value.
func nonZeroRows(v []float32, d int) int {
	n := 0
	for r := 0; r < len(v); r += d {
		for _, x := range v[r : r+d] {
			if x != 0 {
				n++
				break
			}
		}
	}
	return n
}
