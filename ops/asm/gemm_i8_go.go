package asm

import "unsafe"

// The pure-Go twins of the int8 kernels: A packed as plain bytes, four
// rows a tile. Every sum is formed in int32 with Go's wrapping arithmetic
// (the products and four-term sums are exact; see the package's int8
// notes), so the twins give the assembly's bits.

// dotPanel adds one A row's kq quads times a panel's quads into the 16
// column sums acc (each quad of the panel is 64 bytes: 16 columns × 4
// steps, as the assembly reads it).
func dotPanel(acc *[i8NR]int32, a []byte, b []int8, kq int) {
	for q := range kq {
		a0, a1, a2, a3 := int32(a[4*q]), int32(a[4*q+1]), int32(a[4*q+2]), int32(a[4*q+3])
		bq := (*[4 * i8NR]int8)(b[64*q:])
		for j := range acc {
			acc[j] += a0*int32(bq[4*j]) + a1*int32(bq[4*j+1]) + a2*int32(bq[4*j+2]) + a3*int32(bq[4*j+3])
		}
	}
}

// storeI32 writes (flags&gemmAccumulate == 0) or adds a tile row's sums
// into C.
func storeI32(c []int32, acc *[i8NR]int32, flags uint) {
	mergeI32(c[:i8NR], acc[:], flags&gemmAccumulate != 0)
}

// gemmPanelU8S8Go is the twin's panel kernel (see i8PanelKernel), 4×16
// tiles.
func gemmPanelU8S8Go(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint) {
	const mr = 4
	as := unsafe.Slice(a, (mr*tiles-1)*lda+4*kq)
	bs := unsafe.Slice(b, 64*kq)
	cs := unsafe.Slice(c, (mr*tiles-1)*ldc+i8NR)
	for i := range mr * tiles {
		var acc [i8NR]int32
		dotPanel(&acc, as[i*lda:i*lda+4*kq], bs, kq)
		storeI32(cs[i*ldc:], &acc, flags)
	}
}

// gemvU8S8Go is the twin's one-row kernel (see i8GemvKernel).
func gemvU8S8Go(kq, panels int, a *byte, b *int8, pstride int, c *int32, flags uint) {
	as := unsafe.Slice(a, 4*kq)
	bs := unsafe.Slice(b, (panels-1)*pstride+64*kq)
	cs := unsafe.Slice(c, panels*i8NR)
	for p := range panels {
		var acc [i8NR]int32
		dotPanel(&acc, as, bs[p*pstride:], kq)
		storeI32(cs[p*i8NR:], &acc, flags)
	}
}
