package asm

import (
	"math"
	"unsafe"
)

// Row kernels built from the primitives: each runs a few passes over one
// row, which for the usual widths (hundreds to a few thousand floats)
// stays in L1 between passes. Sums of many terms (the softmax
// denominator, mean and variance) accumulate in float64 so the result
// stays within a few float32 ulps of a float64 reference at any width;
// elementwise steps run in float32.

// normOnes and normZeros stand in for an absent scale or bias: the norm
// primitive reads them with step 0. The zeros are -0, the additive
// identity of IEEE arithmetic: y + (+0) would turn a -0 result into +0,
// and Div by it would then give +Inf where the reference gives -Inf.
var (
	normOnes  = [8]float32{1, 1, 1, 1, 1, 1, 1, 1}
	normZeros = func() (z [8]float32) {
		for i := range z {
			z[i] = float32(math.Copysign(0, -1))
		}
		return z
	}()
)

// overlap32 reports whether two slices share memory.
func overlap32(x, y []float32) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	x0, y0 := uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&y[0]))
	return x0 < y0+uintptr(4*len(y)) && y0 < x0+uintptr(4*len(x))
}

// rowDst checks that dst has x's length and is either x itself or
// disjoint from it (the kernels read x again after writing dst).
func rowDst(what string, dst, x []float32) int {
	sameLen(what, len(dst), len(x))
	n := len(x)
	if n > 0 && &dst[0] != &x[0] && overlap32(dst, x) {
		panic("asm: " + what + ": dst partly overlaps x")
	}
	return n
}

// Softmax sets dst = exp(x - max x) / Σ exp(x - max x). A NaN anywhere,
// a +Inf, or a row of only -Inf makes the whole row NaN, as in the float64
// reference. dst may be x.
func (k *RowKernels) Softmax(dst, x []float32) {
	n := rowDst("Softmax", dst, x)
	if n == 0 {
		return
	}
	m := k.max(&x[0], n)
	s := k.expShift(&dst[0], &x[0], n, m)
	k.scale(&dst[0], n, float32(1/s))
}

// ExpShift sets dst[i] = exp(x[i] - m) and returns their sum, in float64;
// m is at least every x[i] (a row's running max, as in a softmax), and a
// NaN in x or m gives NaN. dst may be x.
func (k *RowKernels) ExpShift(dst, x []float32, m float32) float64 {
	n := rowDst("ExpShift", dst, x)
	if n == 0 {
		return 0
	}
	return k.expShift(&dst[0], &x[0], n, m)
}

// LogSoftmax sets dst = x - max x - log Σ exp(x - max x). The shift is
// subtracted as two float32 parts, max x then log Σ, so neither swallows
// the other however large the max is. dst may be x.
func (k *RowKernels) LogSoftmax(dst, x []float32) {
	n := rowDst("LogSoftmax", dst, x)
	if n == 0 {
		return
	}
	m := k.max(&x[0], n)
	s := k.expShift(nil, &x[0], n, m)
	// The max and log Σ stay separate parts: added first (even in
	// float64), a huge max would swallow log Σ entirely.
	k.norm(&dst[0], &x[0], &normOnes[0], &normZeros[0], n, 0, 0, m, float32(math.Log(s)), 1)
}

// affineArgs returns the scale and bias pointers and steps for norm: the
// given slice with step 1, or the ones or zeros stand-in with step 0.
func affineArgs(n int, scale, bias []float32) (s, b *float32, ss, bs int) {
	s, b = &normOnes[0], &normZeros[0]
	if scale != nil {
		sameLen("norm scale", len(scale), n)
		s, ss = &scale[0], 1
	}
	if bias != nil {
		sameLen("norm bias", len(bias), n)
		b, bs = &bias[0], 1
	}
	return s, b, ss, bs
}

// LayerNorm sets dst = (x - mean) / sqrt(var + eps) · scale + bias with
// the biased variance, computed in two float64 passes (mean, then the
// squared deviations). scale and bias may be nil; otherwise they have x's
// length. The mean is subtracted as two float32 parts so a large mean
// does not cost precision. dst may be x.
func (k *RowKernels) LayerNorm(dst, x, scale, bias []float32, eps float32) {
	n := rowDst("LayerNorm", dst, x)
	if n == 0 {
		return
	}
	s, b, ss, bs := affineArgs(n, scale, bias)
	k.layerNorm(dst, x, s, b, ss, bs, eps)
}

// Splat is a row's one scale and one bias for LayerNormUniform, each
// repeated as the norm primitives read a step of 0 (AVX2 re-reads eight
// lanes, NEON four). Keep it where it lives across calls: the kernels
// take its address.
type Splat struct{ scale, bias [len(normOnes)]float32 }

// Set makes the splat hold scale and bias.
func (s *Splat) Set(scale, bias float32) {
	for i := range s.scale {
		s.scale[i], s.bias[i] = scale, bias
	}
}

// LayerNormUniform is LayerNorm with one scale and one bias for the whole
// row (InstanceNorm's planes, whose affine is per channel): dst = (x -
// mean) / sqrt(var + eps) · scale + bias with s holding scale and bias.
// dst may be x.
func (k *RowKernels) LayerNormUniform(dst, x []float32, s *Splat, eps float32) {
	if rowDst("LayerNormUniform", dst, x) == 0 {
		return
	}
	k.layerNorm(dst, x, &s.scale[0], &s.bias[0], 0, 0, eps)
}

// layerNorm is LayerNorm of a non-empty row with norm's affine operands.
func (k *RowKernels) layerNorm(dst, x []float32, s, b *float32, ss, bs int, eps float32) {
	n := len(x)
	mean := k.sum(&x[0], n) / float64(n)
	v := k.sumSqDev(&x[0], n, mean) / float64(n)
	r := 1 / math.Sqrt(v+float64(eps))
	hi := float32(mean)
	k.norm(&dst[0], &x[0], s, b, n, ss, bs, hi, float32(mean-float64(hi)), float32(r))
}

// RMSNorm sets dst = x / sqrt(mean(x²) + eps) · scale; scale may be nil,
// otherwise it has x's length. dst may be x.
func (k *RowKernels) RMSNorm(dst, x, scale []float32, eps float32) {
	n := rowDst("RMSNorm", dst, x)
	if n == 0 {
		return
	}
	s, b, ss, bs := affineArgs(n, scale, nil)
	ms := k.sumSqDev(&x[0], n, 0) / float64(n)
	r := 1 / math.Sqrt(ms+float64(eps))
	k.norm(&dst[0], &x[0], s, b, n, ss, bs, 0, 0, float32(r))
}

// Scale does y[i] *= s.
func (k *RowKernels) Scale(y []float32, s float32) { k.scale(p32(y), len(y), s) }

// Axpy does y[i] += a·x[i]; the slices must have the same length.
func (k *RowKernels) Axpy(y, x []float32, a float32) {
	sameLen("Axpy", len(y), len(x))
	k.axpy(p32(y), p32(x), len(x), a)
}
