//go:build amd64 && !purego

package asm

import (
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// axpyF32AVX2 does y[i] += a·x[i] for i < n with fused multiply-adds, the
// inner step of the direct (depthwise) convolution.
//
//go:noescape
func axpyF32AVX2(y, x *float32, n int, a float32)

// convTaps16S1AVX2 and convTaps16S2AVX2 are the AVX2 convTapsKernels
// (conv_pack.go) for strides 1 and 2. Stride 2 loads 31 floats as four
// vectors (the last one float back, so nothing past the sixteenth cell
// is read) and keeps the even ones with shuffles.
//
//go:noescape
func convTaps16S1AVX2(dst, src *float32, off *int, n int)

//go:noescape
func convTaps16S2AVX2(dst, src *float32, off *int, n int)

// convRows16S1AVX512 and convRows16S2AVX512 are the AVX-512
// convRowsKernels (conv_rows.go) for strides 1 and 2.
//
//go:noescape
func convRows16S1AVX512(dst, src *float32, off *int, n, nseg int, segs convSegs)

//go:noescape
func convRows16S2AVX512(dst, src *float32, off *int, n, nseg int, segs convSegs)

// maxPairs8AVX2 is the AVX2 maxPairsKernel (conv_maxpool.go) for n a
// multiple of 8: two vectors of each row, the rows' max, then the max of
// the even and odd columns (shuffles), each max NaN- and ±0-exact as
// Go's builtin (see MAXEXACT in conv_amd64.s).
//
//go:noescape
func maxPairs8AVX2(y, x0, x1 *float32, n int)

// convPhase12x32AVX512 is the AVX-512 convPhaseKernel (conv_phase.go):
// tiles of up to twelve channel rows by two segments of sixteen
// positions, 24 accumulators, each broadcast A value feeding two FMAs as
// in gemmPanel12x32AVX512; the segments' inputs load straight from the
// input through the step's offset (masked at its edges with masks);
// with phasePairs, rows pair the column phases of channels, stored
// whole; with phaseWhole each row is stored as it is, through the GEMM
// kernels' clamp with gemmRelu or gemmClamp.
//
//go:noescape
func convPhase12x32AVX512(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int, masks *uint64, flags uint)

// convPhase24x16AVX512 is its one-segment twin for panels of 16 or 24
// rows (planes of one segment), 24 accumulators, one FMA a broadcast.
//
//go:noescape
func convPhase24x16AVX512(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int, masks *uint64)

// convT4SumsAVX512 is the AVX-512 convT4SumsKernel (conv_convt4.go):
// eight cells by three channels' sixteen taps at a time, 24
// accumulators, each broadcast input feeding three FMAs.
//
//go:noescape
func convT4SumsAVX512(k int, x, w *float32, ldw int, c *float32)

// convT4PlanesAVX512 is the AVX-512 convT4PlanesKernel: a channel's
// sums transposed in registers (tap by cell), shifted with VALIGND and
// summed into the four output phases, interleaved into the plane.
//
//go:noescape
func convT4PlanesAVX512(n int, p, bias, o *float32)

// convTPackTapsAVX512 is the AVX-512 convTPackTapsKernel: per input
// channel a block of output channels by taps, loaded as the rows of a
// 16×16 tile, transposed in registers, a tap's channels stored masked
// (spread: permuted to every other float first).
//
//go:noescape
func convTPackTapsAVX512(dst, w *float32, c, ldw, n, taps int, off, step *int, spread bool) bool

// padRowsAVX512 is the AVX-512 padRowsKernel: each padded row in
// chunks of sixteen floats, a masked load from the input row and a
// masked store.
//
//go:noescape
func padRowsAVX512(dst, src *float32, rows, w, wp, pl int, masks *uint32, chunks int)

// convPhaseAVX512 runs panels of up to 12 rows on the two-segment
// kernel, of 16 and 24 (stored spread, never paired or whole) on the
// one-segment one.
func convPhaseAVX512(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int, masks *uint64, flags uint) {
	if rows > 12 {
		convPhase24x16AVX512(rows, n, k, a, x, off, bias, o, ldo, tiles, ntiles, masks)
		return
	}
	convPhase12x32AVX512(rows, n, k, a, x, off, bias, o, ldo, tiles, ntiles, masks, flags)
}

func init() {
	avx2 := convKernels{feature: cpuid.AVX2, s1: convTaps16S1AVX2, s2: convTaps16S2AVX2, maxPairs: maxPairsAVX2, direct: convDirectAVX2}
	// The AVX-512 GEMM variant keeps NR = 16 (gemm512_amd64.go), so its
	// patch packers are these, but for the panels that span rows, which
	// opmasks pack (conv_rows_amd64.s). It has no direct kernel: packing
	// and its two-panel GEMM kernel beat the AVX2 direct one by 1.1-1.8×
	// (CPU time on Zen 5: MobileNet's 1×1 convs at 112², 3×3 at 32-64²).
	avx512 := avx2
	avx512.feature = cpuid.AVX512
	avx512.direct = nil
	avx512.rows1, avx512.rows2 = convRows16S1AVX512, convRows16S2AVX512
	avx512.phase = convPhaseAVX512
	avx512.t4sums, avx512.t4planes = convT4SumsAVX512, convT4PlanesAVX512
	avx512.packTaps = convTPackTapsAVX512
	avx512.padRows = padRowsAVX512
	convFamily.add(&avx512, &avx2)
}

// maxPairsAVX2 runs whole groups of eight outputs in assembly, the rest
// through the Go twin.
func maxPairsAVX2(y, x0, x1 *float32, n int) {
	n8 := n &^ 7
	if n8 > 0 {
		maxPairs8AVX2(y, x0, x1, n8)
	}
	if n8 < n {
		maxPairsGo((*float32)(unsafe.Add(unsafe.Pointer(y), 4*n8)),
			(*float32)(unsafe.Add(unsafe.Pointer(x0), 8*n8)), (*float32)(unsafe.Add(unsafe.Pointer(x1), 8*n8)), n-n8)
	}
}
