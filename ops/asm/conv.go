package asm

import (
	"errors"
	"fmt"
)

// ConvGeom is the geometry of a 2-D convolution or pooling window over
// NCHW data, with the attributes already normalised (as graph's shape
// inference leaves them).
type ConvGeom struct {
	N, C, H, W     int // input
	M              int // output channels (pooling: C)
	OH, OW         int // output spatial dims
	KH, KW         int // window
	SH, SW, DH, DW int // strides and dilations, >= 1 (pooling ignores dilations)
	PT, PL         int // top and left padding; bottom and right only shape OH, OW
	Groups         int // convolution groups (pooling ignores it)
}

func (g *ConvGeom) check() error {
	for _, v := range [...]int{g.N, g.C, g.H, g.W, g.M, g.OH, g.OW, g.KH, g.KW, g.PT, g.PL} {
		if v < 0 {
			return fmt.Errorf("asm: negative size in %+v", *g)
		}
	}
	if g.SH < 1 || g.SW < 1 || g.DH < 1 || g.DW < 1 {
		return fmt.Errorf("asm: strides and dilations must be >= 1 in %+v", *g)
	}
	return nil
}

// validRange is the range of output positions o in [0, out) whose input
// position o·stride + base lies in [0, in).
func validRange(out, in, stride, base int) (lo, hi int) {
	if in-1-base < 0 {
		return 0, 0
	}
	if base < 0 {
		lo = (-base + stride - 1) / stride
	}
	hi = min(out, (in-1-base)/stride+1)
	return min(lo, hi), hi
}

// windowRanges returns, per kernel row and column, the output rows and
// columns that read inside the input.
func windowRanges(g *ConvGeom) (oyLo, oyHi, oxLo, oxHi []int) {
	oyLo, oyHi = make([]int, g.KH), make([]int, g.KH)
	for ky := range g.KH {
		oyLo[ky], oyHi[ky] = validRange(g.OH, g.H, g.SH, ky*g.DH-g.PT)
	}
	oxLo, oxHi = make([]int, g.KW), make([]int, g.KW)
	for kx := range g.KW {
		oxLo[kx], oxHi[kx] = validRange(g.OW, g.W, g.SW, kx*g.DW-g.PL)
	}
	return oyLo, oyHi, oxLo, oxHi
}

// overlapsAny reports whether y shares memory with any of xs.
func overlapsAny(y []float32, xs ...[]float32) bool {
	for _, x := range xs {
		if overlap32(y, x) {
			return true
		}
	}
	return false
}

// Conv2D is a prepared single-precision 2-D convolution
//
//	y[n,m,oy,ox] = bias[m] + Σ w[m,c,ky,kx] · x[n, g·cpg+c, oy·SH-PT+ky·DH, ox·SW-PL+kx·DW]
//
// (g = m / (M/Groups), cells in the padding count as 0). With one input
// channel per group (depthwise, or a single input channel) it runs a
// direct kernel: each output row is the sum of the kernel taps' shifted
// input rows (an axpy per tap when SW is 1). Otherwise each output
// channel group is a GEMM: weights [M/G × K] times the im2col matrix
// [K × OH·OW] (K = C/G·KH·KW), built one tile of columns at a time so it
// stays in L2, and never built at all for a 1×1, stride-1, unpadded
// convolution, whose input already is that matrix. Tiles (batch × group ×
// column block) are spread over par; each worker owns its column buffer
// and serial GEMM plans. The bias is written first and the product
// accumulated onto it.
type Conv2D struct {
	g                      ConvGeom
	k                      *RowKernels
	cpg, mpg, kk, hw, ohw  int
	bias, depthwise        bool
	oyLo, oyHi, oxLo, oxHi []int

	direct     bool // GEMM reads x itself (1×1, stride 1, no padding)
	nb, blocks int  // GEMM columns per tile and tiles per (batch, group)
	ws         []convWorker

	c          *Chunks
	x, w, b, y []float32 // operands of the current run
}

// convTileFloats bounds the im2col tile: 128K floats (512 KiB), which
// with the GEMM's packed copy of it about fills a 1 MiB L2. Measured on
// the 3×3, 64-channel, 56×56 case (BenchmarkConvTile): 16K to 64K floats
// lose 10-50% to per-tile overhead, 256K gains nothing.
var convTileFloats = 1 << 17

type convWorker struct {
	col        []float32 // im2col tile, kk × nb
	full, tail *Gemm     // plans for nb columns and for the last tile's
	args       GemmArgs
	err        error // the first GEMM error of the current run
}

// NewConv2D prepares a convolution of geometry g, with a bias input when
// bias is set, using row kernels k and GEMM variant gv (nil: the best
// ones) over par.
func NewConv2D(g ConvGeom, bias bool, k *RowKernels, gv *GemmVariant, par Par) (*Conv2D, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if g.Groups < 1 || g.C%g.Groups != 0 || g.M%g.Groups != 0 {
		return nil, fmt.Errorf("asm: conv: %d groups for %d input and %d output channels", g.Groups, g.C, g.M)
	}
	if k == nil {
		k = BestRows()
	}
	if gv == nil {
		gv = BestGemm()
	}
	c := &Conv2D{g: g, k: k, bias: bias, cpg: g.C / g.Groups, mpg: g.M / g.Groups, hw: g.H * g.W, ohw: g.OH * g.OW}
	c.kk = c.cpg * g.KH * g.KW
	c.oyLo, c.oyHi, c.oxLo, c.oxHi = windowRanges(&g)
	if c.cpg == 1 {
		c.depthwise = true
		c.c = NewChunks(par, g.N*g.M*g.OH, max(1, (1<<12)/max(1, g.OW*g.KH*g.KW)), c.depthwiseRows)
		return c, nil
	}
	c.direct = g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1 && g.PT == 0 && g.PL == 0 && g.OH == g.H && g.OW == g.W
	threads := max(1, par.Threads)
	// Columns per tile: the im2col tile (kk × nb) within convTileFloats,
	// a multiple of the micro-tile width, and enough tiles to keep every
	// worker busy.
	_, nr := gv.Tile()
	nb := max(nr, convTileFloats/max(c.kk, 1)/nr*nr)
	if c.direct {
		nb = max(nb, 512)
	}
	if planes := g.N * g.Groups; planes*((c.ohw+nb-1)/nb) < 2*threads {
		want := (c.ohw*planes + 2*threads - 1) / (2 * threads)
		nb = min(nb, max(nr, (want+nr-1)/nr*nr))
	}
	c.nb = min(nb, max(c.ohw, 1))
	c.blocks = (c.ohw + c.nb - 1) / c.nb
	c.c = NewChunks(par, g.N*g.Groups*c.blocks, 1, c.gemmTiles)
	c.ws = make([]convWorker, c.c.N())
	ldb := c.nb
	if c.direct {
		ldb = c.hw
	}
	for i := range c.ws {
		w := &c.ws[i]
		if !c.direct {
			w.col = make([]float32, c.kk*c.nb)
		}
		var err error
		cfg := GemmConfig{M: c.mpg, N: c.nb, K: c.kk, LDA: c.kk, LDB: ldb, LDC: c.ohw, Alpha: 1, Accumulate: bias}
		if w.full, err = NewGemm(cfg, gv, Par{}); err != nil {
			return nil, err
		}
		if rest := c.ohw % c.nb; rest != 0 {
			cfg.N = rest
			if !c.direct {
				cfg.LDB = rest
			}
			if w.tail, err = NewGemm(cfg, gv, Par{}); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// Run computes y from x [N,C,H,W], w [M,C/G,KH,KW] and b [M] (nil without
// a bias). y must not overlap the inputs.
func (c *Conv2D) Run(y, x, w, b []float32) error {
	g := &c.g
	nb := 0
	if c.bias {
		nb = g.M
	}
	if len(x) != g.N*g.C*c.hw || len(w) != g.M*c.kk || len(b) != nb || len(y) != g.N*g.M*c.ohw {
		return fmt.Errorf("asm: conv: got x %d, w %d, bias %d, y %d elements; want %d, %d, %d, %d",
			len(x), len(w), len(b), len(y), g.N*g.C*c.hw, g.M*c.kk, nb, g.N*g.M*c.ohw)
	}
	if overlapsAny(y, x, w, b) {
		return errors.New("asm: conv: output overlaps an input")
	}
	c.x, c.w, c.b, c.y = x, w, b, y
	c.c.Do()
	c.x, c.w, c.b, c.y = nil, nil, nil, nil
	for i := range c.ws {
		if err := c.ws[i].err; err != nil {
			c.ws[i].err = nil
			return fmt.Errorf("asm: conv: %w", err)
		}
	}
	return nil
}

// fill sets every element of s to v.
func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// depthwiseRows computes output rows [lo, hi), numbered over (n, m, oy).
func (c *Conv2D) depthwiseRows(_, lo, hi int) {
	g := &c.g
	taps := g.KH * g.KW
	for it := lo; it < hi; it++ {
		plane, oy := it/g.OH, it%g.OH
		m := plane % g.M
		yrow := c.y[it*g.OW : (it+1)*g.OW]
		var b float32
		if c.bias {
			b = c.b[m]
		}
		fill(yrow, b)
		xp := c.x[(plane/g.M*g.C+m/c.mpg)*c.hw:][:c.hw]
		wk := c.w[m*taps : (m+1)*taps]
		for ky := range g.KH {
			if oy < c.oyLo[ky] || oy >= c.oyHi[ky] {
				continue
			}
			xr := xp[(oy*g.SH-g.PT+ky*g.DH)*g.W:][:g.W]
			for kx := range g.KW {
				lo, hi := c.oxLo[kx], c.oxHi[kx]
				if lo >= hi {
					continue
				}
				a, base := wk[ky*g.KW+kx], kx*g.DW-g.PL
				if g.SW == 1 {
					c.k.Axpy(yrow[lo:hi], xr[lo+base:hi+base], a)
					continue
				}
				for ox := lo; ox < hi; ox++ {
					yrow[ox] += a * xr[ox*g.SW+base]
				}
			}
		}
	}
}

// gemmTiles computes tiles [lo, hi), numbered over (n, group, block), with
// worker ch's buffers.
func (c *Conv2D) gemmTiles(ch, lo, hi int) {
	g, wk := &c.g, &c.ws[ch]
	for it := lo; it < hi; it++ {
		plane, blk := it/c.blocks, it%c.blocks
		n, grp := plane/g.Groups, plane%g.Groups
		j0 := blk * c.nb
		cols := min(c.nb, c.ohw-j0)
		xg := c.x[(n*g.C+grp*c.cpg)*c.hw:][:c.cpg*c.hw]
		yoff := (n*g.M+grp*c.mpg)*c.ohw + j0
		if c.bias {
			for m := range c.mpg {
				fill(c.y[yoff+m*c.ohw:][:cols], c.b[grp*c.mpg+m])
			}
		}
		a := &wk.args
		a.A, a.C = c.w[grp*c.mpg*c.kk:], c.y[yoff:]
		if c.direct {
			a.B = xg[j0:]
		} else {
			a.B = wk.col[:c.kk*cols]
			c.im2col(a.B, xg, j0, cols)
		}
		plan := wk.full
		if cols != c.nb {
			plan = wk.tail
		}
		// Shapes and lengths are fixed by construction, so an error here
		// is a bug in this file; Run reports it.
		if err := plan.Run(a); err != nil && wk.err == nil {
			wk.err = err
		}
		a.A, a.B, a.C = nil, nil, nil
	}
}

// im2col writes the K × cols matrix of output positions [j0, j0+cols):
// row (c, ky, kx), column p holds the input cell output position j0+p
// reads through that tap, or 0 in the padding.
func (c *Conv2D) im2col(col, xg []float32, j0, cols int) {
	g := &c.g
	r := 0
	for ci := range c.cpg {
		xc := xg[ci*c.hw : (ci+1)*c.hw]
		for ky := range g.KH {
			for kx := range g.KW {
				row := col[r*cols : (r+1)*cols]
				r++
				lo, hi, base := c.oxLo[kx], c.oxHi[kx], kx*g.DW-g.PL
				oy, ox := j0/g.OW, j0%g.OW
				for i := 0; i < cols; oy, ox = oy+1, 0 {
					seg := min(g.OW-ox, cols-i)
					d := row[i : i+seg]
					i += seg
					a, b := max(lo, ox), min(hi, ox+seg)
					if oy < c.oyLo[ky] || oy >= c.oyHi[ky] || a >= b {
						clear(d)
						continue
					}
					clear(d[:a-ox])
					clear(d[b-ox:])
					xr := xc[(oy*g.SH-g.PT+ky*g.DH)*g.W:][:g.W]
					if g.SW == 1 {
						copy(d[a-ox:b-ox], xr[a+base:b+base])
						continue
					}
					for o := a; o < b; o++ {
						d[o-ox] = xr[o*g.SW+base]
					}
				}
			}
		}
	}
}
