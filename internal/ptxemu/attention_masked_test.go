package ptxemu

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// TestAttentionFullyMaskedRowIsNaN: a query whose every key is removed
// is NaN, as softmax gives it and as graph.Attention defines it (the
// emitter used to give zeros); the other query is the plain weighted sum.
func TestAttentionFullyMaskedRowIsNaN(t *testing.T) {
	a := ptx.Attention{Attention: kdesc.Attention{Name: "attn_masked", DType: tensor.F32, B: 1, H: 1, HK: 1, SQ: 2, SK: 2, D: 1, DV: 1,
		Scale: 1, Mask: ptx.MaskBool, MaskStrides: []int{0, 0, 2, 1}}}
	k, err := ptx.EmitAttention(&a)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(dt tensor.DType, s tensor.Shape, v []float64) tensor.Tensor {
		x, err := tensor.FromFloat64s(dt, s, v)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	s := tensor.Shape{1, 1, 2, 1}
	q, kk, v := mk(tensor.F32, s, []float64{1, 1}), mk(tensor.F32, s, []float64{0, 0}), mk(tensor.F32, s, []float64{4, 8})
	mask, err := tensor.FromBool(tensor.Shape{2, 2}, []bool{false, false, true, true})
	if err != nil {
		t.Fatal(err)
	}
	got := sentinel(tensor.F32, 1, 1, 2, 1)
	if err := runKernel(t, k, Options{}, got, q, kk, v, mask); err != nil {
		t.Fatal(err)
	}
	y := got.F32()
	if !math.IsNaN(float64(y[0])) || approx.Far(float64(y[1]), 6, 1e-5) {
		t.Errorf("attention = %v, want [NaN 6]", y)
	}
}
