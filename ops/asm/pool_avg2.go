package asm

import "unsafe"

// The 2×2, stride-2 average pool without padding (DenseNet's
// transitions): the general path folds each output row's two input rows
// into float64 sums (AccAdd) and then sums and divides each window in a
// Go loop, a few calls and a loop per output row, which for DenseNet's
// small planes took 33-41 µs per pool. The vector kernels run a range of
// output rows in one call, with the same float64 operations in the same
// order, so the same bits.

// avgRows2x2Kernel pools rows output rows of ow floats (avgRows2x2Go):
// output row r from input rows 2r and 2r+1 of x, w floats apart. rows,
// ow >= 1, 2·ow <= w; the caller checks every read and write.
type avgRows2x2Kernel func(y, x *float32, rows, w, ow int)

// avgRows2x2Go is the twin of the vector kernels: the general path's
// sums (a row cleared, then each input row added; each window's columns
// summed from 0), divided by 4.
func avgRows2x2Go(y, x *float32, rows, w, ow int) {
	ys, xs := unsafe.Slice(y, rows*ow), unsafe.Slice(x, 2*rows*w)
	for r := range rows {
		x0, x1 := xs[2*r*w:], xs[(2*r+1)*w:]
		for j := range ow {
			var s float64
			for c := 2 * j; c < 2*j+2; c++ {
				acc := 0 + float64(x0[c])
				acc += float64(x1[c])
				s += acc
			}
			ys[r*ow+j] = float32(s / 4)
		}
	}
}

// avg2On reports whether p pools through its variant's 2×2 kernel: an
// average over 2×2 windows at stride 2 that never reach padding (none at
// the top or left; OH, OW = H/2, W/2).
func (p *Pool2D) avg2On() bool {
	g := &p.g
	return p.avg2 != nil && !p.isMax && g.KH == 2 && g.KW == 2 && g.SH == 2 && g.SW == 2 &&
		g.PT == 0 && g.PL == 0 && g.OH >= 1 && g.OW >= 1 && g.OH == g.H/2 && g.OW == g.W/2
}

// avg2Rows computes output rows [lo, hi), numbered over (plane, oy): a
// plane's rows in one call (all of them where the planes' rows are
// contiguous in the input, H even).
func (p *Pool2D) avg2Rows(lo, hi int) {
	g := &p.g
	for it := lo; it < hi; {
		plane, oy := it/g.OH, it%g.OH
		n := min(hi-it, g.OH-oy) // to the plane's end
		if g.H%2 == 0 {
			n = hi - it
		}
		x := p.x[plane*g.H*g.W+2*oy*g.W:][:2*n*g.W-(g.W-2*g.OW)]
		y := p.y[it*g.OW:][:n*g.OW]
		p.avg2(unsafe.SliceData(y), unsafe.SliceData(x), n, g.W, g.OW)
		it += n
	}
}
