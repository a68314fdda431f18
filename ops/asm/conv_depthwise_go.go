package asm

import "unsafe"

// Pure-Go twins of the depthwise kernels (conv_depthwise_*.s), always
// compiled. Indexing goes through unsafe.Add: the caller
// (depthwiseKernels.run, .split) has checked every length.

// dwTaps16Go is the twin of the taps kernels with blocks of 16 outputs:
//
//	for i < 16·blocks: y[i] = bias + Σ_{t < taps} w[t]·x[off[t]+i]   (taps in order)
//
// It rounds each product before the add where the assembly fuses them,
// so results agree to rounding, not bit for bit.
func dwTaps16Go(y, x *float32, off *int, w *float32, taps, blocks int, bias float32) {
	for blk := range blocks {
		var acc [16]float32
		for j := range acc {
			acc[j] = bias
		}
		xb := unsafe.Add(unsafe.Pointer(x), 64*blk)
		for t := range taps {
			wt := *(*float32)(unsafe.Add(unsafe.Pointer(w), 4*t))
			at := *(*int)(unsafe.Add(unsafe.Pointer(off), 8*t))
			xs := (*[16]float32)(unsafe.Add(xb, 4*at))
			for j := range acc {
				acc[j] += wt * xs[j]
			}
		}
		*(*[16]float32)(unsafe.Add(unsafe.Pointer(y), 64*blk)) = acc
	}
}

// dwSplit2Go is the twin of the split kernels: for r < rows, j < m,
// (e if j is even, else o)[r·ldd + j/2] = src[r·lds + j].
func dwSplit2Go(e, o *float32, ldd int, src *float32, lds int, rows, m int) {
	for r := range rows {
		er := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(e), 4*r*ldd)), (m+1)/2)
		or := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(o), 4*r*ldd)), m/2)
		sr := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(src), 4*r*lds)), m)
		for j := range or {
			er[j], or[j] = sr[2*j], sr[2*j+1]
		}
		if m%2 == 1 {
			er[m/2] = sr[m-1]
		}
	}
}

// dwCopy2Go is the twin of the copy kernels: for r < rows, j < cols,
// dst[r·ldd+j] = src[r·lds+j].
func dwCopy2Go(dst *float32, ldd int, src *float32, lds int, rows, cols int) {
	for r := range rows {
		copy(unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(dst), 4*r*ldd)), cols),
			unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(src), 4*r*lds)), cols))
	}
}

// dwChanTapsGo is the twin of the interleaved taps kernels:
//
//	for p < 8·blocks, l < 16: y[16p+l] = w[16·taps+l] + Σ_{t < taps} w[16t+l]·x[pos[p]+off[t]+l]   (taps in order)
//
// rounding each product before the add, as dwTaps16Go does (so the two
// twins agree bit for bit).
func dwChanTapsGo(y, x *float32, pos, off *int, w *float32, taps, blocks int) {
	ws := unsafe.Slice(w, dwLanes*(taps+1))
	offs := unsafe.Slice(off, taps)
	bias := (*[dwLanes]float32)(ws[dwLanes*taps:])
	for p, at := range unsafe.Slice(pos, 8*blocks) {
		acc := *bias
		for t, o := range offs {
			wt := (*[dwLanes]float32)(ws[dwLanes*t:])
			xs := (*[dwLanes]float32)(unsafe.Add(unsafe.Pointer(x), 4*(at+o)))
			for l := range acc {
				acc[l] += wt[l] * xs[l]
			}
		}
		*(*[dwLanes]float32)(unsafe.Add(unsafe.Pointer(y), 4*dwLanes*p)) = acc
	}
}

// dwChanInGo is the twin of the interleaving kernels: for p < n, l < 16,
// dst[dpos[p]+l] = src[roff[l]+p].
func dwChanInGo(dst *float32, dpos *int, src *float32, roff *int, n int) {
	ro := unsafe.Slice(roff, dwLanes)
	for p, at := range unsafe.Slice(dpos, n) {
		d := (*[dwLanes]float32)(unsafe.Add(unsafe.Pointer(dst), 4*at))
		for l, o := range ro {
			d[l] = *(*float32)(unsafe.Add(unsafe.Pointer(src), 4*(o+p)))
		}
	}
}

// dwChanOutGo is the twin of the deinterleaving kernels: for l < lanes,
// p < n, dst[l·ldd+p] = src[16p+l].
func dwChanOutGo(dst *float32, ldd int, src *float32, n, lanes int) {
	s := unsafe.Slice(src, dwLanes*n)
	for l := range lanes {
		d := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(dst), 4*l*ldd)), n)
		for p := range d {
			d[p] = s[dwLanes*p+l]
		}
	}
}
