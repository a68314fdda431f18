package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpScaleShift checks every variant's ExpScaleShift against exp in
// float64 of the rounded product x·s, minus m: within 3e-7 plus the
// documented |x·s - m|·2^-24 (the unrecovered rounding of the
// difference), and the sum within its 1.8e-7, at every length and
// misalignment, with guard words.
func TestExpScaleShift(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		x := newGuarded(n, off).Data
		randRow(r, x, 120)
		for _, s := range []float32{1, 0.125, 3} {
			var m float32
			for _, v := range x {
				m = max(m, v*s)
			}
			for _, shift := range []float32{0, 7} {
				g := newGuarded(n, off+1)
				sum := k.ExpScaleShift(g.Data, x, s, m+shift)
				g.check(t, "ExpScaleShift")
				var want float64
				for i, v := range x {
					d := float64(v*s) - float64(m+shift)
					e := math.Exp(d)
					want += float64(g.Data[i])
					if !closeTo(g.Data[i], e, 3e-7+math.Abs(d)*0x1p-24, 0x1p-126) {
						t.Fatalf("s=%v m=%v: exp(%v·s - m) = %v, want %v", s, m+shift, v, g.Data[i], e)
					}
				}
				if !(math.Abs(sum-want) <= 1.8e-7*want) { // the documented bound

					t.Fatalf("sum %v, want %v", sum, want)
				}
			}
		}
	})
}

// TestExpScaleShiftSpecials: the largest weight is exactly 1, -Inf and
// arguments past float32's range give 0, a NaN gives NaN (and a NaN
// sum), in every lane position of a vector and of a tail.
func TestExpScaleShiftSpecials(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, k := range RowVariants() {
		for _, n := range []int{5, 8, 16, 21} {
			for pos := range n {
				for _, c := range []struct {
					x, want float32
				}{{2, 1}, {-inf, 0}, {-1e30, 0}, {-200, 0}, {float32(math.NaN()), float32(math.NaN())}} {
					x := make([]float32, n)
					for i := range x {
						x[i] = 2 - float32(i+1)/8 // below the max, 2·0.5 = 1
					}
					x[pos] = c.x
					y := make([]float32, n)
					sum := k.ExpScaleShift(y, x, 0.5, 1)
					if !sameBits(y[pos], c.want) && !(c.want != c.want && y[pos] != y[pos]) {
						t.Fatalf("%s n=%d: exp(%v·0.5 - 1) at %d = %v, want %v", k.Name, n, c.x, pos, y[pos], c.want)
					}
					if c.want != c.want && !math.IsNaN(sum) {
						t.Fatalf("%s: sum with a NaN = %v", k.Name, sum)
					}
				}
			}
		}
	}
}
