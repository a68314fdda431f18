package asm

import (
	"math"
	"slices"
)

// Winograd's F(2×2, 3×3) for stride-1 3×3 convolutions: each 2×2 tile of
// output is Aᵀ·[Σ_c U_c ⊙ V_c]·A, with U_c = G·g_c·Gᵀ the 4×4 transform of
// channel c's 3×3 weights (once, when packing) and V_c = Bᵀ·d_c·B that of
// the tile's 4×4 input patch. Per tile and channel pair that is 16
// multiply-adds where the direct conv does 36: the sums over c become 16
// independent products U_ξ[M×C]·V_ξ[C×tiles] (ξ the 16 positions of the
// transformed tile), which run through the direct path's micro-kernels
// (conv_direct.go), reading V_ξ as a packed panel of sixteen tiles.
//
// A block of tiles (whole rows of tiles) is transformed into the
// worker's V buffer, its 16 products written to its M buffer and folded
// back into output rows, with the bias, by the output transform; the
// epilogue then runs on them while in cache. Both buffers stay in L2.
//
// The transforms add and subtract up to 16 inputs, so huge or non-finite
// values could overflow or meet as Inf - Inf where the direct conv gives
// a finite or infinite result. The input transform therefore sums |x|
// of every cell it reads, and a block whose sums reach winoMaxIn (or NaN)
// is computed by the direct path instead; weights whose transform
// reaches winoMaxIn never take this path. Within those bounds every
// product and sum is finite (2^49 · 2^47 · C · 9 < 2^128 for C < 2^20).

// winoMaxIn bounds the inputs (and transformed weights) of the path.
const winoMaxIn = 1 << 45

// convWinoOn enables the path (a variable for benchmarks and tests that
// compare it with the direct path).
var convWinoOn = true

// convWino is the Winograd plan of a Conv2D.
type convWino struct {
	k      *winoKernels
	vs, ms int   // ξ strides of the V and M buffers
	tw, th int   // tiles per row and rows of tiles
	tb     int   // tiles per block: whole rows, a multiple of 16
	blocks int   // blocks per image
	off    []int // step s of a packed V panel is 16·s floats on
	ws     []winoWorker
}

type winoWorker struct {
	v, m []float32 // transformed inputs [16][tb/16][C][16], products [16][M][tb] (ξ strides vs, ms)
	acc  [8]float32
	_    workerPad
}

// winoSkew pads the ξ stride of the V and M buffers by a cache line:
// whole multiples of 4 KiB would put the sixteen values a transform
// reads or writes in one L1 set.
const winoSkew = 16

// winoBlockFloats bounds a worker's V and M buffers together (80 Ki
// floats, 320 KiB of a 512 KiB L2): against 40 Ki, the CNN's 32-channel
// 64² conv takes blocks of two tile rows instead of one, fewer passes
// over the transformed weights and fewer short calls (1.05-1.10 →
// 0.70-0.82 ms, alternated runs; its wider convs keep their blocks).
const winoBlockFloats = 80 << 10

// planWino returns the Winograd plan when the convolution qualifies:
// stride-1 undilated 3×3 on the direct path, one group, no pooling,
// even OH, OW a multiple of 16, at least 8 input and output channels,
// and transforms in assembly for the feature.
func (c *Conv2D) planWino(threads int) *convWino {
	g := &c.g
	if !convWinoOn || !c.direct || c.pooled.on || g.Groups != 1 || !g.is3x3S1() || g.OH%2 != 0 || g.OW%16 != 0 || g.C < 8 || g.M < 8 {
		return nil
	}
	wk := winoKernelsFor(c.v.Feature)
	if wk == nil {
		return nil
	}
	w := &convWino{k: wk, tw: g.OW / 2, th: g.OH / 2}
	unit := w.tw // a block is whole rows of tiles and whole panels of 16
	if unit%16 != 0 {
		unit *= 2
	}
	units := w.tw * w.th / unit
	if units*unit != w.tw*w.th {
		return nil // an odd number of 8-tile rows: a panel would straddle images
	}
	per := max(1, winoBlockFloats/(16*(g.C+g.M))/unit) // units per block
	for per > 1 && g.N*((units+per-1)/per) < 4*threads {
		per-- // four blocks per worker, which they take as they go
	}
	w.tb = per * unit
	w.blocks = (units + per - 1) / per
	w.vs, w.ms = g.C*w.tb+winoSkew, g.M*w.tb+winoSkew
	w.off = make([]int, g.C)
	for s := range w.off {
		w.off[s] = 16 * s
	}
	return w
}

// winoWorkers makes the per-worker buffers.
func (w *convWino) winoWorkers(n int) {
	w.ws = make([]winoWorker, n)
	for i := range w.ws {
		w.ws[i].v = make([]float32, 16*w.vs)
		w.ws[i].m = make([]float32, 16*w.ms)
	}
}

// packWino appends the transformed weights U_ξ (each M×C, in the direct
// path's panels: directPanels rows, steps interleaved) to pw's direct
// packing, and records whether they and the bias b are small enough for
// the path (the bias is added after the sums there, first on the direct
// path, so a huge one could round to another overflow).
func (c *Conv2D) packWino(pw *ConvWeights, w, b []float32) {
	g := &c.g
	base := len(pw.data)
	size := 16 * g.M * g.C
	pw.data = slices.Grow(pw.data, size)[:base+size]
	u := pw.data[base:]
	ok := true
	for _, v := range b {
		ok = ok && math.Abs(float64(v)) < winoMaxIn
	}
	for m := range g.M {
		// The panel holding row m, and m's row in it.
		m0, rows := 0, 0
		for _, r := range c.dpan {
			if m < m0+r {
				rows = r
				break
			}
			m0 += r
		}
		for ci := range g.C {
			t, fine := winoWeightTransform(w[(m*g.C+ci)*9:][:9])
			ok = ok && fine
			for xi, v := range t {
				u[xi*g.M*g.C+m0*g.C+ci*rows+m-m0] = v
			}
		}
	}
	pw.wino = ok
}

// winoWeightTransform returns U = G·k·Gᵀ of a 3×3 kernel k, value (a, b)
// at 4a+b, formed in float64, and whether every value is below winoMaxIn
// (false for NaN too).
func winoWeightTransform(k []float32) (u [16]float32, ok bool) {
	gm := [4][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	ok = true
	for a := range 4 {
		for b := range 4 {
			s := 0.0
			for p := range 3 {
				for q := range 3 {
					s += gm[a][p] * float64(k[p*3+q]) * gm[b][q]
				}
			}
			u[4*a+b] = float32(s)
			ok = ok && math.Abs(s) < winoMaxIn
		}
	}
	return u, ok
}

// winoTiles is the body of worker ch on the Winograd path: it takes
// blocks, numbered over (n, block), from the run's claims.
func (c *Conv2D) winoTiles(ch, _, _ int) {
	g, w := &c.g, c.wino
	wk, ww := &c.ws[ch], &w.ws[ch]
	for {
		i, ok := c.claims.next(ch)
		if !ok {
			return
		}
		n, blk := i/w.blocks, i%w.blocks
		t0 := blk * w.tb
		nt := min(w.tb, w.tw*w.th-t0)
		ty0, rows := t0/w.tw, nt/w.tw
		if !c.run.wino || !c.winoIn(ww, n, ty0, rows) {
			c.tile(wk, n, 0, 2*ty0*g.OW, 2*rows*g.OW) // the direct path
			continue
		}
		c.winoProducts(ww, nt)
		c.winoOut(ww, n, ty0, rows)
	}
}

// winoIn transforms the input patches of tile rows [ty0, ty0+rows) of
// image n into ww.v, reporting whether every cell read is below
// winoMaxIn.
func (c *Conv2D) winoIn(ww *winoWorker, n, ty0, rows int) bool {
	g, w, p := &c.g, c.wino, &c.pad
	php := p.hp * p.wp
	x := c.run.x[n*g.C*php:][:g.C*php]
	dstride := w.vs
	ww.acc = [8]float32{}
	for ci := range g.C {
		plane := x[ci*php:][:php]
		for r := range rows {
			ty := ty0 + r
			for tx := 0; tx < w.tw; tx += 8 {
				t := r*w.tw + tx // within the block
				src := plane[2*ty*p.wp+2*tx:]
				_ = src[3*p.wp+17] // the four patch rows, two columns past the eighth tile's
				dst := ww.v[t/16*g.C*16+ci*16+t%16:]
				_ = dst[15*dstride+7]
				w.k.in(&src[0], p.wp, &dst[0], dstride, &ww.acc)
			}
		}
	}
	for _, s := range ww.acc {
		if !(s < winoMaxIn) {
			return false
		}
	}
	return true
}

// winoProducts computes the 16 products of a block of nt tiles into ww.m.
func (c *Conv2D) winoProducts(ww *winoWorker, nt int) {
	g, w := &c.g, c.wino
	mc := g.M * g.C
	u := c.run.a[c.astride:][:16*mc]
	for xi := range 16 {
		v := ww.v[xi*w.vs:][:g.C*w.tb]
		m := ww.m[xi*w.ms:][:g.M*w.tb]
		m0 := 0
		for _, rows := range c.dpan {
			a := u[xi*mc+m0*g.C:][:rows*g.C]
			for p := 0; p < nt; p += 16 {
				x := v[p*g.C:][:16*g.C]
				y := m[m0*w.tb+p:]
				_ = y[(rows-1)*w.tb+15]
				c.taps.direct(rows, g.C, &a[0], &x[0], &w.off[0], nil, &y[0], w.tb, 0)
			}
			m0 += rows
		}
	}
}

// winoOut folds the block's products into output rows [2·ty0,
// 2·(ty0+rows)) of image n, with the bias, then runs the epilogue.
func (c *Conv2D) winoOut(ww *winoWorker, n, ty0, rows int) {
	g, w := &c.g, c.wino
	sstride := w.ms
	var bias []float32
	if c.bias {
		bias = c.run.a[g.M*c.kk:][:g.M]
	}
	for m := range g.M {
		var b float32
		if bias != nil {
			b = bias[m]
		}
		plane := c.run.y[(n*g.M+m)*c.ohw:][:c.ohw]
		for r := range rows {
			ty := ty0 + r
			for tx := 0; tx < w.tw; tx += 8 {
				src := ww.m[m*w.tb+r*w.tw+tx:]
				_ = src[15*sstride+7]
				y := plane[2*ty*g.OW+2*tx:]
				_ = y[g.OW+15]
				w.k.out(&src[0], sstride, &y[0], g.OW, b)
			}
		}
		if c.run.finishes() {
			off := (n*g.M+m)*c.ohw + 2*ty0*g.OW
			c.finish(c.run.y[off:][:2*rows*g.OW], off)
		}
	}
}
