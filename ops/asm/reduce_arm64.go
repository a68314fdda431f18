//go:build !purego

package asm

// NEON reduction primitives (reduce_arm64.s). Each computes what its
// RowKernels field documents; the Go callers check every length.

// sumF32NEON returns Σ x[i] for i < n, widening four at a time to float64
// and summing into eight two-lane accumulators (16 independent lanes).
//
//go:noescape
func sumF32NEON(x *float32, n int) float64

// sumSqDevF32NEON returns Σ (float64(x[i]) - c)² for i < n in float64,
// with fused multiply-adds into the same sixteen lanes as sumF32NEON.
//
//go:noescape
func sumSqDevF32NEON(x *float32, n int, c float64) float64

// maxF32NEON returns max x[i] for i < n (-Inf when n == 0), NaN when any
// x[i] is NaN (FMAX propagates NaNs, unlike VMAXPS).
//
//go:noescape
func maxF32NEON(x *float32, n int) float32

// minF32NEON returns min x[i] for i < n (+Inf when n == 0), NaN when any
// x[i] is NaN.
//
//go:noescape
func minF32NEON(x *float32, n int) float32

// accAddF64NEON does acc[i] += float64(x[i]) for i < n.
//
//go:noescape
func accAddF64NEON(acc *float64, x *float32, n int)

// accMaxF32NEON does acc[i] = max(acc[i], x[i]) for i < n, NaN when either
// is NaN.
//
//go:noescape
func accMaxF32NEON(acc, x *float32, n int)

// accMinF32NEON does acc[i] = min(acc[i], x[i]) for i < n, NaN when either
// is NaN.
//
//go:noescape
func accMinF32NEON(acc, x *float32, n int)
