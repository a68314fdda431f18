//go:build !purego

package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNeonRowsMatchTwins: the NEON primitives that round every step as
// their Go twins do must give the twins' bits, not just pass the
// tolerances of row_test.go. Rows mix ordinary values with far-away ones
// (whose x - m loses bits to rounding), ±Inf, NaN, ±0 and subnormals.
func TestNeonRowsMatchTwins(t *testing.T) {
	k := rowFamily.asm[0]
	if k.Name != "neon" {
		t.Fatalf("first arm64 row variant is %s", k.Name)
	}
	inf := float32(math.Inf(1))
	specials := []float32{inf, -inf, float32(math.NaN()), 0, float32(math.Copysign(0, -1)), 1e-40, -87.33, -200, 3e38}
	r := rand.New(rand.NewPCG(7, 7))
	// Rows have room for one more element, so that p is valid even for
	// an empty row (the primitives take a pointer).
	row := func(n int) []float32 { return make([]float32, n, n+1) }
	p := func(s []float32) *float32 { return &s[:len(s)+1][0] }
	for n := range 40 {
		for trial := range 4 {
			x := row(n)
			randRow(r, x, 90)
			for i := range x {
				if trial > 0 && r.IntN(4) == 0 {
					x[i] = specials[r.IntN(len(specials))]
				}
			}
			mx := maxGo(p(x), n)
			for _, m := range []float32{mx, mx + 40, inf} {
				want, got := row(n), row(n)
				expShiftGo(p(want), p(x), n, m)
				k.expShift(p(got), p(x), n, m)
				checkBits(t, "expShift", n, x, got, want)
			}
			scale, bias := row(n), row(n)
			randRow(r, scale, 3)
			randRow(r, bias, 3)
			want, got := row(n), row(n)
			normGo(p(want), p(x), p(scale), p(bias), n, 1, 1, 12.5, -3e-7, 0.37)
			k.norm(p(got), p(x), p(scale), p(bias), n, 1, 1, 12.5, -3e-7, 0.37)
			checkBits(t, "norm", n, x, got, want)
			if a, b := k.max(p(x), n), maxGo(p(x), n); !sameBits(a, b) {
				t.Fatalf("n=%d: max %v, twin %v (x %v)", n, a, b, x)
			}
			if a, b := k.min(p(x), n), minGo(p(x), n); !sameBits(a, b) {
				t.Fatalf("n=%d: min %v, twin %v (x %v)", n, a, b, x)
			}
			for _, f := range []struct {
				name      string
				asm, twin func(acc, x *float32, n int)
			}{{"accMax", k.accMax, accMaxGo}, {"accMin", k.accMin, accMinGo}} {
				copy(want, bias)
				copy(got, bias)
				f.twin(p(want), p(x), n)
				f.asm(p(got), p(x), n)
				checkBits(t, f.name, n, x, got, want)
			}
			copy(want, x)
			copy(got, x)
			scaleGo(p(want), n, -0.3)
			k.scale(p(got), n, -0.3)
			checkBits(t, "scale", n, x, got, want)
			acc, acc64 := make([]float64, n+1), make([]float64, n+1)
			for i := range n {
				acc[i] = float64(bias[i]) * 1e-3
			}
			copy(acc64, acc)
			accAddGo(&acc64[0], p(x), n)
			k.accAdd(&acc[0], p(x), n)
			for i := range n {
				if acc[i] != acc64[i] && !(acc[i] != acc[i] && acc64[i] != acc64[i]) {
					t.Fatalf("accAdd n=%d: element %d = %v, twin %v", n, i, acc[i], acc64[i])
				}
			}
		}
	}
}

// checkBits fails unless got and want agree bit for bit (any NaN
// matching any NaN).
func checkBits(t *testing.T, what string, n int, x, got, want []float32) {
	t.Helper()
	if i := firstDiff(got, want); i >= 0 {
		t.Fatalf("%s n=%d: element %d = %v (%#x), twin %v (%#x); x %v", what, n, i,
			got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]), x)
	}
}
