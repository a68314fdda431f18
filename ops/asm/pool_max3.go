package asm

import (
	"math"
	"unsafe"
)

// The 3-wide, stride-2 max pooling (ResNet's stem, most CNNs' first
// downsampling) has a kernel of its own: one call per output row reads
// the window's input rows once and writes the row. Pool2D's general path
// folds the rows, then the columns, in four or five vector passes per
// output row, whose calls and re-reads made the stem's pooling cost
// three times what it should (0.46 ms for 64×112×112 on Zen 5).

// maxRow3S2Kernel computes n outputs of one output row from three input
// rows:
//
//	for i < n: y[i] = max(r[2i], r[2i+1], r[2i+2] for r in x0, x1, x2)
//
// Maxima are exact as Go's builtin max (NaN wins, +0 beats -0), so a
// window clipped to fewer rows passes a row twice. n >= 1; y holds n
// floats, each row 2n+1. The caller checks all of it.
type maxRow3S2Kernel func(y, x0, x1, x2 *float32, n int)

// maxRow3S2Go is the twin of the assembly kernels.
func maxRow3S2Go(y, x0, x1, x2 *float32, n int) {
	at := func(p *float32, i int) float32 { return *(*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }
	for i := range n {
		m := at(x0, 2*i)
		for _, r := range [3]*float32{x0, x1, x2} {
			m = max(m, at(r, 2*i), at(r, 2*i+1), at(r, 2*i+2))
		}
		*(*float32)(unsafe.Add(unsafe.Pointer(y), 4*i)) = m
	}
}

// pool3S2 is Pool2D's plan for the kernel: the output columns [ox0, ox1)
// whose windows the border does not clip, or on = false where the
// pooling is not a max over at most three rows and three columns at
// column stride 2.
type pool3S2 struct {
	on       bool
	kernel   maxRow3S2Kernel
	ox0, ox1 int
}

// plan3S2 sets p.max3 up.
func (p *Pool2D) plan3S2() {
	g, m := &p.g, &p.max3
	k := convKernelsFor(p.k.Feature).maxRow3S2
	if !p.isMax || k == nil || g.KW != 3 || g.SW != 2 || g.KH > 3 {
		return
	}
	m.ox0 = min((g.PL+1)/2, g.OW) // first ox with 2·ox - PL >= 0
	m.ox1 = m.ox0
	for m.ox1 < g.OW && p.x1[m.ox1]-p.x0[m.ox1] == 3 {
		m.ox1++
	}
	m.on, m.kernel = m.ox1 > m.ox0, k
}

// maxRow3S2 computes output row yrow from the window's input rows (one
// to three, clipped by the border): the whole windows in one kernel
// call, the clipped ones at the ends of the row one by one.
func (p *Pool2D) maxRow3S2(yrow []float32, rows [][]float32) {
	g, m := &p.g, &p.max3
	r := [3][]float32{rows[0], rows[len(rows)/2], rows[len(rows)-1]}
	n := m.ox1 - m.ox0
	s := p.x0[m.ox0]
	var x [3]*float32
	for i, row := range r {
		x[i] = &row[s:][:2*n+1][0] // the kernel's reads are inside the row
	}
	m.kernel(&yrow[m.ox0:][:n][0], x[0], x[1], x[2], n)
	for ox := range g.OW {
		if ox == m.ox0 {
			ox = m.ox1
			if ox == g.OW {
				break
			}
		}
		v := float32(math.Inf(-1))
		for _, row := range rows {
			v = max(v, maxOf(row[p.x0[ox]:p.x1[ox]]))
		}
		yrow[ox] = v
	}
}
