package asm

import "unsafe"

// The channel-interleaved path of the depthwise family, for small planes
// (7×7, 14×14: the late stages of MobileNet- and EfficientNet-class
// models, and up to 56×56 with 5×5 kernels or strides: dwUseChan), where
// the plane path's padded-width blocks are mostly waste and its
// per-plane costs dominate. It vectorises across channels
// instead of positions, dwLanes output channels of one image at a time
// (a group):
//
//  1. The group's input planes (output channel m0+l reads input channel
//     (m0+l)/mpg; lanes past M repeat the last channel) are transposed
//     into the worker's scratch, laid out as the plane path's zero-padded
//     phase planes with every cell a vector of dwLanes channels:
//     scratch[(phase·hq·wq + r·wq + c)·16 + l]. Only input cells are
//     written (chanIn, through the dpos table of each input cell's
//     place); padding stays the zeros it was allocated as.
//  2. Output position p = (oy, ox) reads tap t at pos[p] + off[t] (the
//     plane path's offsets, in vectors), so its 16 channels are
//     bias + Σ_t w[t]·scratch[pos[p]+off[t]], one fused multiply-add a
//     tap with the weights packed [tap][16] (PackWeights, next to the
//     plain copy). The taps kernel holds eight positions in registers,
//     any eight (the table), so no column is computed for nothing past
//     the rows: only the last block's tail (P mod 8 positions).
//  3. The [P][16] outputs are transposed back into the group's output
//     planes (chanOut), which are contiguous in y, and the epilogue
//     (Conv2D.finish) applied to them while in cache.
//
// The transposes are register transposes of 16×16 (avx512), 8×8 (avx2)
// or 4×4 (neon) blocks; a last step that would be partial backs up to
// end at the last position instead, redoing a few (the same values
// again), since masked loads and stores cost more than a whole step.
//
// Each output's sum is the plane path's: bias first, then the taps in
// order, fused, so the two paths give the same bits on every variant
// (the Go twins, unfused, agree with each other), and neither depends
// on the thread count (a group is one worker's).

// dwLanes is the channels a group of the interleaved path holds.
const dwLanes = 16

// dwChanTapsKernel computes blocks·8 output positions of 16 channels:
//
//	for p < 8·blocks, l < 16: y[16p+l] = w[16·taps+l] + Σ_{t < taps} w[16t+l]·x[pos[p]+off[t]+l]
//
// (w holds taps weight vectors, then the bias vector), each sum taken t
// ascending; taps >= 1, blocks >= 1, every pos[p]+off[t]+16 <= len(x);
// the Go caller (runChan) checks all of it.
type dwChanTapsKernel func(y, x *float32, pos, off *int, w *float32, taps, blocks int)

// dwIdx is a table of offsets, none negative, checked once, with its
// largest entry.
type dwIdx struct {
	at  []int
	max int
}

func newDwIdx(at []int) dwIdx {
	d := dwIdx{at: at}
	for _, v := range at {
		if v < 0 {
			panic("asm: depthwise: negative offset")
		}
		d.max = max(d.max, v)
	}
	return d
}

// dwChan is the interleaved path's plan.
type dwChan struct {
	on     bool
	groups int   // ⌈M/16⌉ channel groups an image
	pos    dwIdx // output positions' reads, vectors ×16, rounded up to 8 positions (the rest read 0)
	dpos   dwIdx // input cells' places in the scratch, ×16
	taps   dwTaps
	wAt    int // the packed weights' interleaved part: groups × (taps+1)×16
	pad    int // scratch floats
	out    int // output scratch floats: P rounded up to 16 positions
}

// dwUseChan is the one place the path is chosen, by the interleaved
// path's scratch a worker (SH·SW phase planes of hq×wq cells of 16
// channels, 64 bytes a cell) and the convolution's shape; pooled
// convolutions stay on the plane path. Measured on Zen 5 at one thread
// (BenchmarkConvDepthwisePaths, minimum of interleaved runs), the
// interleaved path is 2-4× faster at 7×7 to 14×14 and ahead up to
// 24×24 at 3×3 stride 1; from 28×28 the two tie at 3×3 stride 1 (the
// plane path's blocks are full), but the interleaved path stays 1.2-2×
// ahead with 5×5 kernels or strides (40×40 5×5: 46 against 20 GMAC/s;
// 56×56 5×5 stride 2: 1.6×). Its scratch is 16 times the plane path's,
// so it is taken only up to 48 KiB a worker, or 256 KiB (56×56 at
// stride 2, 40×40 at 5×5) where it wins by more than noise.
func dwUseChan(g *ConvGeom, pooled bool, hq, wq int) bool {
	scratch := g.SH * g.SW * hq * wq * dwLanes * 4
	return !pooled && (scratch <= 48<<10 || scratch <= 256<<10 && (g.KH*g.KW >= 25 || g.SH*g.SW > 1))
}

// prepareChan fills d.ch for geometry g (the phase geometry d.hq, d.wq
// set).
func (c *Conv2D) prepareChan(par Par) {
	g, d := &c.g, &c.dw
	ch := &d.ch
	ch.on = true
	ch.groups = (g.M + dwLanes - 1) / dwLanes
	planeQ := d.hq * d.wq
	p := g.OH * g.OW
	pos := make([]int, roundUp(p, 8))
	for oy := range g.OH {
		for ox := range g.OW {
			pos[oy*g.OW+ox] = (oy*d.wq + ox) * dwLanes
		}
	}
	ch.pos = newDwIdx(pos)
	dpos := make([]int, g.H*g.W)
	for iy := range g.H {
		pr := g.PT + iy
		for ix := range g.W {
			pc := g.PL + ix
			phase := (pr%g.SH)*g.SW + pc%g.SW
			dpos[iy*g.W+ix] = (phase*planeQ + pr/g.SH*d.wq + pc/g.SW) * dwLanes
		}
	}
	ch.dpos = newDwIdx(dpos)
	off := phaseTaps(g, planeQ, d.wq)
	for i := range off {
		off[i] *= dwLanes // sixteen channels a cell
	}
	ch.taps = newDwTaps(off)
	ch.wAt = g.M * len(off)
	if c.bias {
		ch.wAt += g.M
	}
	ch.wAt = roundUp(ch.wAt, dwLanes) // every weight vector on a 64-byte line
	ch.pad = g.SH * g.SW * planeQ * dwLanes
	ch.out = roundUp(p, 16) * dwLanes
	items := g.N * ch.groups
	if p == 0 {
		items = 0
	}
	c.c = NewChunks(par, items, max(1, (1<<15)/max(1, dwLanes*p*len(off))), c.depthwiseChans)
	d.ws = make([]dwWorker, c.c.N())
	for i := range d.ws {
		d.ws[i] = dwWorker{pad: dwAligned(ch.pad), out: dwAligned(ch.out)}
	}
}

// packDepthwise packs a depthwise convolution's weights: w then b as
// given (the plane path's), then, for the interleaved path, from wAt (a
// 64-byte line: the buffer is aligned), every group's taps×16 weights
// (lane l: output channel 16·group+l, zero past M) and its 16 biases.
func (c *Conv2D) packDepthwise(pw *ConvWeights, w, b []float32) {
	ch := &c.dw.ch
	if !ch.on {
		pw.data = append(append(pw.data[:0], w...), b...)
		return
	}
	g := &c.g
	taps := g.KH * g.KW
	need := ch.wAt + ch.groups*(taps+1)*dwLanes
	if cap(pw.data) < need || uintptr(unsafe.Pointer(unsafe.SliceData(pw.data)))%64 != 0 {
		pw.data = dwAligned(need)
	}
	pw.data = pw.data[:need]
	copy(pw.data, w)
	copy(pw.data[len(w):], b)
	iw := pw.data[ch.wAt:]
	clear(iw)
	for m := range g.M {
		grp, l := m/dwLanes, m%dwLanes
		gw := iw[grp*(taps+1)*dwLanes:][:(taps+1)*dwLanes]
		for t := range taps {
			gw[t*dwLanes+l] = w[m*taps+t]
		}
		if b != nil {
			gw[taps*dwLanes+l] = b[m]
		}
	}
}

// dwAligned allocates n floats starting on a 64-byte line (so that the
// interleaved path's vectors are whole lines).
func dwAligned(n int) []float32 {
	buf := make([]float32, n+15)
	off := int((64 - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64) % 64 / 4)
	return buf[off : off+n : off+n]
}

// runChan computes the 16 channels of len(pos.at) positions into y
// (y[16p+l] = w[16·taps+l] + Σ_t w[16t+l]·x[pos[p]+off[t]+l]), checking
// every length first.
func (k *depthwiseKernels) runChan(y, x []float32, pos *dwIdx, t *dwTaps, w []float32) {
	n, taps := len(pos.at), len(t.off)
	if n <= 0 || n%8 != 0 || len(y) != dwLanes*n || len(w) != dwLanes*(taps+1) || pos.max+t.reach+dwLanes > len(x) {
		panic("asm: depthwise: bad interleaved run lengths")
	}
	k.chanTaps(&y[0], &x[0], &pos.at[0], &t.off[0], &w[0], taps, n/8)
}

// chanInterleave sets dst[dpos[p]+l] = src[roff[l]+p] for p < len(dpos.at),
// l < 16, checking every length first.
func (k *depthwiseKernels) chanInterleave(dst []float32, dpos *dwIdx, src []float32, roff *[dwLanes]int) {
	n := len(dpos.at)
	if n <= 0 || dpos.max+dwLanes > len(dst) {
		panic("asm: depthwise: bad interleave lengths")
	}
	for _, o := range roff {
		if o < 0 || o > len(src)-n {
			panic("asm: depthwise: bad interleave source")
		}
	}
	k.chanIn(&dst[0], &dpos.at[0], &src[0], &roff[0], n)
}

// chanDeinterleave sets dst[l·ldd+p] = src[16p+l] for l < lanes, p < n,
// checking every length first (src holds n rounded up to 16 positions).
func (k *depthwiseKernels) chanDeinterleave(dst []float32, ldd int, src []float32, n, lanes int) {
	if n <= 0 || lanes <= 0 || lanes > dwLanes || n > ldd || (lanes-1)*ldd+n > len(dst) || roundUp(n, 16)*dwLanes > len(src) {
		panic("asm: depthwise: bad deinterleave lengths")
	}
	k.chanOut(&dst[0], ldd, &src[0], n, lanes)
}

// depthwiseChans computes items [lo, hi), numbered over (n, group), of
// worker wk.
func (c *Conv2D) depthwiseChans(wk, lo, hi int) {
	g, d := &c.g, &c.dw
	ch := &d.ch
	w := &d.ws[wk]
	taps := len(ch.taps.off)
	p := g.OH * g.OW
	for item := lo; item < hi; item++ {
		n, grp := item/ch.groups, item%ch.groups
		m0 := grp * dwLanes
		lanes := min(dwLanes, g.M-m0)
		for l := range w.roff {
			w.roff[l] = (n*g.C + (m0+min(l, lanes-1))/c.mpg) * c.hw
		}
		d.k.chanInterleave(w.pad, &ch.dpos, c.run.x, &w.roff)
		wt := c.run.a[ch.wAt+grp*(taps+1)*dwLanes:][:(taps+1)*dwLanes]
		d.k.runChan(w.out[:len(ch.pos.at)*dwLanes], w.pad, &ch.pos, &ch.taps, wt)
		at := (n*g.M + m0) * p
		y := c.run.y[at:][:lanes*p]
		d.k.chanDeinterleave(y, p, w.out, p, lanes)
		c.finish(y, at)
	}
}
