//go:build !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// gemmKernel6x16NEON is the NEON micro-kernel. It computes
//
//	for i < 6, j < 16:
//		t := sum over p < k of a[p*6+i] * b[p*16+j]   (fused multiply-adds, p ascending)
//		c[i*ldc+j] = t          (flags&1 == 0)
//		c[i*ldc+j] += t         (flags&1 == 1)
//
// with k >= 1, a = k*6 floats, b = k*16 floats and c reaching
// 5*ldc+16 floats; the Go caller checks all of it. Each element's sum is
// the same chain of fused multiply-adds as the Go twin's (which the arm64
// compiler fuses) and the AVX2 kernel's, so all three agree bit for bit.
//
// Why 6×16 here too: 24 accumulators (six rows of four q registers), four
// B registers and three holding two steps of A (12 floats, used by
// element) take 31 of the 32 vector registers. One step issues 24 FMLAs
// against 5.5 loads, so the FMA pipes, not the load ports, are the bound,
// and 24 independent chains cover the FMLA latency (4 cycles × 2-4 pipes
// on Neoverse and Apple cores). The tile also packs exactly as the AVX2
// and Go variants do.
//
//go:noescape
func gemmKernel6x16NEON(k int, a, b, c *float32, ldc int, flags uint)

// gemv16NEON is the NEON one-row kernel. It computes
//
//	for j < 16:
//		t := sum over p < k of x[p] * b[p*ldb+j]
//		y[j] = t   (flags&1 == 0)   or   y[j] += t   (flags&1 == 1)
//
// with k >= 1, x = k floats, b reaching (k-1)*ldb+16 floats and y = 16
// floats. Like gemv16AVX2 it runs four rows at a time into four partial
// sums (16 independent FMLA chains), the last k%4 rows into the first,
// and folds them as (0+1)+(2+3), so the two agree bit for bit (the Go
// twin, one chain, rounds differently within the tolerance).
//
//go:noescape
func gemv16NEON(k int, x, b *float32, ldb int, y *float32, flags uint)

// gemmPackB16NEON copies a 16-column strip of B into a packed panel:
//
//	for p < k, j < 16: dst[p*16+j] = src[p*ld+j]
//
// with k >= 1, src reaching (k-1)*ld+16 floats and dst k*16 floats.
//
//go:noescape
func gemmPackB16NEON(k int, src *float32, ld int, dst *float32)

// gemvRows4NEON adds four rows of a row-major B, scaled, into y:
//
//	for j < n:
//		t := y[j] (flags&1 == 1) or 0 (flags&1 == 0)
//		for r < 4: t = fma(x[r], b[r*ldb+j], t)
//		y[j] = t
//
// with n >= 0, x = 4 floats, b reaching 3*ldb+n floats and y n floats;
// the same chain per column as the Go twin.
//
//go:noescape
func gemvRows4NEON(n int, x, b *float32, ldb int, y *float32, flags uint)

// gemmPackA6NEON interleaves six rows of A into a packed panel:
//
//	for p < 8*k8, r < 6: dst[p*6+r] = src[r*lda+p]
//
// with k8 >= 1, src reaching 5*lda+8*k8 floats and dst 48*k8 floats. It
// transposes 6×8 blocks in registers (TRN1/TRN2/ZIP1/ZIP2) and writes
// each group's 192 bytes with whole-vector stores, nothing past them.
//
//go:noescape
func gemmPackA6NEON(k8 int, src *float32, lda int, dst *float32)

// gemmPackB64NEON packs four adjacent 16-column strips of B at once:
//
//	for q < 4, p < k, j < 16: dst[q*pstride+p*16+j] = src[p*ld+16*q+j]
//
// with k >= 1, src reaching (k-1)*ld+64 floats, pstride >= 16*k and dst
// reaching 3*pstride+16*k floats; it reads each row's 256 bytes in order.
//
//go:noescape
func gemmPackB64NEON(k int, src *float32, ld int, dst *float32, pstride int)

// The NEON variant keeps the AVX2 variant's cache blocking: its sizes suit
// the common arm64 caches as well (a 16 KiB B micro-panel in a 64-128 KiB
// L1, the 288 KiB A block in a 1 MiB or larger L2). They are not yet
// measured on arm64 hardware; BenchmarkGemmBlocking re-measures them.
func init() {
	gemmFamily.add(&GemmVariant{
		Name: "neon", Feature: cpuid.NEON,
		mr: 6, nr: 16, kc: 256, mc: 288, nc: 2048,
		micro: gemmKernel6x16NEON, gemv: gemv16NEON, packB16: gemmPackB16NEON, gemvRows4: gemvRows4NEON, packA: gemmPackA6NEON, packB64: gemmPackB64NEON,
	})
}
