package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// kvLenCase is an Attention with a KVLen input: a cache of sk rows of
// which each batch uses lens[b].
type kvLenCase struct {
	h, hk, sq, sk, d int
	lens             []int64
	causal           bool
}

func (c kvLenCase) String() string {
	return fmt.Sprintf("h%d_hk%d_sq%d_sk%d_d%d_lens%v_causal%v", c.h, c.hk, c.sq, c.sk, c.d, c.lens, c.causal)
}

// kvLenWant is the expected result: per batch, hcAttentionLoop over the
// keys and values sliced to that batch's clamped length, so a kernel that
// reads a key past the length (or aligns causality to sk) differs.
func kvLenWant(c kvLenCase, q, k, v []float64) []float64 {
	var want []float64
	scale := 1 / math.Sqrt(float64(c.d))
	for b, n := range c.lens {
		n := int(min(max(n, 0), int64(c.sk)))
		qb := q[b*c.h*c.sq*c.d:][:c.h*c.sq*c.d]
		var kb, vb []float64
		for hk := range c.hk {
			head := (b*c.hk + hk) * c.sk * c.d
			kb = append(kb, k[head:][:n*c.d]...)
			vb = append(vb, v[head:][:n*c.d]...)
		}
		want = append(want, hcAttentionLoop(1, c.h, c.hk, c.sq, n, c.d, c.d, scale, c.causal, qb, kb, vb, nil, nil)...)
	}
	return want
}

func runKVLenCase(t *testing.T, c kvLenCase, r *rand.Rand) {
	g := graph.New()
	b := len(c.lens)
	qs, ks := tensor.Shape{b, c.h, c.sq, c.d}, tensor.Shape{b, c.hk, c.sk, c.d}
	q, k, v := g.Input("q", tensor.F32, qs...), g.Input("k", tensor.F32, ks...), g.Input("v", tensor.F32, ks...)
	lens := g.Input("lens", tensor.I64, b)
	n := g.Attention(q, k, v, nil, graph.AttentionOpts{Causal: c.causal, KVLen: lens})
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	qv, kv, vv := hcRand(r, qs.NumElements()), hcRand(r, ks.NumElements()), hcRand(r, ks.NumElements())
	lv := make([]float64, b)
	for i, x := range c.lens {
		lv[i] = float64(x)
	}
	ins := []tensor.Tensor{hcT(t, tensor.F32, qs, qv...), hcT(t, tensor.F32, ks, kv...), hcT(t, tensor.F32, ks, vv...), hcT(t, tensor.I64, tensor.Shape{b}, lv...)}
	// The rows past every length hold NaN: a kernel that reads them shows.
	for bi, x := range c.lens {
		for hk := range c.hk {
			head := (bi*c.hk + hk) * c.sk * c.d
			for i := int(min(max(x, 0), int64(c.sk))) * c.d; i < c.sk*c.d; i++ {
				ins[1].F32()[head+i], ins[2].F32()[head+i] = float32(math.NaN()), float32(math.NaN())
				kv[head+i], vv[head+i] = math.NaN(), math.NaN()
			}
		}
	}
	want := kvLenWant(c, qv, kv, vv)
	hcClose(t, "reference", hcRun(t, n, ins...), want, 1e-6)
	got, variant := fastRun(t, n, parEnv(3), ins...)
	hcClose(t, variant, got, want, 2e-5)
}

// TestAttentionKVLen checks Attention with a run-time key count, in the
// reference and the flash kernel, against attention over the sliced
// cache: decode (one query), a chunk of queries appended to a cache
// (causal, aligned to the length), lengths of 0, 1, all and past the
// cache (clamped), and grouped heads.
func TestAttentionKVLen(t *testing.T) {
	bq0, bk0 := flashBQ, flashBK
	flashBQ, flashBK = 16, 32 // several key blocks, some skipped past the length
	defer func() { flashBQ, flashBK = bq0, bk0 }()
	r := rand.New(rand.NewPCG(25, 1))
	for _, c := range []kvLenCase{
		{h: 4, hk: 2, sq: 1, sk: 100, d: 16, lens: []int64{37, 100}, causal: true},
		{h: 4, hk: 2, sq: 1, sk: 100, d: 16, lens: []int64{1, 64}},
		{h: 2, hk: 1, sq: 5, sk: 100, d: 8, lens: []int64{70, 33}, causal: true},
		{h: 2, hk: 2, sq: 20, sk: 64, d: 8, lens: []int64{20, 3}, causal: true}, // queries that see no key: NaN
		{h: 2, hk: 2, sq: 3, sk: 40, d: 8, lens: []int64{0, 41}},                // none (zeros), past the end (all)
		{h: 1, hk: 1, sq: 2, sk: 40, d: 8, lens: []int64{-3}, causal: true},
	} {
		t.Run(c.String(), func(t *testing.T) { runKVLenCase(t, c, r) })
	}
}

// TestAttentionKVLenErrors: a KVLen input of the wrong dtype or shape is
// an error of the builder, naming what it must be.
func TestAttentionKVLenErrors(t *testing.T) {
	for _, c := range []struct {
		dt   tensor.DType
		dims []int
	}{{tensor.I32, []int{2}}, {tensor.I64, []int{1}}, {tensor.I64, []int{2, 1}}} {
		g := graph.New()
		s := []int{2, 2, 3, 4}
		q, k, v := g.Input("q", tensor.F32, s...), g.Input("k", tensor.F32, s...), g.Input("v", tensor.F32, s...)
		g.Attention(q, k, v, nil, graph.AttentionOpts{KVLen: g.Input("n", c.dt, c.dims...)})
		if err := g.Err(); err == nil {
			t.Errorf("KVLen %v%v: no error", c.dt, c.dims)
		}
	}
}
