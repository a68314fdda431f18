package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The attention sweep mirrors attentionVariants of the ptx package at
// small sizes: plain multi-head, grouped K/V heads with a causal single
// query over many keys (several warps), an additive mask with an
// explicit scale, and a Bool mask with causality (rows whose every key is
// removed come out as zeros).

func attentionCases() []ptx.Attention {
	var as []ptx.Attention
	for _, dt := range floatDTypes {
		for _, c := range []ptx.Attention{
			{Attention: kdesc.Attention{B: 1, H: 3, HK: 3, SQ: 10, SK: 12, D: 8, DV: 8}},
			{Attention: kdesc.Attention{B: 1, H: 4, HK: 2, SQ: 1, SK: 300, D: 16, DV: 16, Causal: true}},
			{Attention: kdesc.Attention{B: 1, H: 4, HK: 4, SQ: 16, SK: 16, D: 8, DV: 16, Mask: ptx.MaskAdd, MaskStrides: []int{16, 0, 0, 1}, Scale: 0.3}},
			{Attention: kdesc.Attention{B: 3, H: 2, HK: 1, SQ: 5, SK: 7, D: 4, DV: 4, Mask: ptx.MaskBool, MaskStrides: []int{0, 0, 7, 1}, Causal: true}, Block: 32},
			// Value sums split among key groups (4, then 2 of DV = 80),
			// with unrolled trips and tails; keys staged in three chunks
			// (33, 33, 4 of D = 120), and a dot product too long to write
			// out (D = 300, chunks of 13 keys).
			{Attention: kdesc.Attention{B: 2, H: 2, HK: 2, SQ: 3, SK: 37, D: 12, DV: 16, Mask: ptx.MaskAdd, MaskStrides: []int{37, 0, 0, 1}}},
			{Attention: kdesc.Attention{B: 1, H: 1, HK: 1, SQ: 2, SK: 130, D: 8, DV: 80, Causal: true}},
			{Attention: kdesc.Attention{B: 1, H: 2, HK: 1, SQ: 3, SK: 70, D: 120, DV: 8, Mask: ptx.MaskAdd, MaskStrides: []int{0, 0, 70, 1}}},
			{Attention: kdesc.Attention{B: 1, H: 2, HK: 1, SQ: 2, SK: 30, D: 300, DV: 8}},
			// A KV cache read to a run-time count per batch (kvLens):
			// decode over part of a long cache, a chunk of queries
			// appended (causal, aligned to the count), a count of 0
			// and one past the end with a mask, and queries that see
			// no key.
			{Attention: kdesc.Attention{B: 2, H: 4, HK: 2, SQ: 1, SK: 300, D: 16, DV: 16, Causal: true, KVLen: true}},
			{Attention: kdesc.Attention{B: 2, H: 2, HK: 1, SQ: 5, SK: 40, D: 8, DV: 8, Causal: true, KVLen: true}, Block: 32},
			{Attention: kdesc.Attention{B: 2, H: 2, HK: 2, SQ: 3, SK: 37, D: 12, DV: 16, Mask: ptx.MaskAdd, MaskStrides: []int{37, 0, 0, 1}, KVLen: true}},
			{Attention: kdesc.Attention{B: 1, H: 2, HK: 2, SQ: 4, SK: 20, D: 8, DV: 8, Causal: true, KVLen: true}},
		} {
			c.Name = fmt.Sprintf("attn_%v_%d_%d_%d_kvlen%v", dt, c.H, c.SK, c.Mask, c.KVLen)
			c.DType = dt
			as = append(as, c)
		}
	}
	return as
}

// kvLens are the KVLen counts the sweep gives a case of SK keys and B
// batches: part of the cache, then (with a second batch) a count of 0 or
// past the end when there is a mask, else all keys; a single batch gets
// 2, fewer than its queries when it has several.
func kvLens(a ptx.Attention) []int64 {
	if a.B == 1 {
		return []int64{2}
	}
	second := int64(a.SK)
	if a.Mask != ptx.MaskNone {
		second = int64(a.SK + 13)
	}
	lens := []int64{int64(a.SK/2 - 13), second}
	if a.Mask != ptx.MaskNone {
		lens[0] = 0
	}
	return lens
}

// maskShape is the mask's own shape: 1 where its stride broadcasts.
func maskShape(a ptx.Attention) []int {
	full := []int{a.B, a.H, a.SQ, a.SK}
	s := make([]int, 4)
	for d := range s {
		s[d] = full[d]
		if a.MaskStrides[d] == 0 {
			s[d] = 1
		}
	}
	return s
}

func TestSweepAttention(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	for _, a := range attentionCases() {
		k, err := ptx.EmitAttention(&a)
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		shapes := [][]int{{a.B, a.H, a.SQ, a.D}, {a.B, a.HK, a.SK, a.D}, {a.B, a.HK, a.SK, a.DV}}
		mdt := a.DType
		if a.Mask == ptx.MaskBool {
			mdt = tensor.Bool
		}
		if a.Mask != ptx.MaskNone {
			shapes = append(shapes, maskShape(a))
		}
		var ins []tensor.Tensor
		g := graph.New()
		feeds := map[string]tensor.Tensor{}
		var nodes []*graph.Node
		for i, s := range shapes {
			dt := a.DType
			if i == 3 {
				dt = mdt
			}
			x := randTensor(r, dt, false, s...)
			ins = append(ins, x)
			w := widen(x)
			nm := fmt.Sprintf("x%d", i)
			feeds[nm] = w
			nodes = append(nodes, g.Input(nm, w.DType, s...))
		}
		var mask, lens *graph.Node
		if len(nodes) > 3 {
			mask = nodes[3]
		}
		if a.KVLen {
			lv := kvLens(a)
			x := tensor.New(tensor.I64, a.B)
			copy(x.I64(), lv)
			ins = append(ins, x)
			feeds["lens"] = x
			lens = g.Input("lens", tensor.I64, a.B)
		}
		g.Output(g.Attention(nodes[0], nodes[1], nodes[2], mask, graph.AttentionOpts{Causal: a.Causal, Scale: a.Scale, KVLen: lens}))
		want := castTo(interpret(t, g, feeds)[0], a.DType)
		got := sentinel(a.DType, a.B, a.H, a.SQ, a.DV)
		if err := runKernel(t, k, Options{}, got, ins...); err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		tl := tolFor(a.DType)
		tl.abs = max(tl.abs, 1e-6*float64(a.D))
		tl.rel = max(tl.rel, 1e-5)
		compareTensors(t, a.Name, got, want, tl)
	}
}
