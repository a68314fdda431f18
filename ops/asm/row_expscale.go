package asm

import "math"

// ExpScaleShift is the exponential of the attention kernel's softmax:
// the throughput-first sibling of ExpShift. It sets dst[i] = exp(x[i]·s -
// m), with x[i]·s rounded to float32 first, and returns their sum
// (accumulated in float64 from float32 partials of up to 8 weights, so
// within 1.8e-7 of the exact sum, relative); m is at least every x[i]·s (so the largest weight is exactly
// 1 when m is that product), and a NaN gives NaN. Unlike ExpShift it does
// not recover the rounding error of x[i]·s - m, so a weight's relative
// error grows to |x[i]·s - m|·2^-24 (5e-6 near e^-87), which is at most
// 2.2e-8 absolute: nothing next to the largest weight, 1. Results below
// 2^-126 may be flushed to 0. dst may be x.
func (k *RowKernels) ExpScaleShift(dst, x []float32, s, m float32) float64 {
	n := rowDst("ExpScaleShift", dst, x)
	if n == 0 {
		return 0
	}
	if k.expScale == nil { // variants without the fused primitive
		copy(dst, x)
		k.scale(&dst[0], n, s)
		return k.expShift(&dst[0], &dst[0], n, m)
	}
	return k.expScale(&dst[0], &x[0], n, s, m)
}

// expShifter is the 2^k scaling of the fused exponential: z = t·log2 e +
// expShifter holds k + 127 in its low mantissa bits.
const expShifter = float32(1.5*(1<<23) + 127)

// expScaleGo is the twin of expScaleF32AVX2 (its steps in the same
// order; the assembly fuses some multiply-adds, so the last bit may
// differ).
func expScaleGo(y, x *float32, n int, s, m float32) float64 {
	ys, xs := f32s(y, n), f32s(x, n)
	var sum float64
	for i, v := range xs {
		e := expScaled(float32(v*s) - m)
		ys[i] = e
		sum += float64(e)
	}
	return sum
}

// expScaled is e^t for t <= 0 by the fused kernel's steps: z = t·log2 e +
// expShifter, k = z - expShifter, r = t - k·ln2 in two parts, q = r +
// r²·P(r), e^t = q·2^k + 2^k with 2^k = z << 23; 0 when k < -126. A NaN
// flows through to the result.
func expScaled(t float32) float32 {
	z := float32(t*expLog2e) + expShifter
	kf := z - expShifter
	if kf < -126 {
		return 0
	}
	r := t - float32(kf*expLn2Hi)
	r -= float32(kf * expLn2Lo)
	p := expP0
	p = float32(p*r) + expP1
	p = float32(p*r) + expP2
	p = float32(p*r) + expP3
	p = float32(p*r) + expP4
	p = float32(p*r) + expP5
	q := float32(p*float32(r*r)) + r
	sc := math.Float32frombits(math.Float32bits(z) << 23)
	return float32(q*sc) + sc
}
