package asm

import "unsafe"

// The pure-Go twins of the int8 kernels: A packed as plain bytes, four
// rows a tile. Every sum is formed in int32 with Go's wrapping arithmetic
// (the products and four-term sums are exact; see the package's int8
// notes), so the twins give the assembly's bits.

// dotQuads is Σ_q Σ_u a[4q+u]·b[64q+u] over kq quads of one A row and
// one column of a panel (b starting at the column's first byte).
func dotQuads(a []byte, b []int8, kq int) int32 {
	var s int32
	for q := range kq {
		aq, bq := a[4*q:4*q+4], b[64*q:64*q+4]
		s += int32(aq[0])*int32(bq[0]) + int32(aq[1])*int32(bq[1]) + int32(aq[2])*int32(bq[2]) + int32(aq[3])*int32(bq[3])
	}
	return s
}

// gemmPanelU8S8Go is the twin's panel kernel (see i8PanelKernel), 4 rows
// a tile.
func gemmPanelU8S8Go(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint) {
	const mr = 4
	as := unsafe.Slice(a, (mr*tiles-1)*lda+4*kq)
	bs := unsafe.Slice(b, 64*kq)
	cs := unsafe.Slice(c, (mr*tiles-1)*ldc+i8NR)
	for i := range mr * tiles {
		row := as[i*lda : i*lda+4*kq]
		for j := range i8NR {
			s := dotQuads(row, bs[4*j:], kq)
			if flags&gemmAccumulate != 0 {
				s += cs[i*ldc+j]
			}
			cs[i*ldc+j] = s
		}
	}
}

// gemvU8S8Go is the twin's one-row kernel (see i8GemvKernel).
func gemvU8S8Go(kq, panels int, a *byte, b *int8, pstride int, c *int32, flags uint) {
	as := unsafe.Slice(a, 4*kq)
	bs := unsafe.Slice(b, (panels-1)*pstride+64*kq)
	cs := unsafe.Slice(c, panels*i8NR)
	for p := range panels {
		for j := range i8NR {
			s := dotQuads(as, bs[p*pstride+4*j:], kq)
			if flags&gemmAccumulate != 0 {
				s += cs[p*i8NR+j]
			}
			cs[p*i8NR+j] = s
		}
	}
}
