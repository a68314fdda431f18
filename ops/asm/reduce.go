package asm

import "unsafe"

// Safe entry points of the reduction primitives. Lengths are checked here,
// in Go, before any assembly runs; a mismatch is a programming error in
// the caller and panics, as a bad index would.

// p32 is the address of a slice's first element (nil or dangling for an
// empty slice, which the primitives never dereference).
func p32(x []float32) *float32 { return unsafe.SliceData(x) }

// sameLen panics unless a and b have the same length.
func sameLen(what string, a, b int) {
	if a != b {
		panic("asm: " + what + ": slices differ in length")
	}
}

// Sum returns Σ x, accumulated in float64.
func (k *RowKernels) Sum(x []float32) float64 { return k.sum(p32(x), len(x)) }

// SumSqDev returns Σ (x[i]-c)², accumulated in float64.
func (k *RowKernels) SumSqDev(x []float32, c float64) float64 {
	return k.sumSqDev(p32(x), len(x), c)
}

// Max returns the largest element (-Inf for an empty x), NaN if any
// element is NaN.
func (k *RowKernels) Max(x []float32) float32 { return k.max(p32(x), len(x)) }

// MaxNum is Max for a caller that does not need a NaN to win: the
// largest element where x holds no NaN (-Inf for an empty x; a zero
// maximum may come back as -0 or +0); where it does, the largest of the
// others or NaN, as the variant finds cheapest. The AVX2 kernel takes one
// compare per eight elements where Max takes about five (Go's ±0 order
// and NaN tracking): the attention kernel's softmax, whose NaN scores
// make their rows NaN through the exponential anyway, finds each score
// row's max with it.
func (k *RowKernels) MaxNum(x []float32) float32 {
	if k.maxNum == nil {
		return k.Max(x)
	}
	return k.maxNum(p32(x), len(x))
}

// Min returns the smallest element (+Inf for an empty x), NaN if any
// element is NaN.
func (k *RowKernels) Min(x []float32) float32 { return k.min(p32(x), len(x)) }

// AccAdd does acc[i] += x[i] in float64; the slices must have the same
// length.
func (k *RowKernels) AccAdd(acc []float64, x []float32) {
	sameLen("AccAdd", len(acc), len(x))
	k.accAdd(unsafe.SliceData(acc), p32(x), len(x))
}

// AccMax does acc[i] = max(acc[i], x[i]), NaN when either is NaN; the
// slices must have the same length.
func (k *RowKernels) AccMax(acc, x []float32) {
	sameLen("AccMax", len(acc), len(x))
	k.accMax(p32(acc), p32(x), len(x))
}

// AccMin does acc[i] = min(acc[i], x[i]), NaN when either is NaN; the
// slices must have the same length.
func (k *RowKernels) AccMin(acc, x []float32) {
	sameLen("AccMin", len(acc), len(x))
	k.accMin(p32(acc), p32(x), len(x))
}
