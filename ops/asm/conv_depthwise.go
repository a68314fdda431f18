package asm

import "github.com/kilnml/kiln/ops/cpuid"

// The direct path of Conv2D for one input channel per group (depthwise
// convolutions, channel multipliers included). It has two paths, chosen
// by shape in one place (dwUseChan): the plane path below, and for small
// planes the channel-interleaved path (conv_depthwise_chan.go), which
// vectorises across 16 channels instead of across positions and shares
// the plane path's scratch geometry and tap offsets and its sums, bit
// for bit.
//
// The plane path goes one (n, m) output plane at a time:
//
//  1. The plane's input channel is copied into the worker's scratch,
//     zero-padded to hp×wp and, for strides SH, SW > 1, split into SH·SW
//     phase planes of hq×wq, phase (py, px)[r][c] = padded[SH·r+py][SW·c+px]
//     (with stride 1 the one phase is the padded plane itself). Only the
//     input cells are written: the padding cells stay the zeros they were
//     allocated as, so every plane after the first costs one copy.
//  2. Tap (ky, kx) of output (oy, ox) reads padded[oy·SH+ky·DH][ox·SW+kx·DW],
//     which is phase (ky·DH mod SH, kx·DW mod SW) at (oy+ky·DH/SH,
//     ox+kx·DW/SW): with the output numbered i = oy·wq + ox (wq columns a
//     row, the last wq-OW of them discarded), every tap reads the
//     contiguous run scratch[off[t]+i]. So the whole plane is one
//     multi-tap kernel call, y[i] = bias + Σ_t w[t]·scratch[off[t]+i],
//     whose accumulators stay in registers across all the taps.
//  3. The OW valid columns of each row are copied out and the epilogue
//     (activation, residual; or the 2×2 max pool) applied while they are
//     in cache.
//
// Steps 1-3 go by bands of output rows (about dwBandFloats outputs
// each), loading only the input rows the band reads, so that the band's
// input, outputs and scratch stay in L1 on large planes.
//
// Padding cells are real zeros multiplied by the weights, as ONNX
// defines the padding (and as the GEMM path, which reads a zero-padded
// copy too, computes it): a NaN or infinite weight meeting the padding
// gives NaN (0·Inf), as ONNX Runtime and PyTorch do.

// dwTapsKernel computes blocks·B consecutive outputs, B the variant's
// block (depthwiseKernels.block):
//
//	for i < blocks·B: y[i] = bias + Σ_{t < taps} w[t]·x[off[t]+i]
//
// each sum taken t ascending (so every variant with fused multiply-adds
// gives the same bits, whichever block an output falls in); taps >= 1,
// blocks >= 1, y holds blocks·B floats, w and off taps entries, and
// every off[t]+blocks·B <= len(x); the Go caller (depthwiseKernels.run)
// checks all of it.
type dwTapsKernel func(y, x *float32, off *int, w *float32, taps, blocks int, bias float32)

// depthwiseKernels is one implementation of the depthwise kernel family.
type depthwiseKernels struct {
	name    string
	feature cpuid.Variant
	// taps computes whole blocks of block outputs, which its
	// accumulators hold. Every taps run is a multiple of block long: a
	// plane's last block computes up to block-1 outputs past its rows
	// (into scratch, discarded), cheaper than smaller blocks, whose
	// fewer accumulators leave the FMAs' latency exposed.
	block int
	taps  dwTapsKernel
	// rows3, where the variant has it, computes a 3×3 stride-1
	// convolution's output rows four at a time, with taps's sums to the
	// bit (dwRows3Kernel).
	rows3 dwRows3Kernel
	// split2 deinterleaves rows rows of m floats (both >= 1) from src
	// (lds apart) into e and o (ldd apart): for r < rows, j < m,
	// (e if j is even, else o)[r·ldd + j/2] = src[r·lds + j]. The caller
	// (splitRows) checks that every row fits.
	split2 func(e, o *float32, ldd int, src *float32, lds int, rows, m int)
	// copy2 copies a rows×cols block (both >= 1) between row strides:
	// dst[r·ldd+j] = src[r·lds+j]. The caller (copyRows) checks that
	// both reach (rows-1)·ld+cols floats.
	copy2 func(dst *float32, ldd int, src *float32, lds int, rows, cols int)
	// copyClamp, where the variant has it, is copy2 applying the panel
	// kernels' in-register clamp (convRun.clamp flags: gemmRelu, or
	// gemmClamp with the bound in the upper half) as it copies, so the
	// epilogue needs no pass of its own.
	copyClamp func(dst *float32, ldd int, src *float32, lds int, rows, cols int, flags uint)
	// The interleaved path's kernels (conv_depthwise_chan.go): chanTaps
	// its taps kernel; chanIn sets dst[dpos[p]+l] = src[roff[l]+p] for
	// p < n (>= 1), l < 16 (the caller, chanInterleave, checks every
	// place); chanOut sets dst[l·ldd+p] = src[16p+l] for l < lanes
	// (1..16), p < n (>= 1), src holding n rounded up to 16 positions
	// (chanDeinterleave checks it).
	chanTaps dwChanTapsKernel
	chanIn   func(dst *float32, dpos *int, src *float32, roff *int, n int)
	chanOut  func(dst *float32, ldd int, src *float32, n, lanes int)
	// prefetchW, where the variant has it, asks for cache lines in the
	// state a write needs (prefetchForWrite).
	prefetchW func(p *float32, lines int)
}

// dwRows3Kernel computes groups·4 output rows of a 3×3 stride-1
// depthwise convolution whose rows are wq floats apart (in x, the padded
// plane, and in y), 16·vecs columns a row (16·vecs >= wq: the columns
// past wq are the next row's first, with the same sums):
//
//	y[(4g+r)·wq + c] = bias + Σ_{ky,kx < 3} w[3ky+kx]·x[(4g+r+ky)·wq + kx + c]
//
// summed as dwTapsKernel sums the taps ky·wq + kx (fused, 3ky+kx
// ascending), so the bits are the same. Each input vector it loads
// feeds every output row that reads it (up to three), where the taps
// kernel loads it once a tap: a third of the loads, which bound that
// kernel (MobileNetV2's 112² and 56² planes).
type dwRows3Kernel func(y, x, w *float32, wq, groups, vecs int, bias float32)

// dwRowsOn lets tests and benchmarks turn the rows kernel off.
var dwRowsOn = true

// dwPrefetchWFloats bounds the output planes whose lines the plane path
// asks for ahead, in the state a write needs, while it computes the
// plane before (prefetchForWrite): where the output's buffer was last
// written by another core (a model's arena, reused by steps split
// otherwise), each line's first write waited on that core. MobileNetV2
// at two threads on the 2-vCPU Zen 5 VM with its cores 410-525 ns apart
// (eight alternated rounds): its 192×28² depthwise steps 0.080 → 0.048
// ms, the 144×56² one 0.155 → 0.140, the stride-2 96×56² one 0.26 →
// 0.24, the steps' sum 4.06 → 3.96 ms; the 112² planes (50 KiB, past
// this bound) ran alike with it.
const dwPrefetchWFloats = 4 << 10

// dwBandFloats is about how many outputs a band computes.
const dwBandFloats = 2048

// depthwiseGo is the pure-Go variant: the twins of the assembly.
var depthwiseGo = &depthwiseKernels{
	name: "go", feature: cpuid.Generic, block: 16,
	taps: dwTaps16Go, split2: dwSplit2Go, copy2: dwCopy2Go,
	chanTaps: dwChanTapsGo, chanIn: dwChanInGo, chanOut: dwChanOutGo,
}

// depthwiseVariants lists the variants this CPU and build can run, best
// first, ending with "go" (KILN_CPU does not shorten it: tests run all).
func depthwiseVariants() []*depthwiseKernels { return depthwiseFamily.variants() }

// bestDepthwise is the variant depthwise convolutions dispatch to: the
// best one cpuid.Allows (which honours KILN_CPU), chosen once.
func bestDepthwise() *depthwiseKernels { return depthwiseFamily.best() }

// depthwiseFor is the variant a convolution given row kernels k runs:
// the Go twins with the Go row kernels (a caller asking for pure Go gets
// pure Go), else the best one (its vector width need not be k's).
func depthwiseFor(k *RowKernels) *depthwiseKernels {
	if k.Feature == cpuid.Generic {
		return depthwiseGo
	}
	return bestDepthwise()
}

// dwTaps are the read offsets of a convolution's taps, checked once.
type dwTaps struct {
	off   []int
	reach int // the largest offset
}

// newDwTaps checks off (non-empty, none negative) and notes its reach.
func newDwTaps(off []int) dwTaps {
	if len(off) == 0 {
		panic("asm: depthwise: no taps")
	}
	t := dwTaps{off: off}
	for _, o := range off {
		if o < 0 {
			panic("asm: depthwise: negative tap offset")
		}
		t.reach = max(t.reach, o)
	}
	return t
}

// run sets y[i] = bias + Σ_t w[t]·x[t.off[t]+i] for i < len(y), a positive
// multiple of k.block, checking every length first.
func (k *depthwiseKernels) run(y, x []float32, t *dwTaps, w []float32, bias float32) {
	n, taps := len(y), len(t.off)
	if n <= 0 || n%k.block != 0 || len(w) != taps || t.reach > len(x)-n {
		panic("asm: depthwise: bad run lengths")
	}
	k.taps(&y[0], &x[0], &t.off[0], &w[0], taps, n/k.block, bias)
}

// runRows3 runs rows3 over groups·4 rows of wq floats from y and x,
// checking every length first.
func (k *depthwiseKernels) runRows3(y, x, w []float32, wq, groups int, bias float32) {
	vecs := (wq + 15) / 16
	if groups <= 0 || wq <= 0 || len(w) != 9 || len(y) < (4*groups-1)*wq+16*vecs || len(x) < (4*groups+1)*wq+16*vecs+2 {
		panic("asm: depthwise: bad rows run lengths")
	}
	k.rows3(&y[0], &x[0], &w[0], wq, groups, vecs, bias)
}

// splitRows deinterleaves rows rows of m floats from src (lds apart)
// into e and o (ldd apart): the even columns to e, the odd ones to o.
func (k *depthwiseKernels) splitRows(e, o []float32, ldd int, src []float32, lds int, rows, m int) {
	if rows <= 0 || m <= 0 {
		return
	}
	if (m+1)/2 > ldd || m > lds || (rows-1)*ldd+(m+1)/2 > min(len(e), len(o)) || (rows-1)*lds+m > len(src) {
		panic("asm: depthwise: bad split lengths")
	}
	k.split2(&e[0], &o[0], ldd, &src[0], lds, rows, m)
}

// copyRows copies rows rows of cols floats from src (lds apart) to dst
// (ldd apart), through the in-register clamp flags asks for (0: none;
// only where the variant has copyClamp).
func (k *depthwiseKernels) copyRows(dst []float32, ldd int, src []float32, lds int, rows, cols int, flags uint) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if cols > ldd || cols > lds || (rows-1)*ldd+cols > len(dst) || (rows-1)*lds+cols > len(src) {
		panic("asm: depthwise: bad copy lengths")
	}
	if flags != 0 {
		k.copyClamp(&dst[0], ldd, &src[0], lds, rows, cols, flags)
		return
	}
	k.copy2(&dst[0], ldd, &src[0], lds, rows, cols)
}

// convDepthwise is the depthwise path's plan.
type convDepthwise struct {
	k      *depthwiseKernels
	hq, wq int  // a phase plane's rows and columns
	plane  int  // floats a phase plane takes in the scratch (padded: see prepareDepthwise)
	rows3  bool // the 3×3 stride-1 rows kernel runs groups of four rows (depthwiseRun)
	rows   int  // output rows computed: OH, or the pooled ones
	band   int  // output rows a band (pooled: even)
	taps   dwTaps
	ws     []dwWorker
	ch     dwChan // the channel-interleaved path's plan, when it runs (conv_depthwise_chan.go)
}

// dwWorker is one worker's scratch.
type dwWorker struct {
	pad []float32 // SH·SW phase planes of the current input channel (interleaved: of 16 channels)
	out []float32 // a band's outputs, wq a row (interleaved: a group's, [P][16])
	yp  []float32 // pooled: a band's OW-wide rows before the pool
	// roff: the interleaved path's input rows of the current group
	// (here, not on the stack: the kernel call through a func value
	// would move it to the heap every run)
	roff [dwLanes]int
	_    workerPad
}

// The depthwise paths a plan may be forced to (tests, benchmarks).
const (
	dwAuto  = iota // dwUseChan chooses
	dwPlane        // the plane path
	dwChans        // the channel-interleaved path (not pooled)
)

// prepareDepthwise plans the depthwise path on variant k: phase
// geometry, tap offsets, bands, and one scratch a worker, each zero (the
// padding is never written).
func (c *Conv2D) prepareDepthwise(par Par, k *depthwiseKernels) {
	c.prepareDepthwisePath(par, k, dwAuto)
}

// prepareDepthwisePath is prepareDepthwise on the given path.
func (c *Conv2D) prepareDepthwisePath(par Par, k *depthwiseKernels, path int) {
	g, d := &c.g, &c.dw
	*d = convDepthwise{k: k}
	d.hq, d.wq = phaseDims(g)
	if path == dwChans || path == dwAuto && dwUseChan(g, c.pooled.on, d.hq, d.wq) {
		if c.pooled.on {
			panic("asm: depthwise: the interleaved path does not pool")
		}
		c.prepareChan(par)
		return
	}
	d.rows = g.OH
	if c.pooled.on {
		d.rows = 2 * c.pooled.ph
	}
	d.band = min(d.rows, max(1, dwBandFloats/d.wq))
	if c.pooled.on {
		d.band = max(2, d.band&^1)
	}
	// A phase plane holds its hq×wq cells and what the last band reads
	// past them: its outputs, rounded up to whole blocks, end before
	// rows·wq + block, and the furthest tap reads reach cells past its
	// output.
	reach := (g.KH-1)*g.DH/g.SH*d.wq + (g.KW-1)*g.DW/g.SW
	d.plane = roundUp(max(d.hq*d.wq, d.rows*d.wq+k.block+reach), 16)
	d.taps = newDwTaps(phaseTaps(g, d.plane, d.wq))
	d.rows3 = dwRowsOn && k.rows3 != nil && g.is3x3S1()
	items := g.N * g.M
	if d.rows == 0 || g.OW == 0 {
		items = 0
	}
	if c.pooled.on {
		c.taps = convKernelsFor(c.k.Feature)
	}
	c.c = NewChunks(par, items, max(1, (1<<15)/max(1, c.ohw*len(d.taps.off))), c.depthwisePlanes)
	d.ws = make([]dwWorker, c.c.N())
	for i := range d.ws {
		w := &d.ws[i]
		w.pad = make([]float32, g.SH*g.SW*d.plane)
		w.out = make([]float32, d.band*d.wq+k.block+16) // the taps' last block and the rows' last vector reach past
		if c.pooled.on {
			w.yp = make([]float32, d.band*g.OW)
		}
	}
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// phaseDims is the rows and columns of each stride phase of g's input
// zero-padded to every cell a tap reads: phase (py, px) holds padded
// cells (SH·r + py, SW·c + px). Tap (ky, kx) of output (oy, ox) reads
// phase (ky·DH mod SH, kx·DW mod SW) at (oy + ky·DH/SH, ox + kx·DW/SW),
// inside it for every output.
func phaseDims(g *ConvGeom) (hq, wq int) {
	hp := max(g.PT+g.H, (g.OH-1)*g.SH+(g.KH-1)*g.DH+1)
	wp := max(g.PL+g.W, (g.OW-1)*g.SW+(g.KW-1)*g.DW+1)
	return (hp + g.SH - 1) / g.SH, (wp + g.SW - 1) / g.SW
}

// phaseTaps is each tap's offset (ky·KW + kx order) from output (0, 0)'s
// cell in a copy of one channel split into its stride phases (phaseDims),
// each plane floats long with rows wq apart: phase (ky·DH mod SH,
// kx·DW mod SW) at (ky·DH/SH, kx·DW/SW).
func phaseTaps(g *ConvGeom, plane, wq int) []int {
	off := make([]int, 0, g.KH*g.KW)
	for ky := range g.KH {
		for kx := range g.KW {
			dy, dx := ky*g.DH, kx*g.DW
			phase := (dy%g.SH)*g.SW + dx%g.SW
			off = append(off, phase*plane+dy/g.SH*wq+dx/g.SW)
		}
	}
	return off
}

// is3x3S1 reports whether g's kernel is 3×3 at stride 1 without
// dilation (Winograd's shape, and the depthwise rows kernel's).
func (g *ConvGeom) is3x3S1() bool {
	return g.KH == 3 && g.KW == 3 && g.SH == 1 && g.SW == 1 && g.DH == 1 && g.DW == 1
}

// depthwisePlanes computes output planes [lo, hi), numbered over (n, m),
// of worker ch, a band of rows at a time. Consecutive planes of one input
// channel (a channel multiplier) load it once.
func (c *Conv2D) depthwisePlanes(ch, lo, hi int) {
	g, d := &c.g, &c.dw
	w := &d.ws[ch]
	taps := len(d.taps.off)
	loadedIn, loaded := -1, 0 // the input channel in the scratch, and its rows there
	for plane := lo; plane < hi; plane++ {
		m := plane % g.M
		x := c.run.x
		if in := plane/g.M*g.C + m/c.mpg; in != loadedIn {
			loadedIn, loaded = in, 0
			x = x[in*c.hw:][:c.hw]
		} else {
			x = nil // loaded in full by the plane before
		}
		if plane+1 < hi && !c.pooled.on && c.ohw <= dwPrefetchWFloats {
			prefetchForWrite(d.k.prefetchW, c.run.y[(plane+1)*c.ohw:][:c.ohw])
		}
		wt := c.run.a[m*taps:][:taps]
		var b float32
		if c.bias {
			b = c.run.a[g.M*taps+m]
		}
		for oy0 := 0; oy0 < d.rows; oy0 += d.band {
			oy1 := min(oy0+d.band, d.rows)
			if x != nil { // the input rows the band reads
				need := min(g.H, (oy1-1)*g.SH+(g.KH-1)*g.DH+1-g.PT)
				c.depthwiseLoad(w, x, loaded, need)
				loaded = max(loaded, need)
			}
			rows := oy1 - oy0
			out := c.depthwiseRun(w, oy0, rows, wt, b)
			if c.pooled.on {
				yp := w.yp[:rows*g.OW]
				d.k.copyRows(yp, g.OW, out, d.wq, rows, g.OW, 0)
				c.finish(yp, 0)
				pw := c.pooled.pw
				y := c.run.y[(plane*c.pooled.ph+oy0/2)*pw:][:rows/2*pw]
				for p := range rows / 2 {
					c.poolPair(y[p*pw:][:pw], yp[2*p*g.OW:][:2*g.OW])
				}
				continue
			}
			at := plane*c.ohw + oy0*g.OW
			y := c.run.y[at:][:rows*g.OW]
			if clamp := c.dwClamp(); clamp != 0 { // the epilogue is the clamp: done in the copy
				d.k.copyRows(y, g.OW, out, d.wq, rows, g.OW, clamp)
				continue
			}
			d.k.copyRows(y, g.OW, out, d.wq, rows, g.OW, 0)
			c.finish(y, at)
		}
		if x != nil && loaded < g.H {
			c.depthwiseLoad(w, x, loaded, g.H) // the rest, for the next plane of the channel
		}
	}
}

// depthwiseRun computes output rows [oy0, oy0+rows) of the plane in w's
// scratch into w.out, wq a row: groups of four on the rows kernel where
// the plan takes it, the rest (or all) on the taps kernel. It returns
// w.out.
func (c *Conv2D) depthwiseRun(w *dwWorker, oy0, rows int, wt []float32, b float32) []float32 {
	d := &c.dw
	done := 0
	if groups := rows / 4; d.rows3 && groups > 0 {
		d.k.runRows3(w.out, w.pad[oy0*d.wq:], wt, d.wq, groups, b)
		done = 4 * groups
	}
	if done < rows {
		d.k.run(w.out[done*d.wq:][:roundUp((rows-done)*d.wq, d.k.block)], w.pad[(oy0+done)*d.wq:], &d.taps, wt, b)
	}
	return w.out
}

// dwClamp is the run's in-register clamp (convRun.clamp) where the
// depthwise variant's copy applies it, else 0. The flags promise the
// bits of the GEMM variant's elementwise kernels, so the depthwise
// variant must be of the same feature.
func (c *Conv2D) dwClamp() uint {
	if c.dw.k.copyClamp == nil || c.dw.k.feature != c.v.Feature {
		return 0
	}
	return c.run.clamp
}

// depthwiseLoad writes input rows [iy0, iy1) of plane x into the cells
// of w's phase planes that hold input (the rest is padding, zero since
// allocation).
func (c *Conv2D) depthwiseLoad(w *dwWorker, x []float32, iy0, iy1 int) {
	g, d := &c.g, &c.dw
	if iy0 >= iy1 {
		return
	}
	if g.SH == 1 && g.SW == 1 {
		d.k.copyRows(w.pad[(g.PT+iy0)*d.wq+g.PL:], d.wq, x[iy0*g.W:], g.W, iy1-iy0, g.W, 0)
		return
	}
	if g.SW == 2 {
		// Input row iy is padded row PT+iy: phase row (PT+iy)/SH of the
		// phases (PT+iy) mod SH; the rows of one phase are SH input rows
		// apart. Input column ix is padded column PL+ix: phase
		// (PL+ix) mod 2, column (PL+ix)/2. So the even input columns go
		// to phase PL mod 2 from column PL/2, the odd ones to the other
		// phase from column (PL+1)/2.
		for iy := iy0; iy < min(iy0+g.SH, iy1); iy++ {
			pr := g.PT + iy
			base := (pr%g.SH)*2*d.plane + pr/g.SH*d.wq // phase (py, 0), row r
			e := w.pad[base+g.PL%2*d.plane+g.PL/2:]
			o := w.pad[base+(g.PL+1)%2*d.plane+(g.PL+1)/2:]
			d.k.splitRows(e, o, d.wq, x[iy*g.W:], g.SH*g.W, (iy1-iy+g.SH-1)/g.SH, g.W)
		}
		return
	}
	for iy := iy0; iy < iy1; iy++ {
		pr := g.PT + iy
		base := (pr%g.SH)*g.SW*d.plane + pr/g.SH*d.wq // phase (py, 0), row r
		src := x[iy*g.W:][:g.W]
		if g.SW == 1 {
			copy(w.pad[base+g.PL:][:g.W], src)
			continue
		}
		for ix, v := range src {
			pc := g.PL + ix
			w.pad[base+pc%g.SW*d.plane+pc/g.SW] = v
		}
	}
}
