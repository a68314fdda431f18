//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpu"

// gemmKernel6x16AVX2 is the AVX2+FMA micro-kernel. It computes
//
//	for i < 6, j < 16:
//		t := sum over p < k of a[p*6+i] * b[p*16+j]   (fused multiply-adds, p ascending)
//		c[i*ldc+j] = t          (flags&1 == 0)
//		c[i*ldc+j] += t         (flags&1 == 1)
//
// with k >= 1, a = k*6 floats, b = k*16 floats and c reaching
// 5*ldc+16 floats; the Go caller checks all of it.
//
// Why 6×16: the tile's 12 accumulators (two ymm per row), two B registers
// and two broadcast registers use all 16 ymm registers. One step of k
// issues 12 FMAs against 8 loads (two B vectors, six broadcasts), so on
// cores with two FMA pipes and two or three load ports (Haswell to Zen 4)
// the FMAs are the bottleneck, as they should be, and 12 independent
// chains cover the FMA latency (4 cycles × 2 pipes = 8 needed). 16 columns
// are one 64-byte line per packed B row and per C row. A 4×24 tile has the
// same register budget but splits lines and wastes more on narrow N.
//
//go:noescape
func gemmKernel6x16AVX2(k int, a, b, c *float32, ldc int, flags uint)

// gemv16AVX2 is the AVX2+FMA one-row kernel. It computes
//
//	for j < 16:
//		t := sum over p < k of x[p] * b[p*ldb+j]
//		y[j] = t   (flags&1 == 0)   or   y[j] += t   (flags&1 == 1)
//
// with k >= 1, x = k floats, b reaching (k-1)*ldb+16 floats and y = 16
// floats. It runs four rows of b at a time into separate sums (eight
// independent FMA chains), added at the end.
//
//go:noescape
func gemv16AVX2(k int, x, b *float32, ldb int, y *float32, flags uint)

func init() {
	gemmAsm = append(gemmAsm, &GemmVariant{
		Name: "avx2", Feature: cpu.AVX2,
		mr: 6, nr: 16, kc: 256, mc: 144, nc: 2048,
		micro: gemmKernel6x16AVX2, gemv: gemv16AVX2,
	})
}
