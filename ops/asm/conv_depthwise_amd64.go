//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// dwTaps128AVX512 is the AVX-512 dwTapsKernel (conv_depthwise.go): for
// each block of 128 outputs, eight zmm accumulators start at the bias and
// every tap adds its weight (broadcast once) times the 128 inputs it
// reads, one fused multiply-add a vector with the input as its memory
// operand:
//
//	for i < 128·blocks: y[i] = bias + Σ_{t < taps} w[t]·x[off[t]+i]   (fused, t ascending)
//
// taps >= 1, blocks >= 1, every off[t]+128·blocks <= len(x)
// (depthwiseKernels.run checks it).
//
//go:noescape
func dwTaps128AVX512(y, x *float32, off *int, w *float32, taps, blocks int, bias float32)

// dwRows3x3AVX512 is the AVX-512 dwRows3Kernel (conv_depthwise.go): a
// 3×3 stride-1 convolution four output rows at a time, the rows wq
// floats apart in x and y, sixteen accumulators (four rows by 64
// columns), each input vector loaded once for the up to three rows whose
// taps read it:
//
//	for g < groups, r < 4, c < 16·vecs:
//	    y[(4g+r)·wq + c] = bias + Σ_{ky,kx < 3} w[3ky+kx]·x[(4g+r+ky)·wq + kx + c]   (fused, 3ky+kx ascending)
//
// the sums of dwTaps128AVX512 over the taps ky·wq + kx, to the bit. It
// reads x[0 : (4·groups+1)·wq + 16·vecs + 2] and writes y[0 : (4·groups-1)·wq
// + 16·vecs] (depthwiseKernels.runRows3 checks both).
//
//go:noescape
func dwRows3x3AVX512(y, x, w *float32, wq, groups, vecs int, bias float32)

// dwTaps64AVX2 is dwTaps128AVX512 with eight ymm accumulators: blocks of
// 64 outputs, the same sums to the bit.
//
//go:noescape
func dwTaps64AVX2(y, x *float32, off *int, w *float32, taps, blocks int, bias float32)

// dwSplit2AVX512 deinterleaves rows rows of m floats (both >= 1):
//
//	for r < rows, j < m: (e if j is even, else o)[r·ldd + j/2] = src[r·lds + j]
//
// 32 floats at a time through two two-source permutes (VPERMT2PS), the
// last m mod 32 under opmasks.
//
//go:noescape
func dwSplit2AVX512(e, o *float32, ldd int, src *float32, lds int, rows, m int)

// dwSplit2AVX2 is dwSplit2AVX512 with in-lane shuffles (VSHUFPS) and a
// cross-lane fix-up (VPERMPD), 16 floats at a time, the rest a pair at a
// time.
//
//go:noescape
func dwSplit2AVX2(e, o *float32, ldd int, src *float32, lds int, rows, m int)

// dwCopyClampAVX512 copies a rows×cols block (both >= 1) between row
// strides, whole zmm vectors then one masked by K1, through the panel
// kernels' epilogue clamp (flags gemmRelu, or gemmClamp with the upper
// bound in the upper half; neither: a plain copy):
//
//	for r < rows, j < cols: dst[r·ldd+j] = clamp(src[r·lds+j])
//
//go:noescape
func dwCopyClampAVX512(dst *float32, ldd int, src *float32, lds int, rows, cols int, flags uint)

// dwCopy2AVX512 is dwCopyClampAVX512's plain copy.
func dwCopy2AVX512(dst *float32, ldd int, src *float32, lds int, rows, cols int) {
	dwCopyClampAVX512(dst, ldd, src, lds, rows, cols, 0)
}

// dwCopy2AVX2 is dwCopy2AVX512 with ymm vectors and VMASKMOVPS.
//
//go:noescape
func dwCopy2AVX2(dst *float32, ldd int, src *float32, lds int, rows, cols int)

// dwChanTapsAVX512 is the AVX-512 dwChanTapsKernel
// (conv_depthwise_chan.go): per block of eight positions, eight zmm
// accumulators start at the bias vector and every tap adds its weight
// vector (loaded once) times each position's input vector, one fused
// multiply-add with the input as its memory operand:
//
//	for p < 8·blocks, l < 16: y[16p+l] = w[16·taps+l] + Σ_{t < taps} w[16t+l]·x[pos[p]+off[t]+l]   (fused, t ascending)
//
// taps >= 1, blocks >= 1, every pos[p]+off[t]+16 <= len(x)
// (depthwiseKernels.runChan checks it). The sums are dwTaps128AVX512's
// to the bit.
//
//go:noescape
func dwChanTapsAVX512(y, x *float32, pos, off *int, w *float32, taps, blocks int)

// dwChanTapsAVX2 is dwChanTapsAVX512 with ymm vectors, channels 0-7 of a
// block then 8-15: the same sums to the bit.
//
//go:noescape
func dwChanTapsAVX2(y, x *float32, pos, off *int, w *float32, taps, blocks int)

// dwChanInAVX512 interleaves 16 rows into vectors at given places:
//
//	for p < n, l < 16: dst[dpos[p]+l] = src[roff[l]+p]
//
// 16 positions at a time through a 16×16 register transpose, the last
// n mod 16 under an opmask; n >= 1, every dpos[p]+16 <= len(dst),
// roff[l]+n <= len(src) (depthwiseKernels.chanInterleave checks it).
//
//go:noescape
func dwChanInAVX512(dst *float32, dpos *int, src *float32, roff *int, n int)

// dwChanOutAVX512 deinterleaves vectors of 16 into rows:
//
//	for l < lanes, p < n: dst[l·ldd+p] = src[16p+l]
//
// 16 positions at a time through a 16×16 register transpose, the last
// n mod 16 under an opmask; 1 <= lanes <= 16, 1 <= n <= ldd, src holding
// n rounded up to 16 positions (depthwiseKernels.chanDeinterleave checks
// it).
//
//go:noescape
func dwChanOutAVX512(dst *float32, ldd int, src *float32, n, lanes int)

// dwChanIn8AVX2 is dwChanInAVX512 with ymm vectors (8×8 register
// transposes) for n >= 8.
//
//go:noescape
func dwChanIn8AVX2(dst *float32, dpos *int, src *float32, roff *int, n int)

// dwChanOut8AVX2 is dwChanOutAVX512 with ymm vectors (8×8 register
// transposes) for n >= 8.
//
//go:noescape
func dwChanOut8AVX2(dst *float32, ldd int, src *float32, n, lanes int)

// dwChanInAVX2 is the AVX2 chanIn: dwChanIn8AVX2, or the Go twin for
// fewer than eight positions.
func dwChanInAVX2(dst *float32, dpos *int, src *float32, roff *int, n int) {
	if n < 8 {
		dwChanInGo(dst, dpos, src, roff, n)
		return
	}
	dwChanIn8AVX2(dst, dpos, src, roff, n)
}

// dwChanOutAVX2 is the AVX2 chanOut: dwChanOut8AVX2, or the Go twin for
// fewer than eight positions.
func dwChanOutAVX2(dst *float32, ldd int, src *float32, n, lanes int) {
	if n < 8 {
		dwChanOutGo(dst, ldd, src, n, lanes)
		return
	}
	dwChanOut8AVX2(dst, ldd, src, n, lanes)
}

func init() {
	depthwiseFamily.add(
		&depthwiseKernels{
			name: "avx512", feature: cpuid.AVX512, block: 128, taps: dwTaps128AVX512,
			rows3:  dwRows3x3AVX512,
			split2: dwSplit2AVX512,
			copy2:  dwCopy2AVX512, copyClamp: dwCopyClampAVX512,
			chanTaps: dwChanTapsAVX512, chanIn: dwChanInAVX512, chanOut: dwChanOutAVX512,
			prefetchW: prefetchWriteAVX512,
		},
		&depthwiseKernels{
			name: "avx2", feature: cpuid.AVX2, block: 64, taps: dwTaps64AVX2,
			split2:   dwSplit2AVX2,
			copy2:    dwCopy2AVX2,
			chanTaps: dwChanTapsAVX2, chanIn: dwChanInAVX2, chanOut: dwChanOutAVX2,
		})
}
