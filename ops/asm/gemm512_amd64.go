//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// gemmPanel12x16AVX512 is the AVX-512 micro-kernel, run over a column of
// tiles that share one B panel. For t < tiles it computes
//
//	for i < 12, j < 16:
//		s := sum over p < k of a[t*12*k+p*12+i] * b[p*16+j]   (fused multiply-adds, p ascending)
//		c[(12*t+i)*ldc+j] = s          (flags&1 == 0)
//		c[(12*t+i)*ldc+j] += s         (flags&1 == 1)
//
// and, with flags&2 (gemmPrefetchNext), prefetches the B panel two on
// while it computes the first tile; with flags&4 (gemmPrefetchFar) it
// fetches A 4 KiB ahead rather than 768 bytes; with gemmRelu or gemmClamp
// it clamps the sums before storing them (see gemm_variant.go); with
// tiles >= 1, k >= 1, a = tiles*12*k floats, b = k*16 floats and c
// reaching (12*tiles-1)*ldc+16 floats; the Go caller checks all of it.
//
// Why 12×16: one zmm holds a packed B row, so every C row is one
// accumulator and every FMA takes its A value by embedded broadcast
// from the packed panel. Twelve accumulators cover the FMA latency; each
// step issues 12 FMAs against 13 loads, which Zen 4/5 (three or four
// load ports) sustain at two FMAs a cycle. NR stays 16, so the B panels,
// the packers and the convolution's patch packing are the AVX2
// variant's; C rows are one cache line each.
//
//go:noescape
func gemmPanel12x16AVX512(tiles, k int, a, b, c *float32, ldc int, flags uint)

// gemmKernel12x16AVX512 is one tile of gemmPanel12x16AVX512: the
// variant's micro-kernel.
func gemmKernel12x16AVX512(k int, a, b, c *float32, ldc int, flags uint) {
	gemmPanel12x16AVX512(1, k, a, b, c, ldc, flags)
}

// gemmKernel8x16AVX512 and gemmKernel4x16AVX512 compute rows 0-7 and
// 0-3 of gemmKernel12x16AVX512's tile from the same 12-row A panel, with
// the same bits, and write only those rows of C:
//
//	for i < R, j < 16: s := sum over p < k of a[p*12+i] * b[p*16+j]
//	c[i*ldc+j] = s  or  c[i*ldc+j] += s   (R = 8 or 4; flags as the 12-row kernel)
//
// with k >= 1, a = 12*k floats, b = 16*k and c reaching (R-1)*ldc+16. An
// edge panel of M (M mod 12 rows) runs the smallest one that covers it
// instead of the whole 12-row tile: M = 16 is a 12-row and a 4-row tile,
// not two 12-row ones. Eight rows keep eight FMA chains, enough for the
// latency; four rows run at about half the FMA rate, still a third of
// the time of twelve.
//
//go:noescape
func gemmKernel8x16AVX512(k int, a, b, c *float32, ldc int, flags uint)

//go:noescape
func gemmKernel4x16AVX512(k int, a, b, c *float32, ldc int, flags uint)

// gemmPanel12x16RowAAVX512 is gemmPanel12x16AVX512 reading A in place,
// tile t's twelve rows lda floats apart from row 12t, instead of from
// packed panels:
//
//	for t < tiles, i < 12, j < 16: s := sum over p < k of a[(12*t+i)*lda+p] * b[p*16+j]
//	c[(12*t+i)*ldc+j] = s  (flags&1 == 0)   or   c[(12*t+i)*ldc+j] += s  (flags&1 == 1)
//
// with each sum formed exactly as the packed kernel forms it (so the
// same bits), tiles >= 1, k >= 1, a reaching (12*tiles-1)*lda+k floats,
// b k*16 floats and c (12*tiles-1)*ldc+16 floats; the Go caller checks
// all of it. It ignores the prefetch flag. (See gemmPanel6x16RowAAVX2:
// an A that every column panel reads once is not copied first.)
//
//go:noescape
func gemmPanel12x16RowAAVX512(tiles, k int, a *float32, lda int, b, c *float32, ldc int, flags uint)

// gemmKernel12x16RowAAVX512 is one tile of gemmPanel12x16RowAAVX512.
func gemmKernel12x16RowAAVX512(k int, a *float32, lda int, b, c *float32, ldc int, flags uint) {
	gemmPanel12x16RowAAVX512(1, k, a, lda, b, c, ldc, flags)
}

// gemmRows64AVX512 is the AVX-512 fewRowsKernel: four 16-column panels
// (16 accumulators), each step's four B rows loaded once for every row.
//
//go:noescape
func gemmRows64AVX512(rows, k int, a *float32, rs, ps int, b, c *float32, ldc int, flags uint)

func init() {
	// The one-row, B-packing kernels are the AVX2 ones (16 columns are one
	// ymm pair; a GEMV is bound by memory, not by vector width).
	gemmFamily.add(&GemmVariant{
		Name: "avx512", Feature: cpuid.AVX512,
		mr: 12, nr: 16, kc: 256, mc: 288, nc: 2048,
		micro: gemmKernel12x16AVX512, micro8: gemmKernel8x16AVX512, micro4: gemmKernel4x16AVX512, gemv: gemv16AVX2, packB16: gemmPackB16AVX2, gemvRows4: gemvRows4AVX2, packA: gemmPackA12AVX2, packB64: gemmPackB64AVX2,
		microRowA: gemmKernel12x16RowAAVX512, panel: gemmPanel12x16AVX512, panelRowA: gemmPanel12x16RowAAVX512,
		panel2: gemmPanel12x32AVX512, edge2: gemmEdge32AVX512, zip2: gemmZip12x32AVX512, zipEdge2: gemmZipEdge32AVX512,
		cols: gemmCols12AVX512, colsP4: gemmColsPanels4AVX512, colsP8: gemmColsPanels8x1AVX512, prefetchW: prefetchWriteAVX512, prefetchWS: prefetchWriteStridedAVX512, fewRows: gemmRows64AVX512, clamp: true,
	})
}
