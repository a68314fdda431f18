//go:build !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// NEON row primitives (row_arm64.s); the Go callers check lengths.

// expShiftF32NEON sets y[i] = exp(x[i]-m) for i < n unless y is nil, and
// returns Σ exp(x[i]-m) in float64. Each lane runs expDiff's steps in
// expDiff's order without fusing, so y matches the Go twin bit for bit;
// the sum is taken in another order. The last 1-3 elements go through
// the vector code with the other lanes set to -Inf (whose exp is 0) and
// are stored lane by lane, so nothing past y[n-1] is touched.
//
//go:noescape
func expShiftF32NEON(y, x *float32, n int, m float32) float64

// scaleF32NEON does y[i] *= s for i < n.
//
//go:noescape
func scaleF32NEON(y *float32, n int, s float32)

// normF32NEON sets, for i < n,
//
//	y[i] = ((x[i]-mhi)-mlo)·r·scale[i·sstep] + bias[i·bstep]
//
// rounding each step as normGo does. sstep and bstep are 0 or 1 (0
// re-reads the first four values).
//
//go:noescape
func normF32NEON(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32)

// axpyF32NEON does y[i] += a·x[i] for i < n with fused multiply-adds, the
// inner step of the direct (depthwise) convolution.
//
//go:noescape
func axpyF32NEON(y, x *float32, n int, a float32)

func init() {
	rowFamily.add(&RowKernels{
		Name: "neon", Feature: cpuid.NEON,
		sum: sumF32NEON, sumSqDev: sumSqDevF32NEON, max: maxF32NEON, min: minF32NEON,
		accAdd: accAddF64NEON, accMax: accMaxF32NEON, accMin: accMinF32NEON,
		expShift: expShiftF32NEON, scale: scaleF32NEON, norm: normF32NEON,
		axpy: axpyF32NEON, transpose8: transpose8NEON, repeat: repeatNEON, lerp2: lerp2NEON, blend: blendNEON, blendRows: blendRowsWith(blendNEON),
	})
}
