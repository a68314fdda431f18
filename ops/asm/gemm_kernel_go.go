package asm

import "unsafe"

// gemmKernel6x16Go is the pure-Go twin of the 6×16 micro-kernel (see
// microKernel for the loop it computes). Go does not vectorise, so the tile
// is done as twelve 2×4 sub-tiles whose eight sums stay in registers;
// each sub-tile rereads the panels, which sit in L1.
func gemmKernel6x16Go(k int, a, b, c *float32, ldc int, flags uint) {
	as := unsafe.Slice(a, 6*k)
	bs := unsafe.Slice(b, 16*k)
	cs := unsafe.Slice(c, 5*ldc+16)
	acc := flags&gemmAccumulate != 0
	for i := 0; i < 6; i += 2 {
		for j := 0; j < 16; j += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			ap, bp := as[i:], bs[j:]
			for p := 0; p < k; p++ {
				x := (*[2]float32)(ap[6*p:])
				y := (*[4]float32)(bp[16*p:])
				x0, x1 := x[0], x[1]
				y0, y1, y2, y3 := y[0], y[1], y[2], y[3]
				s00 += x0 * y0
				s01 += x0 * y1
				s02 += x0 * y2
				s03 += x0 * y3
				s10 += x1 * y0
				s11 += x1 * y1
				s12 += x1 * y2
				s13 += x1 * y3
			}
			r0 := (*[4]float32)(cs[i*ldc+j:])
			r1 := (*[4]float32)(cs[(i+1)*ldc+j:])
			if acc {
				s00, s01, s02, s03 = s00+r0[0], s01+r0[1], s02+r0[2], s03+r0[3]
				s10, s11, s12, s13 = s10+r1[0], s11+r1[1], s12+r1[2], s13+r1[3]
			}
			*r0 = [4]float32{s00, s01, s02, s03}
			*r1 = [4]float32{s10, s11, s12, s13}
		}
	}
}

// gemv16Go is the pure-Go twin of the 16-wide GEMV kernel (see gemvKernel
// for the loop it computes).
func gemv16Go(k int, x, b *float32, ldb int, y *float32, flags uint) {
	xs := unsafe.Slice(x, k)
	bs := unsafe.Slice(b, (k-1)*ldb+16)
	var t [16]float32
	for p, xv := range xs {
		row := (*[16]float32)(bs[p*ldb:])
		for j := range t {
			t[j] += xv * row[j]
		}
	}
	ys := (*[16]float32)(unsafe.Slice(y, 16))
	if flags&gemmAccumulate != 0 {
		for j := range t {
			t[j] += ys[j]
		}
	}
	*ys = t
}
