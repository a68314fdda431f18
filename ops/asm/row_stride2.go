package asm

import "fmt"

// AddStride2 adds src into every other element of dst, row by row: for
// r < rows and j < n,
//
//	dst[r·ldd + 2j] += src[r·lds + j]
//
// each a float32 sum (every variant gives the twin's bits, NaN payloads
// aside). The odd elements between are neither read nor written, so
// another worker may own them. It is the scatter of a transposed
// convolution at stride 2 along its rows, one call per kernel tap over
// all the input rows it reaches. Rows do not overlap (ldd >= 2n-1, lds
// >= n), dst does not overlap src, and both hold their last row.
func (k *RowKernels) AddStride2(dst []float32, ldd int, src []float32, lds, rows, n int) {
	if rows < 0 || n < 0 {
		panic(fmt.Sprintf("asm: AddStride2: %d rows of %d", rows, n))
	}
	if rows == 0 || n == 0 {
		return
	}
	if ldd < 2*n-1 || lds < n || len(dst) < (rows-1)*ldd+2*n-1 || len(src) < (rows-1)*lds+n {
		panic(fmt.Sprintf("asm: AddStride2: %d rows of %d in dst of %d (stride %d), src of %d (stride %d)",
			rows, n, len(dst), ldd, len(src), lds))
	}
	if overlap32(dst, src) {
		panic("asm: AddStride2: dst overlaps src")
	}
	f := k.addStride2
	if f == nil {
		f = addStride2Go
	}
	f(&dst[0], ldd, &src[0], lds, rows, n)
}

// addStride2Go is the twin of the addStride2 primitive.
func addStride2Go(y *float32, ldd int, x *float32, lds, rows, n int) {
	for r := range rows {
		ys, xs := f32s(addF32(y, r*ldd), 2*n-1), f32s(addF32(x, r*lds), n)
		for j, v := range xs {
			ys[2*j] += v
		}
	}
}
