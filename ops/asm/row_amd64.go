//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// AVX2+FMA row primitives (row_amd64.s); the Go callers check lengths.

// expShiftF32AVX2 sets y[i] = exp(x[i]-m) for i < n unless y is nil, and
// returns Σ exp(x[i]-m) in float64. The exponential is expDiff's algorithm
// eight lanes at a time; tails use masked loads and stores, so nothing
// past y[n-1] is touched.
//
//go:noescape
func expShiftF32AVX2(y, x *float32, n int, m float32) float64

// scaleF32AVX2 does y[i] *= s for i < n.
//
//go:noescape
func scaleF32AVX2(y *float32, n int, s float32)

// expScaleF32AVX2 sets y[i] = exp(x[i]·s - m) for i < n (y not nil) and
// returns their sum in float64: ExpScaleShift's primitive
// (row_expscale_amd64.s, twin expScaleGo).
//
//go:noescape
func expScaleF32AVX2(y, x *float32, n int, s, m float32) float64

// scaleAddMaxF32AVX2 sets y[i] = y[i]·s + add[i] for i < n and returns
// their max, NaN if any is NaN (row_scaleaddmax_amd64.s, twin
// scaleAddMaxGo).
//
//go:noescape
func scaleAddMaxF32AVX2(y, add *float32, n int, s float32) float32

// normF32AVX2 sets, for i < n,
//
//	y[i] = fma(((x[i]-mhi)-mlo)·r, scale[i·sstep], bias[i·bstep])
//
// with sstep and bstep 0 or 1 (0 re-reads the first eight values).
//
//go:noescape
func normF32AVX2(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32)

func init() {
	rowFamily.add(&RowKernels{
		Name: "avx2", Feature: cpuid.AVX2,
		sum: sumF32AVX2, sumSqDev: sumSqDevF32AVX2, max: maxF32AVX2, min: minF32AVX2, maxNum: maxNumF32AVX2,
		accAdd: accAddF64AVX2, accMax: accMaxF32AVX2, accMin: accMinF32AVX2,
		expShift: expShiftF32AVX2, expScale: expScaleF32AVX2, scaleAddMax: scaleAddMaxF32AVX2, scale: scaleF32AVX2, norm: normF32AVX2,
		axpy: axpyF32AVX2, transpose8: transpose8AVX2, repeat: repeatAVX2, repeatWide: repeatWideAVX2, repeatWideMin: 8, lerp2: lerp2AVX2, blend: blendAVX2, blendRows: blendRowsAVX2, blendLerp2: blendLerp2AVX2, addStride2: addStride2AVX2, zipSum16: zipSum16AVX2, blendTapsWin8: blendTapsWin8AVX2,
	})
}
