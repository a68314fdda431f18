package asm

import "unsafe"

// gemmKernel6x16Go is the pure-Go twin of the 6×16 micro-kernel (see
// microKernel for the loop it computes).
func gemmKernel6x16Go(k int, a, b, c *float32, ldc int, flags uint) {
	gemmKernelRowsx16Go(6, k, a, b, c, ldc, flags)
}

// gemmKernel12x16Go is the pure-Go twin of the 12×16 (AVX-512)
// micro-kernel.
func gemmKernel12x16Go(k int, a, b, c *float32, ldc int, flags uint) {
	gemmKernelRowsx16Go(12, k, a, b, c, ldc, flags)
}

// gemmMicroGo returns the pure-Go twin of the micro-kernels with mr rows
// and 16 columns (mr 6 or 12), for tests that check a variant against it.
func gemmMicroGo(mr int) microKernel {
	if mr == 12 {
		return gemmKernel12x16Go
	}
	return gemmKernel6x16Go
}

// gemmKernelRowsx16Go computes an mr×16 tile (mr even) from an A panel
// of mr values a step. Go does not vectorise, so the tile is done as
// 2×4 sub-tiles whose eight sums stay in registers; each
// sub-tile rereads the panels, which sit in L1. It indexes through
// unsafe.Add (the caller has checked every length): bounds checks in the
// inner loop halve its speed.
func gemmKernelRowsx16Go(mr, k int, a, b, c *float32, ldc int, flags uint) {
	acc := flags&gemmAccumulate != 0
	for i := 0; i < mr; i += 2 {
		for j := 0; j < 16; j += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			pa := unsafe.Add(unsafe.Pointer(a), 4*i)
			pb := unsafe.Add(unsafe.Pointer(b), 4*j)
			for p := range k {
				x := (*[2]float32)(unsafe.Add(pa, 4*mr*p))
				y := (*[4]float32)(unsafe.Add(pb, 64*p))
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
			r0 := (*[4]float32)(unsafe.Add(unsafe.Pointer(c), 4*(i*ldc+j)))
			r1 := (*[4]float32)(unsafe.Add(unsafe.Pointer(c), 4*((i+1)*ldc+j)))
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

// gemmPackB16Go is the pure-Go twin of the B-panel packer (see
// packKernel for the loop it computes).
func gemmPackB16Go(k int, src *float32, ld int, dst *float32) {
	s := unsafe.Slice(src, (k-1)*ld+16)
	d := unsafe.Slice(dst, 16*k)
	for p := range k {
		*(*[16]float32)(d[16*p:]) = *(*[16]float32)(s[p*ld:])
	}
}

// gemvRows4Go is the pure-Go twin of the four-row GEMV kernel (see
// rowsKernel for the loop it computes).
func gemvRows4Go(n int, x, b *float32, ldb int, y *float32, flags uint) {
	if n <= 0 {
		return
	}
	xs := (*[4]float32)(unsafe.Slice(x, 4))
	bs := unsafe.Slice(b, 3*ldb+n)
	b0, b1, b2, b3 := bs[:n], bs[ldb:ldb+n], bs[2*ldb:2*ldb+n], bs[3*ldb:3*ldb+n]
	ys := unsafe.Slice(y, n)
	acc := flags&gemmAccumulate != 0
	x0, x1, x2, x3 := xs[0], xs[1], xs[2], xs[3]
	for j := range ys {
		var t float32
		if acc {
			t = ys[j]
		}
		t += x0 * b0[j]
		t += x1 * b1[j]
		t += x2 * b2[j]
		t += x3 * b3[j]
		ys[j] = t
	}
}

// gemmPackA6Go is the pure-Go twin of the A-panel packer (see packAKernel
// for the loop it computes).
func gemmPackA6Go(k8 int, src *float32, lda int, dst *float32) {
	s := unsafe.Slice(src, 5*lda+8*k8)
	var rows [6]*float32
	for r := range rows {
		rows[r] = &s[r*lda]
	}
	pack6(unsafe.Slice(dst, 48*k8), &rows, 8*k8)
}

// gemmPackA12Go is the pure-Go twin of the twelve-row A-panel packer.
func gemmPackA12Go(k8 int, src *float32, lda int, dst *float32) {
	s := unsafe.Slice(src, 11*lda+8*k8)
	var rows [12]*float32
	for r := range rows {
		rows[r] = &s[r*lda]
	}
	pack12(unsafe.Slice(dst, 96*k8), &rows, 8*k8)
}

// gemmPackB64Go is the pure-Go twin of the four-strip B packer (see
// pack4Kernel for the loop it computes).
func gemmPackB64Go(k int, src *float32, ld int, dst *float32, pstride int) {
	s := unsafe.Slice(src, (k-1)*ld+64)
	d := unsafe.Slice(dst, 3*pstride+16*k)
	for q := range 4 {
		for p := range k {
			*(*[16]float32)(d[q*pstride+16*p:]) = *(*[16]float32)(s[p*ld+16*q:])
		}
	}
}
