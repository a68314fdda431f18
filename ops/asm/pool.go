package asm

import (
	"errors"
	"fmt"
	"math"
)

// Pool2D is a prepared max or average pooling over NCHW data (dense
// windows: dilations are ignored). Each output row first folds the
// window's input rows into one row with a vector primitive (AccMax, or
// AccAdd into float64), then reduces each output's columns of that row.
// As in the reference kernel, padding never wins a max and only counts in
// an average's divisor with countPad; a window with no input cell gives
// -Inf (max) or NaN (0/0, an average without countPad). Output rows are
// spread over par; each worker has its own row buffer.
type Pool2D struct {
	g               ConvGeom
	isMax, countPad bool
	k               *RowKernels
	x0, x1          []int // per output column, the input columns it covers
	ws              []poolScratch
	max3            pool3S2          // the 3-wide, stride-2 max kernel's plan (pool_max3s2.go)
	avg2            avgRows2x2Kernel // the 2×2 average kernel, where avg2On (pool_avg2.go)
	c               *Chunks
	x, y            []float32 // operands of the current run
}

type poolScratch struct {
	f []float32 // max: the folded row
	h []float32 // max with wide rows: the folded row's windows (see windowMax)
	d []float64 // average: the folded row's sums
}

// NewPool2D prepares a pooling of geometry g (M must equal C) with row
// kernels k (nil: the best) over par.
func NewPool2D(g ConvGeom, isMax, countPad bool, k *RowKernels, par Par) (*Pool2D, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if g.M != g.C {
		return nil, fmt.Errorf("asm: pool: %d output channels for %d input channels", g.M, g.C)
	}
	if k == nil {
		k = BestRows()
	}
	p := &Pool2D{g: g, isMax: isMax, countPad: countPad, k: k}
	p.x0, p.x1 = make([]int, g.OW), make([]int, g.OW)
	for ox := range g.OW {
		p.x0[ox] = min(max(ox*g.SW-g.PL, 0), g.W)
		p.x1[ox] = max(min(ox*g.SW-g.PL+g.KW, g.W), p.x0[ox])
	}
	p.plan3S2()
	if p.avg2 = poolFamily.forFeature(k.Feature).avg2; !p.avg2On() {
		p.avg2 = nil
	}
	p.c = NewChunks(par, g.N*g.OH, max(1, (1<<13)/max(1, g.C*g.W*g.KH)), p.bands)
	if g.N*g.OH < 4*max(par.Threads, 1) || !bandsLineAligned(g.N, g.OH, g.OW, p.c.N()) {
		// Too few rows to deal, or bands whose bounds would share cache
		// lines: split the planes.
		p.c = NewChunks(par, g.N*g.C*g.OH, max(1, (1<<13)/max(1, g.W*g.KH)), p.rows)
	}
	p.ws = make([]poolScratch, p.c.N())
	for i := range p.ws {
		switch {
		case p.max3.on, p.avg2 != nil: // the kernels need no row buffer
		case isMax:
			p.ws[i].f = make([]float32, g.W)
			if p.wide() {
				p.ws[i].h = make([]float32, g.W)
			}
		default:
			p.ws[i].d = make([]float64, g.W)
		}
	}
	return p, nil
}

// Run pools x [N,C,H,W] into y [N,C,OH,OW]; y must not overlap x.
func (p *Pool2D) Run(y, x []float32) error {
	g := &p.g
	if len(x) != g.N*g.C*g.H*g.W || len(y) != g.N*g.C*g.OH*g.OW {
		return fmt.Errorf("asm: pool: got x %d, y %d elements; want %d, %d", len(x), len(y), g.N*g.C*g.H*g.W, g.N*g.C*g.OH*g.OW)
	}
	if overlap32(y, x) {
		return errors.New("asm: pool: output overlaps the input")
	}
	p.x, p.y = x, y
	p.c.Do()
	p.x, p.y = nil, nil
	return nil
}

// bands computes output rows [lo, hi), numbered over (image, output
// row), of every channel: workers take bands of rows, as convolutions
// deal their tiles, so that a worker pools the rows it computed as the
// previous step's output and writes those the next step's tiles give it.
// Split by channels, ResNet-18's max pooling between its stem and its
// first convolution read half of the stem's 3 MiB from the other core
// and handed half of its output back. (Taking a band's rows last block
// first, the rows the stem wrote last and likeliest still in the core's
// L2, in blocks of four or eight output rows, made that pooling 1.3-2.5×
// slower at one and two threads: calls of fewer rows, streams the
// prefetchers lose; Zen 5.)
func (p *Pool2D) bands(ch, lo, hi int) {
	g := &p.g
	for it := lo; it < hi; {
		n, oy0 := it/g.OH, it%g.OH
		oy1 := min(g.OH, oy0+hi-it) // this image's rows of the band
		for c := range g.C {
			plane := n*g.C + c
			p.rows(ch, plane*g.OH+oy0, plane*g.OH+oy1)
		}
		it += oy1 - oy0
	}
}

// wide reports whether a max pooling's rows go through windowMax: a
// window of two or more columns and enough outputs to amortise its
// vector passes.
func (p *Pool2D) wide() bool { return p.g.KW >= 2 && p.g.OW >= 8 && p.g.W >= p.g.KW }

// windowMax sets yrow[ox] to the max of the folded row acc over output
// ox's columns: h[j] = max(acc[j : j+KW]) by KW-1 vector passes over the
// row, then each output whose window is whole reads h at its first
// column; the windows the border clips are reduced one by one. (A max is
// the same whatever the order, NaNs and signed zeros included, so this
// gives the bits of the plain loop.)
func (p *Pool2D) windowMax(yrow, acc, h []float32) {
	g := &p.g
	n := g.W - g.KW + 1 // windows that fit in the row
	copy(h[:n], acc[:n])
	for d := 1; d < g.KW; d++ {
		p.k.AccMax(h[:n], acc[d:d+n])
	}
	for ox := range yrow {
		a, b := p.x0[ox], p.x1[ox]
		if b-a == g.KW {
			yrow[ox] = h[a]
			continue
		}
		yrow[ox] = maxOf(acc[a:b])
	}
}

// maxOf is the max of x with Go's builtin (a NaN wins), -Inf when empty.
func maxOf(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// rows computes output rows [lo, hi), numbered over (plane, oy).
func (p *Pool2D) rows(ch, lo, hi int) {
	if p.max3.on {
		p.max3S2Rows(lo, hi)
		return
	}
	if p.avg2 != nil {
		p.avg2Rows(lo, hi)
		return
	}
	g, s := &p.g, &p.ws[ch]
	hw := g.H * g.W
	negInf := float32(math.Inf(-1))
	for it := lo; it < hi; it++ {
		plane, oy := it/g.OH, it%g.OH
		xp := p.x[plane*hw : (plane+1)*hw]
		yrow := p.y[it*g.OW : (it+1)*g.OW]
		y0, y1 := max(oy*g.SH-g.PT, 0), min(oy*g.SH-g.PT+g.KH, g.H)
		if p.isMax {
			if y0 >= y1 {
				fill(yrow, negInf)
				continue
			}
			acc := s.f
			copy(acc, xp[y0*g.W:(y0+1)*g.W])
			for r := y0 + 1; r < y1; r++ {
				p.k.AccMax(acc, xp[r*g.W:(r+1)*g.W])
			}
			if s.h != nil {
				p.windowMax(yrow, acc, s.h)
				continue
			}
			for ox := range yrow {
				yrow[ox] = maxOf(acc[p.x0[ox]:p.x1[ox]])
			}
			continue
		}
		acc := s.d
		clear(acc)
		for r := y0; r < y1; r++ {
			p.k.AccAdd(acc, xp[r*g.W:(r+1)*g.W])
		}
		rows := max(y1-y0, 0)
		for ox := range yrow {
			a, b := p.x0[ox], p.x1[ox]
			var sum float64
			for _, v := range acc[a:b] {
				sum += v
			}
			div := g.KH * g.KW
			if !p.countPad {
				div = rows * (b - a)
			}
			yrow[ox] = float32(sum / float64(div))
		}
	}
}

// bandsLineAligned reports whether n workers that take bands of rows
// (numbered over (image, row), rows×cols floats a plane, Chunks' even
// shares) write whole cache lines of every plane: each plane starts on a
// line, as the tensor does, and every bound between two workers' rows
// falls on one. Where it falls mid-line, the two workers write that line
// of every plane, and as they go through the planes in step it passes
// between their cores plane after plane: on the 2-vCPU Zen 5 VM with its
// cores far apart (a 460-530 ns round trip), SqueezeNet's max poolings
// (64×55×55, 128×27×27, 256×13×13 outputs) ran at 0.4-0.8× their
// one-thread speed on two threads so, and took 0.140, 0.092 and 0.079 ms
// against 0.091, 0.050 and 0.035 split by planes (medians of two runs,
// the model 4.09 → 3.95 ms). ResNet's (64×56×56) keeps its bands: split
// by planes it read half of the stem's output from the other core.
func bandsLineAligned(images, rows, cols, n int) bool {
	const lineFloats = 16
	if n < 2 {
		return true
	}
	if rows*cols%lineFloats != 0 {
		return false
	}
	for k := 1; k < n; k++ {
		if k*images*rows/n%rows*cols%lineFloats != 0 {
			return false
		}
	}
	return true
}
