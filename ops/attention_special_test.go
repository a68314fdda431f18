package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// Attention must give what softmax(q·kᵀ·scale + mask)·v spelled out as
// ops gives, NaN and Inf included, or the attention fusion pass would
// change results. These tests feed NaN, ±Inf and subnormals to q, k, v
// and the mask, and fully masked rows, and compare the reference and the
// flash kernel with the spelled-out graph run by the interpreter.

// specialFill overwrites about one value in rate with a special.
func specialFill(r *rand.Rand, v []float64, rate int) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-45, -1e-40}
	for i := range v {
		if r.IntN(rate) == 0 {
			v[i] = specials[r.IntN(len(specials))]
		}
	}
}

// sameSpecial compares as the fuzzer does: NaN with NaN, infinities
// exactly, finite values within tol of the row scale.
func sameSpecial(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if g, w := got[i], want[i]; approx.Far(g, w, tol*(1+math.Abs(w))) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, g, w)
		}
	}
}

// interpretFeeds makes g's F32 inputs from vals (by name) and runs the
// reference interpreter on them.
func interpretFeeds(t *testing.T, g *graph.Graph, vals map[string][]float64) (map[string]tensor.Tensor, []tensor.Tensor) {
	t.Helper()
	feeds := map[string]tensor.Tensor{}
	for name, x := range vals {
		n, _ := g.Lookup(name)
		feeds[name] = hcT(t, tensor.F32, n.Shape, x...)
	}
	outs, err := Interpret(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	return feeds, outs
}

func TestAttentionSpecialsMatchSpelledOut(t *testing.T) {
	saveQ, saveK := flashBQ, flashBK
	defer func() { flashBQ, flashBK = saveQ, saveK }()
	flashBQ, flashBK = 4, 4 // several key blocks, so the online max moves
	r := rand.New(rand.NewPCG(11, 3))
	const b, h, sq, sk, d = 1, 2, 9, 11, 3
	for iter := range 40 {
		g := graph.New()
		qs, ks, ms := tensor.Shape{b, h, sq, d}, tensor.Shape{b, h, sk, d}, tensor.Shape{1, 1, sq, sk}
		q, k, v := g.Input("q", tensor.F32, qs...), g.Input("k", tensor.F32, ks...), g.Input("v", tensor.F32, ks...)
		m := g.Input("m", tensor.F32, ms...)
		sc := g.Add(g.Mul(g.MatMul(q, g.Transpose(k, 0, 1, 3, 2)), g.Scalar(0.25)), m)
		spelled := g.MatMul(g.Softmax(sc, 3), v)
		att := g.Attention(q, k, v, m, graph.AttentionOpts{Scale: 0.25})
		g.Output(spelled, att)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		vals := map[string][]float64{"q": hcRand(r, qs.NumElements()), "k": hcRand(r, ks.NumElements()),
			"v": hcRand(r, ks.NumElements()), "m": hcRand(r, ms.NumElements())}
		for name, x := range vals {
			specialFill(r, x, 30)
			if name == "m" && iter%2 == 0 { // a row with every key at -Inf
				for j := range sk {
					x[(iter/2%sq)*sk+j] = math.Inf(-1)
				}
			}
		}
		feeds, outs := interpretFeeds(t, g, vals)
		want := outs[0].Float64s()
		sameSpecial(t, "reference", outs[1].Float64s(), want, 1e-5)
		got, variant := fastRun(t, att, parEnv(2), feeds["q"], feeds["k"], feeds["v"], feeds["m"])
		sameSpecial(t, variant, got, want, 1e-5)
	}
}

// TestAttentionFlashSkippedValues: with causality the flash kernel skips
// the key blocks no query of a block sees, but those keys' weight 0 still
// meets their values: a NaN or Inf there makes the column NaN, as the
// reference (and the spelled-out product) has it.
func TestAttentionFlashSkippedValues(t *testing.T) {
	saveQ, saveK := flashBQ, flashBK
	defer func() { flashBQ, flashBK = saveQ, saveK }()
	flashBQ, flashBK = 4, 4
	const sq, sk, d = 8, 8, 2
	g := graph.New()
	s := tensor.Shape{1, 1, sq, d}
	n := g.Attention(g.Input("q", tensor.F32, s...), g.Input("k", tensor.F32, s...), g.Input("v", tensor.F32, s...), nil,
		graph.AttentionOpts{Causal: true, Scale: 1})
	q, k, v := make([]float64, sq*d), make([]float64, sq*d), make([]float64, sq*d)
	for i := range v {
		v[i] = 1
	}
	v[7*d+1] = math.Inf(1) // key 7, column 1: seen only by query 7
	ins := []tensor.Tensor{hcT(t, tensor.F32, s, q...), hcT(t, tensor.F32, s, k...), hcT(t, tensor.F32, s, v...)}
	want := make([]float64, sq*d)
	for i := range sq {
		want[i*d] = 1            // equal weights over values of 1
		want[i*d+1] = math.NaN() // 0·Inf from key 7 for queries 0-6
	}
	want[7*d+1] = math.Inf(1) // query 7 sees the Inf with weight 1/8
	sameSpecial(t, "reference", hcRun(t, n, ins...), want, 1e-6)
	got, variant := fastRun(t, n, Serial, ins...)
	sameSpecial(t, variant, got, want, 1e-6)
}

// TestAttentionSubnormalQuery: q·k for a subnormal q component against an
// infinite k component is ±Inf, scaled after the product as the
// spelled-out form does; scaling q first (GEMM alpha) would underflow it
// to 0 and make 0·Inf = NaN.
func TestAttentionSubnormalQuery(t *testing.T) {
	g := graph.New()
	s := tensor.Shape{1, 1, 1, 2}
	ks := tensor.Shape{1, 1, 2, 2}
	n := g.Attention(g.Input("q", tensor.F32, s...), g.Input("k", tensor.F32, ks...), g.Input("v", tensor.F32, ks...), nil,
		graph.AttentionOpts{Scale: 0.25})
	// Key 0 scores 1e-45·(-Inf) = -Inf and drops out; key 1 scores 0.25.
	ins := []tensor.Tensor{hcT(t, tensor.F32, s, 1e-45, 1), hcT(t, tensor.F32, ks, math.Inf(-1), 0, 0, 1),
		hcT(t, tensor.F32, ks, 2, 3, 5, 7)}
	want := []float64{5, 7}
	sameSpecial(t, "reference", hcRun(t, n, ins...), want, 1e-6)
	got, variant := fastRun(t, n, Serial, ins...)
	sameSpecial(t, variant, got, want, 1e-6)
}

// TestAttentionSubnormalValue: one visible key has weight exactly 1, so a
// subnormal value passes through unchanged, as in softmax(·)·v spelled
// out; the flash kernel keeps its weights unnormalised until the end for
// that (normalising early rounded 1e-45·0.5 to 0, and x/x then gave NaN
// where the reference gave 1).
func TestAttentionSubnormalValue(t *testing.T) {
	g := graph.New()
	s := tensor.Shape{1, 1, 2, 1}
	n := g.Attention(g.Input("q", tensor.F32, s...), g.Input("k", tensor.F32, s...), g.Input("v", tensor.F32, s...), nil,
		graph.AttentionOpts{Causal: true, Scale: 1})
	ins := []tensor.Tensor{hcT(t, tensor.F32, s, 1, 1), hcT(t, tensor.F32, s, 0, 0), hcT(t, tensor.F32, s, 1e-45, 3)}
	want := float64(float32(1e-45)) // query 0 sees key 0 alone
	if got := hcRun(t, n, ins...); got[0] != want {
		t.Errorf("reference[0] = %g, want %g", got[0], want)
	}
	if got, variant := fastRun(t, n, Serial, ins...); got[0] != want {
		t.Errorf("%s[0] = %g, want %g", variant, got[0], want)
	}
}

// TestAttentionSpecialsNoMask: the same without a mask, where the flash
// kernel sends the raw scores to the exponential (its raw path), with
// blocks of full 6×16 tiles and edge tiles. Every other iteration the
// first key block's keys are all NaN, so its score rows hold only NaN
// before finite blocks: the output must be NaN, as the spelled-out
// softmax has it, not the finite blocks' average.
func TestAttentionSpecialsNoMask(t *testing.T) {
	saveQ, saveK := flashBQ, flashBK
	defer func() { flashBQ, flashBK = saveQ, saveK }()
	flashBQ, flashBK = 12, 16 // full 6×16 tiles, edge tiles and a short last block
	r := rand.New(rand.NewPCG(12, 4))
	const b, h, sq, sk, d = 1, 2, 13, 37, 3
	for iter := range 30 {
		g := graph.New()
		qs, ks := tensor.Shape{b, h, sq, d}, tensor.Shape{b, h, sk, d}
		q, k, v := g.Input("q", tensor.F32, qs...), g.Input("k", tensor.F32, ks...), g.Input("v", tensor.F32, ks...)
		sc := g.Mul(g.MatMul(q, g.Transpose(k, 0, 1, 3, 2)), g.Scalar(0.25))
		spelled := g.MatMul(g.Softmax(sc, 3), v)
		att := g.Attention(q, k, v, nil, graph.AttentionOpts{Scale: 0.25})
		g.Output(spelled, att)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		vals := map[string][]float64{"q": hcRand(r, qs.NumElements()), "k": hcRand(r, ks.NumElements()), "v": hcRand(r, ks.NumElements())}
		for _, x := range vals {
			specialFill(r, x, 60)
		}
		if iter%2 == 0 {
			for j := range 16 * d {
				vals["k"][j] = math.NaN() // head 0's keys 0-15
			}
		}
		feeds, outs := interpretFeeds(t, g, vals)
		want := outs[0].Float64s()
		got, variant := fastRun(t, att, Serial, feeds["q"], feeds["k"], feeds["v"])
		sameSpecial(t, variant, got, want, 1e-5)
	}
}
