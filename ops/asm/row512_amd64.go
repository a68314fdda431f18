//go:build amd64 && !purego

package asm

import (
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// AVX-512 (F/BW/DQ/VL) row primitives: row512_amd64.s, reduce512_amd64.s,
// row512_exp_amd64.s and transpose512_amd64.s. Each computes what its
// RowKernels field documents, sixteen lanes at a time; tails run under an
// opmask (masked loads and stores, with fault suppression), so nothing
// outside x[0:n] is read and nothing outside y[0:n] is written. The Go
// callers check every length.
//
// Where a kernel gives the same bits as another implementation it says
// so; the tests (row512_test.go) hold it to that.

// sumF32AVX512 returns Σ x[i] for i < n in float64: eight accumulators of
// eight float64 lanes (64 independent partial sums), folded pairwise.
//
//go:noescape
func sumF32AVX512(x *float32, n int) float64

// sumSqDevF32AVX512 returns Σ (float64(x[i]) - c)² for i < n in float64,
// with fused multiply-adds into eight accumulators of eight lanes.
//
//go:noescape
func sumSqDevF32AVX512(x *float32, n int, c float64) float64

// maxF32AVX512 returns max x[i] for i < n (-Inf when n == 0): Go's max,
// -0 below +0 and NaN when any x[i] is NaN, in one VRANGEPS per sixteen
// elements (AVX512DQ's range operation orders -0 below +0 and returns a
// NaN operand), so the result has the twin's bits, NaN payloads aside.
//
//go:noescape
func maxF32AVX512(x *float32, n int) float32

// minF32AVX512 returns min x[i] for i < n (+Inf when n == 0), as
// maxF32AVX512.
//
//go:noescape
func minF32AVX512(x *float32, n int) float32

// maxNumF32AVX512 returns the largest non-NaN x[i] for i < n (-Inf when
// there is none): one VMAXPS per sixteen elements, a NaN element passed
// over, the sign of a zero maximum unspecified.
//
//go:noescape
func maxNumF32AVX512(x *float32, n int) float32

// accAddF64AVX512 does acc[i] += float64(x[i]) for i < n (one rounding
// each: the twin's bits).
//
//go:noescape
func accAddF64AVX512(acc *float64, x *float32, n int)

// accMaxF32AVX512 does acc[i] = max(acc[i], x[i]) for i < n with Go's
// max (VRANGEPS): the twin's bits, NaN payloads aside.
//
//go:noescape
func accMaxF32AVX512(acc, x *float32, n int)

// accMinF32AVX512 does acc[i] = min(acc[i], x[i]) for i < n with Go's
// min.
//
//go:noescape
func accMinF32AVX512(acc, x *float32, n int)

// expShiftF32AVX512 sets y[i] = exp(x[i]-m) for i < n unless y is nil,
// and returns Σ exp(x[i]-m) in float64: expShiftF32AVX2's steps (expDiff's
// algorithm with the same fused multiply-adds), so each y[i] has the AVX2
// kernel's bits; every weight is widened and summed in float64 as there,
// in another order.
//
//go:noescape
func expShiftF32AVX512(y, x *float32, n int, m float32) float64

// expScaleF32AVX512 sets y[i] = exp(x[i]·s - m) for i < n (y not nil) and
// returns their sum in float64: expScaleF32AVX2's steps, so each y[i] has
// its bits. The sum keeps ExpScaleShift's bound: float32 partials of at
// most eight weights, three roundings deep (four vectors added pairwise,
// then the two halves of the result), widened into float64.
//
//go:noescape
func expScaleF32AVX512(y, x *float32, n int, s, m float32) float64

// scaleAddMaxF32AVX512 sets y[i] = y[i]·s + add[i] for i < n (two
// roundings, as the twin) and returns their max with Go's max (VRANGEPS):
// NaN if any is NaN, -Inf for n = 0, the twin's bits.
//
//go:noescape
func scaleAddMaxF32AVX512(y, add *float32, n int, s float32) float32

// scaleF32AVX512 does y[i] *= s for i < n.
//
//go:noescape
func scaleF32AVX512(y *float32, n int, s float32)

// normF32AVX512 sets, for i < n,
//
//	y[i] = fma(((x[i]-mhi)-mlo)·r, scale[i·sstep], bias[i·bstep])
//
// with sstep and bstep 0 or 1: normF32AVX2's steps and bits. A step of 0
// reads only scale[0] (bias[0]), broadcast to sixteen lanes on the stack.
//
//go:noescape
func normF32AVX512(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32)

// axpyF32AVX512 does y[i] = fma(a, x[i], y[i]) for i < n: axpyF32AVX2's
// bits.
//
//go:noescape
func axpyF32AVX512(y, x *float32, n int, a float32)

// transpose16AVX512 transposes a rows×cols block of 32-bit words (rows and
// cols multiples of 16):
//
//	dst[j·ldd+i] = src[i·lds+j]   for i < rows, j < cols
//
// one 16×16 tile at a time: sixteen zmm rows, a 4×4 transpose within
// each 128-bit lane (unpack, shuffle), then of the 128-bit lanes across
// registers (VSHUFF32X4), leaving each register one 16-word dst row.
//
//go:noescape
func transpose16AVX512(dst *uint32, ldd int, src *uint32, lds int, rows, cols int)

// transpose8AVX512 is the transpose8 primitive: the 16×16 kernel on the
// largest block whose sides are multiples of 16, the AVX2 8×8 kernel on
// the strips left (at most eight rows and eight columns wide).
func transpose8AVX512(dst *uint32, ldd int, src *uint32, lds int, rows, cols int) {
	r16, c16 := rows&^15, cols&^15
	if r16 > 0 && c16 > 0 {
		transpose16AVX512(dst, ldd, src, lds, r16, c16)
	}
	if c16 < cols && rows > 0 { // the last eight columns, every row
		transpose8AVX2(addU32(dst, c16*ldd), ldd, addU32(src, c16), lds, rows, cols-c16)
	}
	if r16 < rows && c16 > 0 { // the last eight rows, the first c16 columns
		transpose8AVX2(addU32(dst, r16), ldd, addU32(src, r16*lds), lds, rows-r16, c16)
	}
}

// addU32 is &p[i] for a word pointer.
func addU32(p *uint32, i int) *uint32 { return (*uint32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }

func init() {
	rowFamily.add(&RowKernels{
		Name: "avx512", Feature: cpuid.AVX512,
		sum: sumF32AVX512, sumSqDev: sumSqDevF32AVX512, max: maxF32AVX512, min: minF32AVX512, maxNum: maxNumF32AVX512,
		accAdd: accAddF64AVX512, accMax: accMaxF32AVX512, accMin: accMinF32AVX512,
		expShift: expShiftF32AVX512, expScale: expScaleF32AVX512, scaleAddMax: scaleAddMaxF32AVX512, scale: scaleF32AVX512, norm: normF32AVX512,
		axpy: axpyF32AVX512, transpose8: transpose8AVX512, repeat: repeatAVX512, repeatWide: repeatWideAVX512, repeatWideMin: 16, lerp2: lerp2AVX512, blend: blendAVX512, lerpTaps: lerpTapsPermAVX512, lerpTapsRows: lerpTapsRows16AVX512, zip2Add: zip2AddAVX512, zipSum: zipSumAVX512, blendRows: blendRowsAVX512, blendLerp2: blendLerp2AVX512, addStride2: addStride2AVX512, blendTaps: blendTapsAVX512, blendTapsWin: blendTapsWinAVX512,
	})
}
