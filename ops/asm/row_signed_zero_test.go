package asm

import (
	"math"
	"testing"
)

// TestNormKeepsNegativeZero: RMSNorm and LayerNorm without a bias must
// leave a -0 result -0; adding a +0 stand-in bias made it +0, and a Div
// by the norm's output then gave +Inf where the reference gave -Inf
// (cmd/fuzz seeds 1183 and 1975).
func TestNormKeepsNegativeZero(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	for _, k := range RowVariants() {
		for _, n := range []int{1, 3, 8, 19, 64} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%5) - 2 // -2 .. 2
			}
			x[0] = negZero
			dst := make([]float32, n)
			k.RMSNorm(dst, x, nil, 1e-6)
			if dst[0] != 0 || !math.Signbit(float64(dst[0])) {
				t.Errorf("%s n=%d: RMSNorm(-0) = %v (sign %v), want -0", k.Name, n, dst[0], math.Signbit(float64(dst[0])))
			}
			// A positive scale keeps the sign too.
			scale := make([]float32, n)
			for i := range scale {
				scale[i] = 0.5
			}
			k.RMSNorm(dst, x, scale, 1e-6)
			if !math.Signbit(float64(dst[0])) {
				t.Errorf("%s n=%d: RMSNorm(-0)·0.5 = %v, want -0", k.Name, n, dst[0])
			}
			// LayerNorm of a constant row: (x - mean)·r·scale is
			// (+0)·r·(-1) = -0.
			y := []float32{3, 3, 3}
			neg := []float32{-1, -1, -1}
			out := make([]float32, 3)
			k.LayerNorm(out, y, neg, nil, 1e-5)
			if out[0] != 0 || !math.Signbit(float64(out[0])) {
				t.Errorf("%s: LayerNorm of a constant row with scale -1 = %v, want -0", k.Name, out[0])
			}
		}
	}
}
