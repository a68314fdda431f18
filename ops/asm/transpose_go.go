package asm

import "unsafe"

// transpose8Go is the pure-Go twin of the 8×8-block transpose primitive
// (see RowKernels.transpose8).
func transpose8Go(dst *uint32, ldd int, src *uint32, lds int, rows, cols int) {
	if rows == 0 || cols == 0 {
		return
	}
	s := unsafe.Slice(src, (rows-1)*lds+cols)
	d := unsafe.Slice(dst, (cols-1)*ldd+rows)
	for i0 := 0; i0 < rows; i0 += 8 {
		for j0 := 0; j0 < cols; j0 += 8 {
			for i := i0; i < i0+8; i++ {
				row := (*[8]uint32)(s[i*lds+j0:])
				for j, v := range row {
					d[(j0+j)*ldd+i] = v
				}
			}
		}
	}
}
