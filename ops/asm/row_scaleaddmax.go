package asm

import "math"

// ScaleAddMax sets y[i] = y[i]·s + add[i], each step rounded (as Scale
// then Axpy), and returns the max of the new y: NaN if any is NaN, -Inf
// for an empty row. It is the masked-scores pass of the attention kernel,
// one pass over the row instead of three. add has y's length.
func (k *RowKernels) ScaleAddMax(y, add []float32, s float32) float32 {
	sameLen("ScaleAddMax", len(y), len(add))
	if len(y) == 0 {
		return float32(math.Inf(-1))
	}
	if k.scaleAddMax == nil { // variants without the fused primitive
		k.scale(&y[0], len(y), s)
		k.axpy(&y[0], &add[0], len(y), 1)
		return k.max(&y[0], len(y))
	}
	return k.scaleAddMax(&y[0], &add[0], len(y), s)
}

// scaleAddMaxGo is the twin of scaleAddMaxF32AVX2.
func scaleAddMaxGo(y, add *float32, n int, s float32) float32 {
	ys, as := f32s(y, n), f32s(add, n)
	m := float32(math.Inf(-1))
	for i, v := range ys {
		v = float32(v*s) + as[i]
		ys[i] = v
		m = max(m, v)
	}
	return m
}
