package asm

import (
	"errors"
	"fmt"
	"unsafe"
)

// MaxPool2x2 is a prepared 2×2, stride-2, unpadded max pooling over NCHW
// data (the downsampling after a ResNet stem): each output row is the max
// of two input rows, folded pairwise, eight outputs per vector step.
// Pool2D, which handles every window, folds the columns one at a time.
// Maxima are exact as Go's builtin max: NaN wins, +0 beats -0.
type MaxPool2x2 struct {
	planes, h, w, oh, ow int
	k                    *convKernels
	c                    *Chunks
	x, y                 []float32 // operands of the current run
}

// maxPairsKernel computes n outputs of one output row from two input
// rows:
//
//	for i < n: y[i] = max(x0[2i], x0[2i+1], x1[2i], x1[2i+1])
//
// n >= 0; y holds n floats, x0 and x1 2n each. The caller checks all of
// it.
type maxPairsKernel func(y, x0, x1 *float32, n int)

// maxPairsGo is the twin of the assembly kernels.
func maxPairsGo(y, x0, x1 *float32, n int) {
	yp, a, b := unsafe.Pointer(y), unsafe.Pointer(x0), unsafe.Pointer(x1)
	at := func(p unsafe.Pointer, i int) float32 { return *(*float32)(unsafe.Add(p, 4*i)) }
	for i := range n {
		*(*float32)(unsafe.Add(yp, 4*i)) = max(at(a, 2*i), at(a, 2*i+1), at(b, 2*i), at(b, 2*i+1))
	}
}

// NewMaxPool2x2 prepares the pooling of geometry g with the kernels of
// row variant k's feature (nil: the best) over par, or returns nil when g
// is another window (Pool2D's case).
func NewMaxPool2x2(g ConvGeom, k *RowKernels, par Par) (*MaxPool2x2, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if g.KH != 2 || g.KW != 2 || g.SH != 2 || g.SW != 2 || g.PT != 0 || g.PL != 0 ||
		2*g.OH > g.H || 2*g.OW > g.W || g.M != g.C {
		return nil, nil
	}
	if k == nil {
		k = BestRows()
	}
	p := &MaxPool2x2{planes: g.N * g.C, h: g.H, w: g.W, oh: g.OH, ow: g.OW, k: convKernelsFor(k.Feature)}
	p.c = NewChunks(par, p.planes*g.OH, max(1, (1<<13)/max(1, 2*g.W)), p.rows)
	return p, nil
}

// Run pools x [N,C,H,W] into y [N,C,OH,OW]; y must not overlap x.
func (p *MaxPool2x2) Run(y, x []float32) error {
	if len(x) != p.planes*p.h*p.w || len(y) != p.planes*p.oh*p.ow {
		return fmt.Errorf("asm: max pool: got x %d, y %d elements; want %d, %d", len(x), len(y), p.planes*p.h*p.w, p.planes*p.oh*p.ow)
	}
	if overlap32(y, x) {
		return errors.New("asm: max pool: output overlaps the input")
	}
	p.x, p.y = x, y
	p.c.Do()
	p.x, p.y = nil, nil
	return nil
}

// rows computes output rows [lo, hi), numbered over (plane, oy).
func (p *MaxPool2x2) rows(_, lo, hi int) {
	if p.ow == 0 {
		return
	}
	for it := lo; it < hi; it++ {
		plane, oy := it/p.oh, it%p.oh
		x0 := p.x[(plane*p.h+2*oy)*p.w:][:2*p.ow]
		x1 := p.x[(plane*p.h+2*oy+1)*p.w:][:2*p.ow]
		yrow := p.y[it*p.ow:][:p.ow]
		p.k.maxPairs(&yrow[0], &x0[0], &x1[0], p.ow)
	}
}
