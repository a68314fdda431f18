package asm

import (
	"math"
	"unsafe"
)

// Pure-Go twins of the row primitives (see RowKernels), always compiled.

// The single-precision exponential shared by the softmax kernels (the
// assembly uses the same constants): k = round(t·log2 e), r = t - k·ln 2
// in two parts, exp(r) ≈ 1 + r + r²·P(r) with Cephes' degree-5 P (about 1
// ulp on |r| <= ln2/2), then scaled by 2^k built in the exponent bits.
const (
	expLog2e = float32(1.44269504088896341)
	expLn2Hi = float32(0.693359375)
	expLn2Lo = float32(-2.12194440e-4)
	expP0    = float32(1.9875691500e-4)
	expP1    = float32(1.3981999507e-3)
	expP2    = float32(8.3334519073e-3)
	expP3    = float32(4.1665795894e-2)
	expP4    = float32(1.6666665459e-1)
	expP5    = float32(5.0000001201e-1)
	// expLo is ln(2^-126): below it the result would be subnormal (and
	// 2^k not representable), so it is flushed to 0. That is at most
	// 2^-126 away from the exact value, and -Inf maps to 0.
	expLo = float32(-87.33654)
)

// expDiff is e^(x-m) for x <= m (or a NaN, which it returns). Softmax
// only ever asks for exp(x - max), so positive exponents need no range
// handling. x - m is rounded to float32, and its rounding error e (Knuth's
// TwoSum) is added back to the reduced argument: the error of a rounded
// x - m would otherwise grow with |x - m| (up to 5e-6 relative at -87).
func expDiff(x, m float32) float32 {
	t := x - m
	bb := t - x
	e := (x - (t - bb)) - (m + bb)
	if t < expLo {
		return 0
	}
	k := float32(math.RoundToEven(float64(t * expLog2e)))
	if k != k {
		return k // NaN in, NaN out
	}
	// Explicit conversions stop the compiler fusing these into FMAs on
	// some targets, so every platform rounds the same way.
	r := t - float32(k*expLn2Hi)
	r -= float32(k * expLn2Lo)
	r += e
	p := expP0
	p = float32(p*r) + expP1
	p = float32(p*r) + expP2
	p = float32(p*r) + expP3
	p = float32(p*r) + expP4
	p = float32(p*r) + expP5
	p = float32(p*float32(r*r)) + r + 1
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}

func expShiftGo(y, x *float32, n int, m float32) float64 {
	xs := f32s(x, n)
	var ys []float32
	if y != nil {
		ys = f32s(y, n)
	}
	var s float64
	for i, v := range xs {
		e := expDiff(v, m)
		if ys != nil {
			ys[i] = e
		}
		s += float64(e)
	}
	return s
}

func scaleGo(y *float32, n int, s float32) {
	ys := f32s(y, n)
	for i := range ys {
		ys[i] *= s
	}
}

func normGo(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32) {
	if n == 0 {
		return
	}
	ys, xs := f32s(y, n), f32s(x, n)
	ss := unsafe.Slice(scale, (n-1)*sstep+1)
	bs := unsafe.Slice(bias, (n-1)*bstep+1)
	for i, v := range xs {
		d := float32((v - mhi) - mlo)
		ys[i] = float32(float32(d*r)*ss[i*sstep]) + bs[i*bstep]
	}
}

func axpyGo(y, x *float32, n int, a float32) {
	ys := f32s(y, n)
	for i, v := range f32s(x, n) {
		ys[i] += float32(a * v)
	}
}
