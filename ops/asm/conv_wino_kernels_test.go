package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWinoKernels: every feature's transforms give the Go twins' bits
// (sums of |x| included, NaN and Inf inputs too), and the twins compute
// Bᵀ·d·B and Aᵀ·M·A + bias as written out with the matrices.
func TestWinoKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const wp, dstride = 37, 11
	for _, wk := range winoFamily.asm {
		for trial := range 200 {
			src := make([]float32, 3*wp+18+5)
			for i := range src {
				src[i] = float32(r.NormFloat64())
				if trial%20 == 0 && r.IntN(30) == 0 {
					src[i] = []float32{float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1)), 0}[r.IntN(4)]
				}
			}
			off := r.IntN(5)
			var acc0 [8]float32
			for i := range acc0 {
				acc0[i] = float32(r.Float64())
			}
			got, want := make([]float32, 15*dstride+8), make([]float32, 15*dstride+8)
			accGot, accWant := acc0, acc0
			wk.in(&src[off], wp, &got[0], dstride, &accGot)
			winoInGo(&src[off], wp, &want[0], dstride, &accWant)
			winoSame(t, "in", got, want)
			winoSame(t, "in acc", accGot[:], accWant[:])

			m := make([]float32, 15*dstride+8)
			for i := range m {
				m[i] = float32(r.NormFloat64())
			}
			bias := float32(r.NormFloat64())
			yGot, yWant := make([]float32, 2*20+16), make([]float32, 2*20+16)
			wk.out(&m[0], dstride, &yGot[off], 20, bias)
			winoOutGo(&m[0], dstride, &yWant[off], 20, bias)
			winoSame(t, "out", yGot, yWant)
		}
	}
	// The twins against the matrices, in float64.
	src := make([]float32, 3*wp+18)
	for i := range src {
		src[i] = float32(r.IntN(17) - 8) // small integers: exact in any order
	}
	v := make([]float32, 15*dstride+8)
	var acc [8]float32
	winoInGo(&src[0], wp, &v[0], dstride, &acc)
	checkWinoIn(t, src, wp, v, dstride, 8)
	const ss = 9
	mv := make([]float32, 15*ss+8)
	for i := range mv {
		mv[i] = float32(r.IntN(17) - 8)
	}
	y := make([]float32, 20+16)
	winoOutGo(&mv[0], ss, &y[0], 20, 3)
	for i := range 8 {
		for a := range 2 {
			for b := range 2 {
				want := winoOutWant(mv, ss, i, a, b, 3)
				if got := float64(y[a*20+2*i+b]); got != want {
					t.Fatalf("Y tile %d (%d,%d) = %v, want %v", i, a, b, got, want)
				}
			}
		}
	}
}

// winoBT and winoAT are F(2×2, 3×3)'s input and output transforms, Bᵀ
// and Aᵀ.
var (
	winoBT = [4][4]float64{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}}
	winoAT = [2][4]float64{{1, 1, 1, 0}, {0, 1, -1, -1}}
)

// checkWinoIn checks tiles transformed tiles in v (ξ stride dstride)
// against Bᵀ·d·B of src's 4×4 patches (rows wp apart, tile i at column
// 2i), exactly: src holds small integers.
func checkWinoIn(t *testing.T, src []float32, wp int, v []float32, dstride, tiles int) {
	t.Helper()
	for i := range tiles {
		for a := range 4 {
			for b := range 4 {
				want := 0.0
				for p := range 4 {
					for q := range 4 {
						want += winoBT[a][p] * float64(src[p*wp+2*i+q]) * winoBT[b][q]
					}
				}
				if got := float64(v[(4*a+b)*dstride+i]); got != want {
					t.Fatalf("V tile %d (%d,%d) = %v, want %v", i, a, b, got, want)
				}
			}
		}
	}
}

// winoOutWant is output (a, b) of tile i, Aᵀ·M·A + bias, of products m
// (ξ stride ss).
func winoOutWant(m []float32, ss, i, a, b int, bias float64) float64 {
	want := bias
	for p := range 4 {
		for q := range 4 {
			want += winoAT[a][p] * float64(m[(4*p+q)*ss+i]) * winoAT[b][q]
		}
	}
	return want
}

func winoSame(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
