package asm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLayerNormUniform: one scale and bias for the row (read with step
// 0) gives bit for bit what LayerNorm gives with both filled with them,
// in every variant, length and misalignment, in place too.
func TestLayerNormUniform(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		x := newGuarded(n, off).Data
		randRow(r, x, 3)
		for _, sb := range [][2]float32{{1, 0}, {-2.5, 0.75}, {float32(math.Inf(1)), 1}} {
			scale, bias := make([]float32, n), make([]float32, n)
			for i := range scale {
				scale[i], bias[i] = sb[0], sb[1]
			}
			want := make([]float32, n)
			k.LayerNorm(want, x, scale, bias, 1e-5)
			var s Splat
			s.Set(sb[0], sb[1])
			g := newGuarded(n, off+1)
			k.LayerNormUniform(g.Data, x, &s, 1e-5)
			g.check(t, "LayerNormUniform")
			if !slices.Equal(f32Bits(g.Data), f32Bits(want)) {
				t.Fatalf("scale %v bias %v: %v, want %v", sb[0], sb[1], g.Data, want)
			}
			inPlace := slices.Clone(x)
			k.LayerNormUniform(inPlace, inPlace, &s, 1e-5)
			if !slices.Equal(f32Bits(inPlace), f32Bits(want)) {
				t.Fatalf("in place: %v, want %v", inPlace, want)
			}
		}
	})
}

func f32Bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}
