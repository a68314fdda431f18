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

// TestAccMinMaxSignedZero: AccMin and AccMax order -0 below +0, as Go's
// min and max (and the reference ReduceMin/Max) do, with either operand
// order and in the vector body and the tail; a NaN in either wins. The
// strided ReduceMin of [+0, -0] rows gave +0 where the reference gave -0
// (cmd/fuzz seed 29550519659486, a Log of it then +Inf for NaN).
func TestAccMinMaxSignedZero(t *testing.T) {
	neg, pos := float32(math.Copysign(0, -1)), float32(0)
	nan := float32(math.NaN())
	pairs := [][2]float32{{pos, neg}, {neg, pos}, {neg, neg}, {pos, pos}, {nan, neg}, {pos, nan}, {1, neg}, {neg, -1}}
	for _, k := range RowVariants() {
		for _, n := range []int{1, 7, 8, 19} { // tail only, body, both
			for _, p := range pairs {
				for _, minimum := range []bool{false, true} {
					acc, x := make([]float32, n), make([]float32, n)
					for i := range acc {
						acc[i], x[i] = p[0], p[1]
					}
					want := max(p[0], p[1])
					name := "AccMax"
					if minimum {
						want, name = min(p[0], p[1]), "AccMin"
						k.AccMin(acc, x)
					} else {
						k.AccMax(acc, x)
					}
					for i, got := range acc {
						same := math.Float32bits(got) == math.Float32bits(want) || got != got && want != want
						if !same {
							t.Fatalf("%s %s n=%d: (%v, %v) element %d = %v (sign %v), want %v (sign %v)", k.Name, name, n,
								p[0], p[1], i, got, math.Signbit(float64(got)), want, math.Signbit(float64(want)))
						}
					}
				}
			}
		}
	}
}

// TestRowMinMaxSignedZero: Max and Min of rows mixing -0 and +0 give +0
// and -0, as Go's max and min, at lengths through the 32-wide body, the
// 8-wide steps and the tail.
func TestRowMinMaxSignedZero(t *testing.T) {
	neg := float32(math.Copysign(0, -1))
	for _, k := range RowVariants() {
		for _, n := range []int{1, 2, 7, 8, 9, 33, 64, 100} {
			for _, first := range []float32{neg, -neg} {
				x := make([]float32, n)
				for i := range x {
					x[i] = first
					if i%2 == 1 {
						x[i] = -first
					}
				}
				wmax, wmin := x[0], x[0]
				for _, v := range x {
					wmax, wmin = max(wmax, v), min(wmin, v)
				}
				gmax, gmin := k.Max(x), k.Min(x)
				if math.Float32bits(gmax) != math.Float32bits(wmax) || math.Float32bits(gmin) != math.Float32bits(wmin) {
					t.Errorf("%s n=%d from %v: max %v (sign %v), min %v (sign %v); want %v, %v", k.Name, n, first,
						gmax, math.Signbit(float64(gmax)), gmin, math.Signbit(float64(gmin)), wmax, wmin)
				}
			}
		}
	}
}
