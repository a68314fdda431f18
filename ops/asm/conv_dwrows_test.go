package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestDepthwiseRows3 runs 3×3 stride-1 depthwise convolutions with the
// rows kernel (four output rows at a time) and without it (the taps
// kernel alone) on every variant that has it and compares the outputs
// bit for bit (the rows kernel promises the taps kernel's sums): planes
// from 1 to 130 columns (a row of one vector, of several, a partial last
// vector) and rows that leave 0-3 rows for the taps kernel, bands of
// several groups, padding 0-2 on each side, a channel multiplier, bias or
// none, NaN and ±Inf in the input, one and three workers. It checks that
// the plan took the rows kernel, so the comparison cannot be vacuous.
func TestDepthwiseRows3(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	t.Cleanup(func() { dwRowsOn = true })
	ran := 0
	for _, v := range depthwiseVariants() {
		if v.rows3 == nil {
			continue
		}
		ran++
		for trial := range 60 {
			c := 1 + r.IntN(3)
			g := tgeom{
				N: 1, C: c, H: 1 + r.IntN(70), W: 1 + r.IntN(130), M: c * (1 + r.IntN(2)), KH: 3, KW: 3,
				PT: r.IntN(3), PL: r.IntN(3), PB: r.IntN(3), PR: r.IntN(3), Groups: c,
			}.normalised()
			if g.OH == 0 || g.OW == 0 {
				continue
			}
			bias, specials, threads := trial%2 == 0, trial%3 == 0, 1+2*(trial%2)
			t.Run(fmt.Sprintf("%s/%d", v.name, trial), func(t *testing.T) {
				x, w, b := convOperands(r, g, bias)
				if specials {
					dwSpecials(r, x)
				}
				run := func(rows bool) []float32 {
					dwRowsOn = rows
					cv := newDepthwisePath(t, g, bias, false, v, goPar(threads), dwPlane)
					if cv.dw.rows3 != rows {
						t.Fatalf("%+v: rows kernel planned %v, want %v", g, cv.dw.rows3, rows)
					}
					y := make([]float32, g.N*g.M*g.OH*g.OW)
					if err := cv.Run(y, x, w, b); err != nil {
						t.Fatal(err)
					}
					return y
				}
				want, got := run(false), run(true)
				for i := range want {
					if !sameFloat(got[i], want[i]) {
						t.Fatalf("%+v: y[%d] = %v with the rows kernel, %v with the taps kernel", g, i, got[i], want[i])
					}
				}
			})
		}
	}
	if ran == 0 && bestDepthwise().name == "avx512" {
		t.Fatal("the AVX-512 variant has no rows kernel")
	}
}
