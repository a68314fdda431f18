package asm

import "fmt"

// BlendRows is the vertical pass of a linear resize over a band of
// output rows in one call: with h holding horizontally interpolated
// source rows base, base+1, ... (width elements each, one after
// another), output row r, dst[r·width : (r+1)·width], is
//
//	w0[r]·h[row i0[r]] + w1[r]·h[row i1[r]]
//
// each product rounded to float32 and then summed, as Blend does (the
// twin's bits in every variant, NaN payloads aside). Rows are counted by
// len(i0); i1, w0 and w1 have its length, dst has rows·width elements
// and does not overlap h, and every i0[r] and i1[r] names a row of h
// (base <= i < base + len(h)/width). One call per band rather than per
// row: at a row of a few hundred values, a call's checks cost as much as
// the row itself.
func (k *RowKernels) BlendRows(dst, h []float32, width, base int, i0, i1 []int32, w0, w1 []float32) {
	rows := len(i0)
	sameLen("BlendRows", len(i1), rows)
	sameLen("BlendRows", len(w0), rows)
	sameLen("BlendRows", len(w1), rows)
	if width < 1 {
		panic(fmt.Sprintf("asm: BlendRows: width %d", width))
	}
	sameLen("BlendRows", len(dst), rows*width)
	if rows == 0 {
		return
	}
	hr := len(h) / width
	for r := range rows {
		if a, b := int(i0[r])-base, int(i1[r])-base; a < 0 || a >= hr || b < 0 || b >= hr {
			panic(fmt.Sprintf("asm: BlendRows: row %d reads rows %d and %d, h holds %d from %d", r, i0[r], i1[r], hr, base))
		}
	}
	if overlap32(dst, h) {
		panic("asm: BlendRows: dst overlaps h")
	}
	f := k.blendRows
	if f == nil {
		f = blendRowsGo
	}
	f(&dst[0], &h[0], width, base, &i0[0], &i1[0], &w0[0], &w1[0], rows)
}

// blendRowsFunc is the blendRows primitive: BlendRows past its checks.
type blendRowsFunc func(y, h *float32, width, base int, i0, i1 *int32, w0, w1 *float32, rows int)

// blendRowsGo is the twin of the blendRows primitive: blendGo on each
// output row.
var blendRowsGo = blendRowsWith(blendGo)

// blendRowsWith is the blendRows primitive of a variant with a blend
// primitive but no blendRows of its own (NEON): blend on each output row.
func blendRowsWith(blend blendFunc) blendRowsFunc {
	return func(y, h *float32, width, base int, i0, i1 *int32, w0, w1 *float32, rows int) {
		a, b, u, v := i32s(i0, rows), i32s(i1, rows), f32s(w0, rows), f32s(w1, rows)
		for r := range rows {
			x0, x1 := addF32(h, (int(a[r])-base)*width), addF32(h, (int(b[r])-base)*width)
			blend(addF32(y, r*width), x0, x1, width, u[r], v[r])
		}
	}
}

// Lerp2Ends are the taps of the two end outputs of a 2× row whose inner
// outputs pair up (Lerp2's), which clamp at the row's ends: output 0 is
// W[0]·v[I[0]] + W[1]·v[I[1]], output 2w-1 is W[2]·v[I[2]] + W[3]·v[I[3]].
type Lerp2Ends struct {
	I [4]int32
	W [4]float32
}

// BlendLerp2 writes a band of output rows of a 2× linear resize whose
// horizontal taps pair up (see Lerp2), vertical pass first: with x
// holding source rows of w >= 2 values, output row r (dst[r·2w :
// (r+1)·2w]) is Lerp2 of the row v = wy0[r]·(row i0[r] of x) +
// wy1[r]·(row i1[r] of x) at its elements 1 .. 2w-2, and ends' taps of v
// at its first and last. Every product is rounded to float32 and then
// summed, in that order (v as Blend computes it, then Lerp2's steps), so
// every variant gives the twin's bits, NaN payloads aside. One pass
// writes each output value once from source rows the band reads from
// cache: no row of v is stored. Rows are counted by len(i0); i1, wy0 and
// wy1 have its length, dst has rows·2w elements and does not overlap x,
// every index names a row of x, and ends' indices lie in [0, w).
func (k *RowKernels) BlendLerp2(dst, x []float32, w int, i0, i1 []int32, wy0, wy1 []float32, a, b float32, ends *Lerp2Ends) {
	rows := len(i0)
	sameLen("BlendLerp2", len(i1), rows)
	sameLen("BlendLerp2", len(wy0), rows)
	sameLen("BlendLerp2", len(wy1), rows)
	if w < 2 {
		panic(fmt.Sprintf("asm: BlendLerp2: width %d", w))
	}
	sameLen("BlendLerp2", len(dst), rows*2*w)
	for _, i := range ends.I {
		if i < 0 || int(i) >= w {
			panic(fmt.Sprintf("asm: BlendLerp2: end taps %v outside a row of %d", ends.I, w))
		}
	}
	if rows == 0 {
		return
	}
	xr := len(x) / w
	for r := range rows {
		if i0[r] < 0 || int(i0[r]) >= xr || i1[r] < 0 || int(i1[r]) >= xr {
			panic(fmt.Sprintf("asm: BlendLerp2: row %d reads rows %d and %d of %d", r, i0[r], i1[r], xr))
		}
	}
	if overlap32(dst, x) {
		panic("asm: BlendLerp2: dst overlaps x")
	}
	f := k.blendLerp2
	if f == nil {
		f = blendLerp2Go
	}
	f(&dst[0], &x[0], w, &i0[0], &i1[0], &wy0[0], &wy1[0], rows, a, b, &ends.I[0], &ends.W[0])
}

// blendLerp2Func is the blendLerp2 primitive: BlendLerp2 past its checks,
// ends as pointers to its four indices and four weights.
type blendLerp2Func func(y, x *float32, w int, i0, i1 *int32, wy0, wy1 *float32, rows int, a, b float32, ei *int32, ew *float32)

// blendLerp2Go is the twin of the blendLerp2 primitive.
func blendLerp2Go(y, x *float32, w int, i0, i1 *int32, wy0, wy1 *float32, rows int, a, b float32, ei *int32, ew *float32) {
	c, d, u, v := i32s(i0, rows), i32s(i1, rows), f32s(wy0, rows), f32s(wy1, rows)
	ie, we := i32s(ei, 4), f32s(ew, 4)
	for r := range rows {
		s0, s1 := f32s(addF32(x, int(c[r])*w), w), f32s(addF32(x, int(d[r])*w), w)
		ys := f32s(addF32(y, r*2*w), 2*w)
		// The conversions keep targets that fuse (arm64) from fusing,
		// so every platform rounds as the vector code does.
		blend := func(i int32) float32 { return float32(u[r]*s0[i]) + float32(v[r]*s1[i]) }
		vPrev := blend(0)
		for i := 1; i < w; i++ {
			vi := blend(int32(i))
			ys[2*i-1] = float32(a*vPrev) + float32(b*vi)
			ys[2*i] = float32(b*vPrev) + float32(a*vi)
			vPrev = vi
		}
		ys[0] = float32(we[0]*blend(ie[0])) + float32(we[1]*blend(ie[1]))
		ys[2*w-1] = float32(we[2]*blend(ie[2])) + float32(we[3]*blend(ie[3]))
	}
}
