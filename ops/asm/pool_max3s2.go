package asm

import (
	"math"
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// The 3-wide, stride-2 max pooling (ResNet's stem, most CNNs' first
// downsampling) has a kernel of its own that runs many output rows per
// call: per row it loads each input vector of the window's rows once,
// folds the rows, splits the even and odd columns and writes the row,
// the border columns under opmasks, so no output is left to Go. The
// general path folds the rows, then the columns, in four or five vector
// passes per output row; a kernel called once per output row with the
// border columns done in Go still spent 40% of its time in Go (0.27 ms
// for 64×112×112 on Zen 5, against 0.1 ms for copying as many bytes).

// maxRows3S2Kernel computes rows output rows of ow outputs of a max
// pooling three columns wide at column stride 2, output row r from the
// rows at x0, x1 and x2 (each w floats) moved on by r·xstride floats:
//
//	for r < rows, i < ow:
//	    y[r·ow+i] = max(xk[r·xstride+c] for xk in x0, x1, x2,
//	                    c in [2i-pl, 2i-pl+3) ∩ [0, w))
//
// -Inf where no column is inside. Maxima are exact as Go's builtin max
// (NaN wins, +0 beats -0), so a window clipped to fewer rows passes a row
// twice. masks is max3S2Masks(w, pl, ow): the assembly reads the rows
// under those opmasks, the twin ignores it. rows, w, ow >= 1, 0 <= pl <=
// 2; the caller checks all of it.
type maxRows3S2Kernel func(y, x0, x1, x2 *float32, rows, w, pl, ow, xstride int, masks *uint16)

// poolKernels are the pooling kernels of one feature (poolFamily, which
// follows the row kernels' choice). max3S2 nil: that feature's rows keep
// the general path.
type poolKernels struct {
	feature cpuid.Variant
	max3S2  maxRows3S2Kernel
	avg2    avgRows2x2Kernel // nil: averages take the general path (pool_avg2.go)
}

// poolGo are the pure-Go twins.
var poolGo = &poolKernels{feature: cpuid.Generic, max3S2: maxRows3S2Go}

// maxRows3S2Go is the twin of the assembly kernels: the outputs whose
// windows are whole (the most) by nine loads and maxima each, those the
// border clips by their columns.
func maxRows3S2Go(y, x0, x1, x2 *float32, rows, w, pl, ow, xstride int, _ *uint16) {
	at := func(p *float32, i int) float32 { return *(*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }
	i0 := min((pl+1)/2, ow) // first output with 2i-pl >= 0
	i1 := i0
	for i1 < ow && 2*i1-pl+2 < w {
		i1++
	}
	xs := [3]*float32{x0, x1, x2}
	for r := range rows {
		yr := unsafe.Add(unsafe.Pointer(y), 4*r*ow)
		for i := range ow {
			var m float32
			if i >= i0 && i < i1 {
				c := r*xstride + 2*i - pl
				m = max(at(x0, c), at(x0, c+1), at(x0, c+2), at(x1, c), at(x1, c+1), at(x1, c+2),
					at(x2, c), at(x2, c+1), at(x2, c+2))
			} else {
				m = float32(math.Inf(-1))
				for _, x := range xs {
					for c := max(2*i-pl, 0); c < min(2*i-pl+3, w); c++ {
						m = max(m, at(x, r*xstride+c))
					}
				}
			}
			*(*float32)(unsafe.Add(yr, 4*i)) = m
		}
	}
}

// max3S2Masks is the opmask table of the assembly kernels for rows of w
// floats, pl padding columns and ow outputs. Output vector j (outputs
// 16j to 16j+15) needs columns 32j-pl to 32j-pl+32: the kernels load
// them as pairs of vectors, pair j from column 32j-pl, and lane 0 of
// pair j+1. Entries 2j and 2j+1 are the lanes of pair j's two vectors
// that are inside [0, w), for j <= ceil(ow/16); the last entry is the
// lanes of the last output vector.
func max3S2Masks(w, pl, ow int) []uint16 {
	nv := (ow + 15) / 16
	m := make([]uint16, 2*nv+3)
	for j := 0; j <= nv; j++ {
		for t := range 32 {
			if c := 32*j - pl + t; c >= 0 && c < w {
				m[2*j+t/16] |= 1 << (t % 16)
			}
		}
	}
	m[2*nv+2] = uint16(1<<(ow-16*(nv-1)) - 1)
	return m
}

// pool3S2 is Pool2D's plan for the kernel: on where the pooling is a max
// over at most three rows and three columns at column stride 2 with at
// most two padding columns on the left, rows and outputs to work on; the
// output rows [oy0, oy1) whose windows the border does not clip.
type pool3S2 struct {
	on       bool
	kernel   maxRows3S2Kernel
	masks    []uint16
	oy0, oy1 int
}

// plan3S2 sets p.max3 up.
func (p *Pool2D) plan3S2() {
	g, m := &p.g, &p.max3
	k := poolFamily.forFeature(p.k.Feature).max3S2
	if !p.isMax || k == nil || g.KW != 3 || g.SW != 2 || g.KH > 3 || g.PL > 2 || g.W < 1 || g.OW < 1 {
		return
	}
	m.on, m.kernel, m.masks = true, k, max3S2Masks(g.W, g.PL, g.OW)
	m.oy0 = min((g.PT+g.SH-1)/g.SH, g.OH) // first oy with oy·SH - PT >= 0
	m.oy1 = m.oy0
	if last := g.H + g.PT - g.KH; last >= 0 { // oy·SH <= last: the window's rows are inside
		m.oy1 = max(min(last/g.SH+1, g.OH), m.oy0)
	}
}

// max3S2Rows computes output rows [lo, hi), numbered over (plane, oy):
// each plane's unclipped rows in one kernel call, the rows the border
// clips one call each with a clipped row passed twice.
func (p *Pool2D) max3S2Rows(lo, hi int) {
	g, m := &p.g, &p.max3
	hw := g.H * g.W
	for it := lo; it < hi; {
		plane, oy := it/g.OH, it%g.OH
		xp := p.x[plane*hw : (plane+1)*hw]
		n := 1
		var r [3]int // the window's first, middle and last row
		if oy >= m.oy0 && oy < m.oy1 {
			n = min(hi-it, m.oy1-oy)
			y0 := oy*g.SH - g.PT
			r = [3]int{y0, y0 + (g.KH-1)/2, y0 + g.KH - 1}
		} else {
			y0, y1 := max(oy*g.SH-g.PT, 0), min(oy*g.SH-g.PT+g.KH, g.H)
			if y0 >= y1 {
				fill(p.y[it*g.OW:(it+1)*g.OW], float32(math.Inf(-1)))
				it++
				continue
			}
			r = [3]int{y0, (y0 + y1 - 1) / 2, y1 - 1}
		}
		var x [3]*float32
		for i, row := range r {
			// the kernel's reads: n rows of W floats, SH·W apart
			x[i] = &xp[row*g.W:][:(n-1)*g.SH*g.W+g.W][0]
		}
		y := p.y[it*g.OW:][:n*g.OW]
		m.kernel(&y[0], x[0], x[1], x[2], n, g.W, g.PL, g.OW, g.SH*g.W, &m.masks[0])
		it += n
	}
}
