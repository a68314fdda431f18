//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// gemmPanel6x16AVX2 is the AVX2+FMA micro-kernel, run over a column of
// tiles that share one B panel. For t < tiles it computes
//
//	for i < 6, j < 16:
//		s := sum over p < k of a[t*6*k+p*6+i] * b[p*16+j]   (fused multiply-adds, p ascending)
//		c[(6*t+i)*ldc+j] = s          (flags&1 == 0)
//		c[(6*t+i)*ldc+j] += s         (flags&1 == 1)
//
// and, with flags&2 (gemmPrefetchNext), prefetches the B panel two on
// while it computes the first tile; with flags&4 (gemmPrefetchFar) it
// fetches A 4 KiB ahead rather than 384 bytes; with tiles >= 1, k >= 1,
// a = tiles*6*k floats, b = k*16 floats and c reaching (6*tiles-1)*ldc+16
// floats; the Go caller checks all of it. Looping over the tiles here,
// not in Go, saves a call, a bounds check and the slicing per tile: 5-8%
// of a product with k = 64, whose tiles are short.
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
func gemmPanel6x16AVX2(tiles, k int, a, b, c *float32, ldc int, flags uint)

// gemmKernel6x16AVX2 is one tile of gemmPanel6x16AVX2: the variant's
// micro-kernel.
func gemmKernel6x16AVX2(k int, a, b, c *float32, ldc int, flags uint) {
	gemmPanel6x16AVX2(1, k, a, b, c, ldc, flags)
}

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

// gemmPackB16AVX2 copies a 16-column strip of B into a packed panel:
//
//	for p < k, j < 16: dst[p*16+j] = src[p*ld+j]
//
// with k >= 1, src reaching (k-1)*ld+16 floats and dst k*16 floats.
//
//go:noescape
func gemmPackB16AVX2(k int, src *float32, ld int, dst *float32)

// gemvRows4AVX2 adds four rows of a row-major B, scaled, into y:
//
//	for j < n:
//		t := y[j] (flags&1 == 1) or 0 (flags&1 == 0)
//		for r < 4: t = fma(x[r], b[r*ldb+j], t)
//		y[j] = t
//
// with n >= 0, x = 4 floats, b reaching 3*ldb+n floats and y n floats. A
// one-row product over an unpacked B calls it for each four rows, so B is
// read row by row, sequentially, while y stays in L1.
//
//go:noescape
func gemvRows4AVX2(n int, x, b *float32, ldb int, y *float32, flags uint)

// gemmPackA6AVX2 interleaves six rows of A into a packed panel:
//
//	for p < 8*k8, r < 6: dst[p*6+r] = src[r*lda+p]
//
// with k8 >= 1, src reaching 5*lda+8*k8 floats and dst 48*k8 floats. It
// transposes 6×8 blocks in registers (unpack, shuffle) and stores each
// step's six values as a 16-byte and an 8-byte piece, so it writes
// nothing past the panel.
//
//go:noescape
func gemmPackA6AVX2(k8 int, src *float32, lda int, dst *float32)

// gemmPackA12AVX2 interleaves twelve rows of A into a packed panel (the
// AVX-512 variant's, whose MR is 12):
//
//	for p < 8*k8, r < 12: dst[p*12+r] = src[r*lda+p]
//
// with k8 >= 1, src reaching 11*lda+8*k8 floats and dst 96*k8 floats:
// gemmPackA6AVX2's 6×8 transpose for rows 0-5 and 6-11, stored 48 bytes
// a step. (AVX2 instructions: a zmm transpose would save little on a
// packer that streams A once per column block.)
//
//go:noescape
func gemmPackA12AVX2(k8 int, src *float32, lda int, dst *float32)

// gemmPackB64AVX2 packs four adjacent 16-column strips of B at once:
//
//	for q < 4, p < k, j < 16: dst[q*pstride+p*16+j] = src[p*ld+16*q+j]
//
// with k >= 1, src reaching (k-1)*ld+64 floats, pstride >= 16*k and dst
// reaching 3*pstride+16*k floats. Reading 256 contiguous bytes of each
// row, rather than 64, lets the prefetchers stream B: about 1.7× faster
// than four single-strip calls here.
//
//go:noescape
func gemmPackB64AVX2(k int, src *float32, ld int, dst *float32, pstride int)

// Cache blocking of the AVX2 variant (BenchmarkGemmBlocking re-measures
// it). The B micro-panel, KC×NR = 256×16 floats = 16 KiB, stays in a
// 32-48 KiB L1 next to the 6 KiB A micro-panel it meets; KC = 256 also
// makes each C tile's load and store one in 256 steps of k. The A block,
// MC×KC = 288×256 floats = 288 KiB, sits in L2 (half of Zen 4/5's 1 MiB,
// 56% of this Zen 3's 512 KiB) while B panels stream past it. The B
// block, KC×NC = 256×2048 floats = 2 MiB, lives in L3. Measured here
// (Zen 3, one thread, GFLOP per CPU-second, medians of 21 interleaved
// runs): N=2048 gains 15% from MC = 144 to 288 (fewer passes over the B
// block), N=1024 2%, N=512 loses 3%; MC = 384 and KC = 384 are within
// noise of this choice; KC = 128 and NC = 512 lose 2-5%.
func init() {
	gemmFamily.add(&GemmVariant{
		Name: "avx2", Feature: cpuid.AVX2,
		mr: 6, nr: 16, kc: 256, mc: 288, nc: 2048,
		micro: gemmKernel6x16AVX2, micro4: gemmKernel4x16AVX2, gemv: gemv16AVX2, packB16: gemmPackB16AVX2, gemvRows4: gemvRows4AVX2, packA: gemmPackA6AVX2, packB64: gemmPackB64AVX2,
		microRowA: gemmKernel6x16RowAAVX2, panel: gemmPanel6x16AVX2, panelRowA: gemmPanel6x16RowAAVX2,
		cols: gemmCols6AVX2, zip1: gemmZip6x16AVX2, clamp: true,
	})
}
