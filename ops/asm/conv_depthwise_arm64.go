//go:build !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// dwTaps64NEON is the NEON dwTapsKernel (conv_depthwise.go): for each
// block of 64 outputs, sixteen accumulators start at the bias and every
// tap adds its weight (loaded into every lane once) times the 64 inputs
// it reads, one fused multiply-add (VFMLA) a vector:
//
//	for i < 64·blocks: y[i] = bias + Σ_{t < taps} w[t]·x[off[t]+i]   (fused, t ascending)
//
// taps >= 1, blocks >= 1, every off[t]+64·blocks <= len(x)
// (depthwiseKernels.run checks it). The sums are the amd64 kernels' to
// the bit.
//
//go:noescape
func dwTaps64NEON(y, x *float32, off *int, w *float32, taps, blocks int, bias float32)

// dwSplit2NEON deinterleaves rows rows of m floats (both >= 1):
//
//	for r < rows, j < m: (e if j is even, else o)[r·ldd + j/2] = src[r·lds + j]
//
// eight floats at a time through VLD2, the rest a pair at a time.
//
//go:noescape
func dwSplit2NEON(e, o *float32, ldd int, src *float32, lds int, rows, m int)

// dwCopy2NEON copies a rows×cols block (both >= 1) between row strides:
//
//	for r < rows, j < cols: dst[r·ldd+j] = src[r·lds+j]
//
//go:noescape
func dwCopy2NEON(dst *float32, ldd int, src *float32, lds int, rows, cols int)

// dwChanTapsNEON is the NEON dwChanTapsKernel (conv_depthwise_chan.go):
// per four positions, sixteen accumulators (four vectors of four
// channels each) start at the bias and every tap adds its 16 weights
// (loaded once) times each position's 16 inputs, fused (VFMLA):
//
//	for p < 8·blocks, l < 16: y[16p+l] = w[16·taps+l] + Σ_{t < taps} w[16t+l]·x[pos[p]+off[t]+l]   (fused, t ascending)
//
// taps >= 1, blocks >= 1, every pos[p]+off[t]+16 <= len(x)
// (depthwiseKernels.runChan checks it). The sums are the amd64 kernels'
// to the bit.
//
//go:noescape
func dwChanTapsNEON(y, x *float32, pos, off *int, w *float32, taps, blocks int)

// dwChanIn4NEON interleaves 16 rows into vectors at given places, for
// n >= 4:
//
//	for p < n, l < 16: dst[dpos[p]+l] = src[roff[l]+p]
//
// four positions at a time through 4×4 register transposes; every
// dpos[p]+16 <= len(dst), roff[l]+n <= len(src)
// (depthwiseKernels.chanInterleave checks it).
//
//go:noescape
func dwChanIn4NEON(dst *float32, dpos *int, src *float32, roff *int, n int)

// dwChanOut4NEON deinterleaves vectors of 16 into rows, for n >= 4:
//
//	for l < lanes, p < n: dst[l·ldd+p] = src[16p+l]
//
// four positions at a time through 4×4 register transposes; 1 <= lanes
// <= 16, n <= ldd, src holding n rounded up to 16 positions
// (depthwiseKernels.chanDeinterleave checks it).
//
//go:noescape
func dwChanOut4NEON(dst *float32, ldd int, src *float32, n, lanes int)

// dwChanInNEON is the NEON chanIn: dwChanIn4NEON, or the Go twin for
// fewer than four positions.
func dwChanInNEON(dst *float32, dpos *int, src *float32, roff *int, n int) {
	if n < 4 {
		dwChanInGo(dst, dpos, src, roff, n)
		return
	}
	dwChanIn4NEON(dst, dpos, src, roff, n)
}

// dwChanOutNEON is the NEON chanOut: dwChanOut4NEON, or the Go twin for
// fewer than four positions.
func dwChanOutNEON(dst *float32, ldd int, src *float32, n, lanes int) {
	if n < 4 {
		dwChanOutGo(dst, ldd, src, n, lanes)
		return
	}
	dwChanOut4NEON(dst, ldd, src, n, lanes)
}

func init() {
	depthwiseFamily.add(&depthwiseKernels{
		name: "neon", feature: cpuid.NEON, block: 64,
		taps: dwTaps64NEON, split2: dwSplit2NEON, copy2: dwCopy2NEON,
		chanTaps: dwChanTapsNEON, chanIn: dwChanInNEON, chanOut: dwChanOutNEON,
	})
}
