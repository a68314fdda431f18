//go:build amd64 && !purego

package asm

// AVX2 reduction primitives (reduce_amd64.s). Each computes what its
// RowKernels field documents; the Go callers check every length.

// sumF32AVX2 returns Σ x[i] for i < n, converting to float64 four at a
// time and summing into four vector accumulators (16 independent lanes).
//
//go:noescape
func sumF32AVX2(x *float32, n int) float64

// sumSqDevF32AVX2 returns Σ (float64(x[i]) - c)² for i < n in float64.
//
//go:noescape
func sumSqDevF32AVX2(x *float32, n int, c float64) float64

// maxF32AVX2 returns max x[i] for i < n (-Inf when n == 0), NaN when any
// x[i] is NaN (tracked separately: VMAXPS alone drops NaNs).
//
//go:noescape
func maxF32AVX2(x *float32, n int) float32

// maxNumF32AVX2 returns the largest non-NaN x[i] for i < n (-Inf when
// there is none): one VMAXPS per eight elements, no NaN tracking.
//
//go:noescape
func maxNumF32AVX2(x *float32, n int) float32

// minF32AVX2 returns min x[i] for i < n (+Inf when n == 0), NaN when any
// x[i] is NaN.
//
//go:noescape
func minF32AVX2(x *float32, n int) float32

// accAddF64AVX2 does acc[i] += float64(x[i]) for i < n.
//
//go:noescape
func accAddF64AVX2(acc *float64, x *float32, n int)

// accMaxF32AVX2 does acc[i] = max(acc[i], x[i]) for i < n, NaN when either
// is NaN.
//
//go:noescape
func accMaxF32AVX2(acc, x *float32, n int)

// accMinF32AVX2 does acc[i] = min(acc[i], x[i]) for i < n, NaN when either
// is NaN.
//
//go:noescape
func accMinF32AVX2(acc, x *float32, n int)
