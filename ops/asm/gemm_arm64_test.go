//go:build !purego

package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The arm64 compiler fuses x*y + t into one FMADDS, so on arm64 the Go
// twins compute the same chains of fused multiply-adds as the NEON
// kernels: these tests hold them to the same bits, not just the
// tolerance of gemm_kernel_test.go.

// TestNeonMicroKernelBits: the micro-kernel against the Go twin, bit for
// bit, every k past two unrolled pairs and a remainder, both modes.
func TestNeonMicroKernelBits(t *testing.T) {
	v := GemmVariantNamed("neon")
	if v == nil {
		t.Skip("no neon variant in this build")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for k := 1; k <= 9; k++ {
		for _, flags := range []uint{0, gemmAccumulate} {
			a, b := neonRandSlice(r, 6*k), neonRandSlice(r, 16*k)
			ldc := 16 + r.IntN(5)
			c, twin := neonRandSlice(r, 5*ldc+16), make([]float32, 5*ldc+16)
			copy(twin, c)
			v.micro(k, &a[0], &b[0], &c[0], ldc, flags)
			gemmGo.micro(k, &a[0], &b[0], &twin[0], ldc, flags)
			neonSameBits(t, "micro", k, c, twin)
		}
	}
}

// TestNeonGemvBits: the one-row kernel against a Go model of its
// summation order (four partial sums by row mod 4, the last k%4 rows in
// the first, folded (0+1)+(2+3), then y), which is gemv16AVX2's order.
func TestNeonGemvBits(t *testing.T) {
	v := GemmVariantNamed("neon")
	if v == nil {
		t.Skip("no neon variant in this build")
	}
	r := rand.New(rand.NewPCG(33, 34))
	for k := 1; k <= 11; k++ {
		for _, flags := range []uint{0, gemmAccumulate} {
			ldb := 16 + r.IntN(3)
			x, b, y := neonRandSlice(r, k), neonRandSlice(r, (k-1)*ldb+16), neonRandSlice(r, 16)
			var s [4][16]float32
			for p := range k {
				q := p % 4
				if p >= k/4*4 {
					q = 0
				}
				for j := range 16 {
					s[q][j] += x[p] * b[p*ldb+j] // fused on arm64, as FMLA
				}
			}
			want := make([]float32, 16)
			for j := range want {
				want[j] = (s[0][j] + s[1][j]) + (s[2][j] + s[3][j])
				if flags != 0 {
					want[j] += y[j]
				}
			}
			v.gemv(k, &x[0], &b[0], ldb, &y[0], flags)
			neonSameBits(t, "gemv", k, y, want)
		}
	}
}

// TestNeonGemvRows4Bits: the four-row kernel against the Go twin, bit for
// bit, across the 16-, 4- and 1-column parts.
func TestNeonGemvRows4Bits(t *testing.T) {
	v := GemmVariantNamed("neon")
	if v == nil {
		t.Skip("no neon variant in this build")
	}
	r := rand.New(rand.NewPCG(35, 36))
	for n := 1; n <= 40; n++ {
		for _, flags := range []uint{0, gemmAccumulate} {
			ldb := n + r.IntN(3)
			x, b := neonRandSlice(r, 4), neonRandSlice(r, 3*ldb+n)
			y, twin := neonRandSlice(r, n), make([]float32, n)
			copy(twin, y)
			v.gemvRows4(n, &x[0], &b[0], ldb, &y[0], flags)
			gemmGo.gemvRows4(n, &x[0], &b[0], ldb, &twin[0], flags)
			neonSameBits(t, "gemvRows4", n, y, twin)
		}
	}
}

func neonRandSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = gemmRand(r)
	}
	return s
}

func neonSameBits(t *testing.T, what string, size int, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s size %d: [%d] = %v, want %v bit for bit", what, size, i, got[i], want[i])
		}
	}
}
