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
