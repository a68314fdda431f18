package asm

import (
	"slices"
	"sync/atomic"
)

// Winograd's F(2×2, 3×3) on the packing path (the GEMM variants without
// a direct kernel, AVX-512 among them, and any output width): the same
// transforms as conv_wino.go, but the sixteen products U_ξ[M×C]·V_ξ[C×T]
// run through the GEMM variant's packed-panel kernels, and a run is two
// parallel passes over a band of tile rows, with a barrier between them:
//
//  1. input transforms, over groups of input channels, into V (each V_ξ
//     in the GEMM's packed-B layout: panels of sixteen tiles, C deep),
//     each channel's plane padded just before (the band's first rows of
//     an image), so no separate pass copies the input;
//  2. over groups of row panels (output channels): the group's rows of
//     all sixteen products into M, then their output transforms, with
//     the bias and the epilogue, while M is in cache. Each U_ξ (the
//     transformed weights, packed once as the GEMM's MR-row panels) is
//     read once per band, where blocks of tiles (conv_wino.go) read all
//     of U once per block, which for the deep, small planes of ResNet's
//     later stages is most of the run's memory traffic.
//
// Both passes deal their groups in per-worker shares (workClaims), so a
// worker transforms the channels that it wrote as the previous layer's
// output channels, and only V passes between cores: on the 2-vCPU VM a
// line another core wrote reads at about DRAM speed (25-32 GB/s against
// 70 from the own cache, scalar reads), and the passes split over
// inputs, over ξ, then over outputs (four loops a run with the padding)
// passed V, M and the padded input between cores.
//
// Where U is small (up to 128 channels in and out: 1 MiB, read by every
// worker), each worker instead takes whole bands, small enough for its
// L2, and runs them through the same steps with nothing shared but U.
// (On the 2-vCPU VM both ways measure alike for ResNet-18's 56² convs,
// 1.2-1.4× their one-thread speed; the bands are what scales past
// sixteen workers.)
//
// Tiles are numbered row by row over the band, (ty, tx) being tile
// (ty-ty0)·tws + tx, with tws the tiles per row rounded up to a multiple
// of eight where that wastes little (a 56-wide output's 28 tiles a row
// are numbered as 32: the tiles past the output read zeros and are never
// written out), else tws = tw, and a panel of sixteen tiles may span
// rows (a 7×7 output's sixteen tiles, its last row and column half
// outside it, are one panel where rows of eight would be two). The
// input transforms take sixteen tiles of one row at a time where they
// fill a panel and read no further than eight-tile calls would (the
// AVX-512 kernels), else eight; the lanes of a row's last call past its
// tiles are overwritten by the next row's, and a call that would run
// past its panel goes through scratch. The output transforms take up
// to sixteen tiles of a row at a time, writing only the columns inside
// the output (opmasks), else eight through scratch. The band's tiles
// are rounded up to whole panels.
// A band is as many tile rows as keep V and M within winoBandFloats.

// winoBandFloats bounds V and M of a band: 1 Mi floats (4 MiB), which
// ResNet-18's 56² layer splits into two bands and its 28² and 14² layers
// keep in one. (A variable for benchmarks.)
var winoBandFloats = 1 << 20

// winoLocalU bounds U (floats) for workers to run whole bands: 1 MiB,
// which takes ResNet-18's 28² convs (128 channels in and out) too: their
// split passes passed V and M between cores, and whole bands ran them in
// 0.47-0.54 ms at two threads where the passes took 0.56-0.61 (one thread
// alike: 0.78-0.83 ms; interleaved builds, per step). winoLocalFloats
// then bounds a band's V and M: 2 MiB, past Zen 5's L2, measured best of
// 128 KiB-2 MiB at one and two threads on ResNet's 56² and the CNN's 64²
// and 32² convs (two threads 1.2-1.5× one, where 512 KiB bands gave
// 0.9-1.2×: the noisy 2-vCPU VM's figures).
const (
	winoLocalU      = 1 << 18
	winoLocalFloats = 1 << 19
)

// winoMinSaving is the least ratio of the 3×3 taps' multiply-adds to the
// padded tiles' for the path to be taken: the transforms and the extra
// passes over V and M cost about a fifth of the products.
const winoMinSaving = 1.4

// convWinoGemm is the plan of the packing path's Winograd runs.
type convWinoGemm struct {
	k        *winoKernels
	tw, th   int // tiles per row, tile rows (the last of each may be half outside)
	tws      int // tiles per row as numbered
	bandRows int // tile rows per band
	bands    int
	tb       int        // tiles per band, bandRows·tw rounded up to whole panels
	kc       int        // depth block of the products
	vs, ms   int        // ξ strides of V and M
	ustride  int        // packed U_ξ floats (MR-row panels of depth C, then the one-row ones)
	local    bool       // workers run whole bands (bandsC), else each pass is split (in, prod, out)
	fetchV   bool       // the split input pass fetches V's lines ahead for writing (winoInputs)
	claims   workClaims // bands, per worker, when local; else the split passes' groups
	rowCuts  int        // row blocks of each product in the split passes
	in, prod *Chunks    // the split passes
	out      *Chunks
	bandsC   *Chunks
	shared   winoBand        // the band in progress when passes are split
	own      []winoBand      // each worker's when they run whole bands
	ws       []convWorker    // per chunk: edge tiles of the products
	in8      []winoInScratch // per chunk
	tails    [][32]float32   // per chunk
	bad      atomic.Bool     // an input transform met a value too large for the path
	bias     []float32       // during a run
}

// winoBand is a band in progress: its image, first tile row, V and M.
type winoBand struct {
	n, ty0 int
	v, m   []float32
	rows   []float32 // the band's padded input rows, when workers pad their own (padRows)
	buf    []float32 // v, m and rows, taken from convWinoOwnFree for the run
	_      workerPad
}

// winoInScratch is an input-transform chunk's: the sums the transforms
// add into (on every call, so each chunk's own cache line: sums of two
// chunks in one line made the pass 4× slower at two threads; eight-tile
// calls add into the first eight) and the scratch of calls that would
// run past their panel.
type winoInScratch struct {
	acc  [16]float32
	tail [128]float32
}

// convWinoFree holds the V and M buffers of the split passes' runs not in
// progress.
var convWinoFree freeList

// convWinoOwnFree holds, per chunk, the buffers (V, M and padded rows) of
// workers that run whole bands: chunk i's band buffer of every Winograd
// step comes from list i, so that the bytes a worker writes are those it
// wrote in the step before, whatever the steps' band sizes. Cut from one
// buffer, chunk 1's V of a 32-channel step at 64² lay over chunk 0's of
// the 64-channel step at 32² before it, so steps began by taking
// megabytes of lines from the other core's cache: at times when the
// 2-vCPU Zen 5 VM's cores pass lines slowly (a 460-520 ns round trip),
// bench/onnx's CNN's Winograd steps ran at 0.95-0.97× their one-thread
// time on two threads, and 1.41-1.54× with a buffer per chunk (the
// model 1.67 → 1.35 ms; alike at times when lines pass fast).
var convWinoOwnFree [64]freeList

// winoGemmGeom is the tiling of the packing path's Winograd runs.
type winoGemmGeom struct {
	tw, th   int // tiles per row, tile rows
	tws      int // tiles per row as numbered
	bandRows int // tile rows per band
	bands    int
	tb       int // tiles per band, whole panels
}

// winoGemmShape returns the tiling when the convolution qualifies for
// the packing path's Winograd runs: stride-1 undilated 3×3, one group,
// no pooling, at least 8 input and output channels, sixteen-column
// panels, transforms in assembly for the feature, and enough saving left
// after padding the tiles.
func (c *Conv2D) winoGemmShape() (winoGemmGeom, bool) {
	g := &c.g
	if !convWinoOn || c.direct || c.pooled.on || g.Groups != 1 || !g.is3x3S1() ||
		g.C < 8 || g.M < 8 || c.v.nr != 16 || winoKernelsFor(c.v.Feature) == nil {
		return winoGemmGeom{}, false
	}
	tw, th := (g.OW+1)/2, (g.OH+1)/2
	tiling := func(tws int) winoGemmGeom {
		s := winoGemmGeom{tw: tw, th: th, tws: tws}
		rows := max(1, winoBandFloats/(16*(g.C+g.M)*tws))
		s.bands = (th + rows - 1) / rows
		s.bandRows = (th + s.bands - 1) / s.bands // even bands: 28 rows in bands of at most 16 are two of 14
		s.tb = (s.bandRows*tws + 15) &^ 15
		return s
	}
	// Rows of eight unless they cost a quarter more tiles: the calls
	// that run past their panel cost scalar stores.
	s := tiling((tw + 7) &^ 7)
	if packed := tiling(tw); 4*s.tb*s.bands > 5*packed.tb*packed.bands {
		s = packed
	}
	if float64(9*g.OH*g.OW) < winoMinSaving*float64(16*s.tb*s.bands) {
		return winoGemmGeom{}, false
	}
	return s, true
}

// winoGemmPad is the padded plane the path's input transforms read
// (0, 0 when it does not qualify): every tile row, and eight tiles from
// each row's last call.
func (c *Conv2D) winoGemmPad() (hp, wp int) {
	s, ok := c.winoGemmShape()
	if !ok {
		return 0, 0
	}
	return 2*s.th + 2, 2*((s.tw+7)&^7) + 2
}

// planWinoGemm returns the plan when the convolution qualifies; the
// padded input (preparePad) is already at least winoGemmPad.
func (c *Conv2D) planWinoGemm(par Par) *convWinoGemm {
	g := &c.g
	s, ok := c.winoGemmShape()
	if !ok {
		return nil
	}
	w := &convWinoGemm{k: winoKernelsFor(c.v.Feature), tw: s.tw, th: s.th, tws: s.tws,
		bandRows: s.bandRows, bands: s.bands, tb: s.tb}
	if blocks := (g.C + convKC - 1) / convKC; blocks > 0 {
		w.kc = (g.C + blocks - 1) / blocks
	}
	w.vs, w.ms = g.C*w.tb+winoSkew, g.M*w.tb+winoSkew
	w.ustride = (c.mpan*c.v.mr + c.mgemv) * g.C
	threads := max(1, par.Threads)
	if w.local = g.M*g.C*16 <= winoLocalU; w.local {
		// Bands within winoLocalFloats, as many for each worker.
		rows := max(1, winoLocalFloats/(16*(g.C+g.M)*w.tws))
		w.bands = (w.th + rows - 1) / rows
		w.bands = (w.bands + threads - 1) / threads * threads
		w.bandRows = (w.th + w.bands - 1) / w.bands
		w.bands = (w.th + w.bandRows - 1) / w.bandRows
		w.tb = (w.bandRows*w.tws + 15) &^ 15
		w.vs, w.ms = g.C*w.tb+winoSkew, g.M*w.tb+winoSkew
		w.bandsC = NewChunks(par, min(threads, g.N*w.bands), 1, c.winoBands)
		w.claims = newWorkClaims(w.bandsC.N())
	} else {
		w.in = NewChunks(par, min(threads, winoGroups(g.C)), 1, c.winoInGroups)
		w.rowCuts = min(c.mpan, 1+(threads-1)*winoRowCuts)
		w.prod = NewChunks(par, min(threads, 16*w.rowCuts), 1, c.winoProdItems)
		w.out = NewChunks(par, min(threads, winoGroups(g.M)), 1, c.winoOutGroups)
		w.fetchV = w.in.N() > 1 && c.v.prefetchWS != nil
		w.claims = newWorkClaims(threads)
	}
	w.own = make([]winoBand, threads)
	w.in8 = make([]winoInScratch, threads)
	w.tails = make([][32]float32, threads)
	w.ws = make([]convWorker, threads)
	for i := range w.ws {
		w.ws[i].tile = make([]float32, convEdgeTileFloats(c.v))
	}
	return w
}

// packWinoGemm appends the transformed weights to pw's packing: U_ξ for
// each ξ as packRowPanels packs a group's rows (depth C), then
// the bias (zeros without one), and records whether they are small
// enough for the path.
func (c *Conv2D) packWinoGemm(pw *ConvWeights, w, b []float32) {
	g, wg := &c.g, c.winoG
	base := len(pw.data)
	size := 16*wg.ustride + g.M
	pw.data = slices.Grow(pw.data, size)[:base+size]
	dst := pw.data[base:]
	clear(dst[:16*wg.ustride])
	ok := true
	for m := range g.M {
		for ci := range g.C {
			u, fine := winoWeightTransform(w[(m*g.C+ci)*9:][:9])
			ok = ok && fine
			at := c.rowPanelAt(m, ci, g.C, wg.kc)
			for xi, v := range u {
				dst[xi*wg.ustride+at] = v
			}
		}
	}
	bias := dst[16*wg.ustride:]
	clear(bias)
	if b != nil {
		copy(bias, b)
	}
	for _, v := range bias {
		ok = ok && abs32(v) < winoMaxIn
	}
	pw.wino = ok
}

// runWinoGemm runs the convolution band by band, reporting false when an
// input transform met a value too large for the path: the caller then
// runs the packing path, which overwrites every output.
func (c *Conv2D) runWinoGemm() bool {
	g, w := &c.g, c.winoG
	band := 16 * (w.vs + w.ms)
	bufs := 1
	padRows := 0 // floats of a band's own padded rows
	if w.local {
		bufs = w.bandsC.N()
		if !c.run.padded {
			padRows = g.C * c.padRowsPlane()
		}
	}
	w.bias = c.run.a[len(c.run.a)-g.M:]
	w.bad.Store(false)
	if w.local {
		for i := range bufs {
			b, own := &w.own[i], convWinoOwnFree[i%len(convWinoOwnFree)].take(band+padRows)
			b.v, b.m = own[:16*w.vs], own[16*w.vs:][:16*w.ms]
			b.rows = own[band:][:padRows]
			b.buf = own
		}
		w.claims.reset(g.N * w.bands)
		w.bandsC.Do()
		for i := range bufs {
			convWinoOwnFree[i%len(convWinoOwnFree)].give(w.own[i].buf)
			w.own[i].buf = nil
		}
	} else {
		buf := convWinoFree.take(band)
		b := &w.shared
		b.v, b.m = buf[:16*w.vs], buf[16*w.vs:]
	bands:
		for n := range g.N {
			for i := range w.bands {
				b.n, b.ty0 = n, i*w.bandRows
				w.claims.reset(winoGroups(g.C))
				w.in.Do()
				if w.bad.Load() {
					break bands
				}
				w.claims.reset(16 * w.rowCuts)
				w.prod.Do()
				w.claims.reset(winoGroups(g.M))
				w.out.Do()
			}
		}
		convWinoFree.give(buf)
	}
	for i := range w.own {
		w.own[i].v, w.own[i].m, w.own[i].rows = nil, nil, nil
	}
	w.shared.v, w.shared.m, w.bias = nil, nil, nil
	if w.bad.Load() {
		return false
	}
	return true
}

// winoBands is the body of worker ch when workers run whole bands: it
// takes bands, numbered over (image, band), from the run's claims (its
// own share first; a worker that starts late takes fewer) and runs each
// through the three passes in its own V and M.
func (c *Conv2D) winoBands(ch, _, _ int) {
	g, w := &c.g, c.winoG
	b := &w.own[ch]
	for !w.bad.Load() {
		i, ok := w.claims.next(ch)
		if !ok {
			return
		}
		b.n, b.ty0 = i/w.bands, i%w.bands*w.bandRows
		if len(b.rows) > 0 {
			c.padBandRows(b)
		}
		c.winoInputs(b, ch, 0, g.C)
		if w.bad.Load() {
			return
		}
		c.winoProductsG(b, ch, 0, 16, 0, c.mpan)
		c.winoOutputs(b, ch, 0, g.M)
	}
}

// winoPads reports whether the runs pad the input themselves, given
// whether the weights allow them: the split passes pad each plane as
// they transform it, and workers that run whole bands copy each band's
// rows, padded, into their own buffer (padBandRows). The padded copy
// made before the run passed the input between cores twice (its loop
// split over planes, the bands over rows): on the 2-vCPU VM ResNet-18's
// 56² convs spent 0.37 ms a run in it at two threads, more than the 0.28
// at one, and their transforms a half more CPU than at one.
func (c *Conv2D) winoPads(wino bool) bool {
	return wino && c.pad.copy && c.winoG != nil
}

// padRowsPlane is the floats per channel of a band's own padded rows:
// the 2·bandRows + 2 rows its tiles read, each a padded row long.
func (c *Conv2D) padRowsPlane() int { return (2*c.winoG.bandRows + 2) * c.pad.wp }

// padBandRows copies band b's input rows, padded as padPlanes pads them,
// into b.rows: for each channel, padded rows 2·ty0 on.
func (c *Conv2D) padBandRows(b *winoBand) {
	g, p := &c.g, &c.pad
	plane := c.padRowsPlane()
	for ci := range g.C {
		src := p.x[(b.n*g.C+ci)*c.hw:][:c.hw]
		dst := b.rows[ci*plane:][:plane]
		// Padded rows r take input row iy = 2·ty0 + r - PT: those in the
		// input run [r0, r1), zeros around them.
		rows := len(dst) / p.wp
		r0 := min(max(g.PT-2*b.ty0, 0), rows)
		r1 := max(min(g.H+g.PT-2*b.ty0, rows), r0)
		clear(dst[:r0*p.wp])
		if r1 > r0 {
			c.padRows(dst[r0*p.wp:], src[(2*b.ty0+r0-g.PT)*g.W:], r1-r0)
		}
		clear(dst[r1*p.wp : rows*p.wp])
	}
}

// winoGroup is how many channels the split passes over input or output
// channels deal out at a time.
const winoGroup = 4

// winoGroups is the number of groups of n channels.
func winoGroups(n int) int { return (n + winoGroup - 1) / winoGroup }

// winoInGroups is the body of worker ch in the split input pass: it
// takes groups of input channels of the shared band from the claims,
// pads their planes first when the band is the image's first and the
// run left the padding to it, and transforms them.
func (c *Conv2D) winoInGroups(ch, _, _ int) {
	g, w, b := &c.g, c.winoG, &c.winoG.shared
	pad := !c.run.padded && b.ty0 == 0
	for {
		i, ok := w.claims.next(ch)
		if !ok {
			return
		}
		lo, hi := i*winoGroup, min(g.C, (i+1)*winoGroup)
		if pad {
			c.padPlanes(ch, b.n*g.C+lo, b.n*g.C+hi)
		}
		c.winoInputs(b, ch, lo, hi)
	}
}

// winoRowCuts is how many row blocks each product is cut into, per
// worker past the first: sixteen products of a few tens of µs each (a
// megabyte of ResNet's layer-4 U_ξ) left a worker idle for most of one
// at the pass's end.
const winoRowCuts = 2

// winoProdItems is the body of worker ch in the split products pass: it
// takes items, a row block of one product ξ each, from the claims.
func (c *Conv2D) winoProdItems(ch, _, _ int) {
	w := c.winoG
	for {
		i, ok := w.claims.next(ch)
		if !ok {
			return
		}
		xi, r := i/w.rowCuts, i%w.rowCuts
		c.winoProductsG(&w.shared, ch, xi, xi+1, r*c.mpan/w.rowCuts, (r+1)*c.mpan/w.rowCuts)
	}
}

// winoOutGroups is the body of worker ch in the split output pass: it
// takes groups of output channels from the claims. Its own share is the
// channels that it transforms as the next layer's inputs.
func (c *Conv2D) winoOutGroups(ch, _, _ int) {
	g, w := &c.g, c.winoG
	for {
		i, ok := w.claims.next(ch)
		if !ok {
			return
		}
		c.winoOutputs(&w.shared, ch, i*winoGroup, min(g.M, (i+1)*winoGroup))
	}
}

// fetchVChannel asks for channel ci's lines of band b's V (rows tile
// rows) in the state a write needs: in each panel of sixteen tiles, its
// sixteen values of each V_ξ.
func (c *Conv2D) fetchVChannel(b *winoBand, ci, rows int) {
	g, w := &c.g, c.winoG
	for t := 0; t < rows*w.tws; t += 16 {
		c.v.prefetchWS(&b.v[t/16*g.C*16+ci*16], w.vs, 16)
	}
}

// winoInputs transforms the inputs of channels [lo, hi) of band b, the
// band's calls in tile order (so each overwrites the lanes the last one
// wrote past its row). In the split passes on several workers (fetchV)
// each channel's lines of V are asked for ahead, in the state a write
// needs, while the channel before is transformed: the products pass,
// split over ξ, left every V_ξ in the cache of the worker that read it,
// half of them another core's than the one that now writes them.
// ResNet-18's 14² and 7² convs (256 and 512 channels) at two threads
// spent 57-60 and 76-79 µs in the pass against 53 and 92 at one, and 30
// (256) when it ran a second time on lines it had just written; fetched
// ahead, 65-68 against 79-92 and 73-76 against 96-106 (the host slower;
// Zen 5 with AVX-512). At one thread the lines are the worker's own,
// and fetching them cost 6-20 µs.
func (c *Conv2D) winoInputs(b *winoBand, ch, lo, hi int) {
	g, p, w := &c.g, &c.pad, c.winoG
	// The padded planes, or the band's own rows of them.
	src0, plane, row0 := c.run.x[b.n*g.C*p.hp*p.wp:], p.hp*p.wp, 0
	if len(b.rows) > 0 {
		src0, plane, row0 = b.rows, c.padRowsPlane(), 2*b.ty0
	}
	acc16, tail := &w.in8[ch].acc, &w.in8[ch].tail
	*acc16 = [16]float32{}
	acc := (*[8]float32)(acc16[:8])
	rows := min(w.bandRows, w.th-b.ty0)
	// Sixteen-tile calls read no further than the eight-tile calls they
	// replace: the columns of the row's tiles rounded up to eight
	// (winoGemmPad's width).
	w8 := (w.tw + 7) &^ 7
	if w.fetchV {
		c.fetchVChannel(b, lo, rows)
	}
	for ci := lo; ci < hi; ci++ {
		if w.fetchV && ci+1 < hi {
			c.fetchVChannel(b, ci+1, rows)
		}
		pl := src0[ci*plane:][:plane]
		for r := range rows {
			ty := b.ty0 + r
			for tx := 0; tx < w.tw; tx += 8 {
				t := r*w.tws + tx
				src := pl[(2*ty-row0)*p.wp+2*tx:]
				if w.k.in16 != nil && t%16 == 0 && tx+16 <= w8 {
					_ = src[3*p.wp+33] // the four patch rows, two columns past the sixteenth tile's
					dst := b.v[t/16*g.C*16+ci*16:]
					_ = dst[15*w.vs+15]
					w.k.in16(&src[0], p.wp, &dst[0], w.vs, acc16)
					tx += 8 // and the loop's eight
					continue
				}
				_ = src[3*p.wp+17] // the four patch rows, two columns past the eighth tile's
				if t%16 <= 8 {
					dst := b.v[t/16*g.C*16+ci*16+t%16:]
					_ = dst[15*w.vs+7]
					w.k.in(&src[0], p.wp, &dst[0], w.vs, acc)
					continue
				}
				// The call would run past its panel: its tiles go
				// through scratch, each to its own panel.
				w.k.in(&src[0], p.wp, &tail[0], 8, acc)
				for i := range min(8, w.tw-tx) {
					ti := t + i
					dst := b.v[ti/16*g.C*16+ci*16+ti%16:]
					_ = dst[15*w.vs]
					for xi := range 16 {
						dst[xi*w.vs] = tail[xi*8+i]
					}
				}
			}
		}
	}
	for _, s := range acc16 {
		if !(s < winoMaxIn) {
			w.bad.Store(true)
		}
	}
}

// winoProductsG computes products ξ in [lo, hi) of band b, M_ξ = U_ξ·V_ξ,
// for row panels [p0, p1) (and the rows past them when p1 is the last):
// depth blocks outer, column panels in pairs where the variant has a
// two-panel kernel.
func (c *Conv2D) winoProductsG(b *winoBand, ch, lo, hi, p0, p1 int) {
	g, w, nr := &c.g, c.winoG, c.v.nr
	wk := &w.ws[ch]
	for xi := lo; xi < hi; xi++ {
		a := c.run.a[c.astride+xi*w.ustride:][:w.ustride]
		v := b.v[xi*w.vs:][:g.C*w.tb]
		y := b.m[xi*w.ms:][:g.M*w.tb]
		for pc := 0; pc < g.C; pc += w.kc {
			kc := min(w.kc, g.C-pc)
			for jp := 0; jp < w.tb; {
				b0 := v[jp*g.C+pc*nr:][:kc*nr]
				if c.v.panel2 != nil && jp+2*nr <= w.tb {
					b1 := v[(jp+nr)*g.C+pc*nr:][:kc*nr]
					c.panelPairProduct(wk, y, w.tb, a, g.C, [2][]float32{b0, b1}, pc, kc, jp, p0, p1)
					jp += 2 * nr
					continue
				}
				c.panelProduct(wk, y, w.tb, a, g.C, b0, pc, kc, jp, nr, p0, p1)
				jp += nr
			}
		}
	}
}

// winoOutputs writes output channels [lo, hi) of band b's rows with the
// bias, then runs the epilogue on them. Each channel's rows are asked
// for ahead, in the state a write needs, while the channel before is
// written (prefetchForWrite): a model's output buffer was last written
// by steps split otherwise, so many of its lines sit in the other
// core's cache. ResNet-18 at two threads on the 2-vCPU Zen 5 VM with
// its cores 400-479 ns apart (six alternated rounds): its Winograd
// steps' sum 6.58-7.03 → 6.36-6.70 ms (lower in five rounds), the
// model's median 8.88 → 8.72 ms; one thread alike (15.23 / 15.33 ms,
// within the host's swings).
func (c *Conv2D) winoOutputs(b *winoBand, ch, lo, hi int) {
	g, w := &c.g, c.winoG
	rows := min(w.bandRows, w.th-b.ty0)
	tail := &w.tails[ch]
	for m := lo; m < hi; m++ {
		off := (b.n*g.M+m)*c.ohw + 2*b.ty0*g.OW
		outRows, bias := min(2*rows, g.OH-2*b.ty0), w.bias[m]
		plane := c.run.y[off:][:outRows*g.OW]
		if m+1 < hi { // the next channel's rows, while this one's are written
			prefetchForWrite(c.v.prefetchW, c.run.y[off+c.ohw:][:outRows*g.OW])
		}
		for r := range rows {
			oy := 2 * r
			ys := min(2, outRows-oy)
			mrow, yrow := b.m[m*w.tb+r*w.tws:], plane[oy*g.OW:]
			for tx := 0; tx < w.tw; tx += 8 {
				src := mrow[tx:]
				y := yrow[2*tx:]
				if w.k.out16 != nil && ys == 2 {
					cols := min(32, g.OW-2*tx)
					_ = src[15*w.ms+(cols+1)/2-1]
					_ = y[g.OW+cols-1]
					w.k.out16(&src[0], w.ms, &y[0], g.OW, bias, cols)
					tx += 8 // and the loop's eight
					continue
				}
				_ = src[15*w.ms+7]
				cols := min(16, g.OW-2*tx)
				if cols == 16 && ys == 2 {
					_ = y[g.OW+15]
					w.k.out(&src[0], w.ms, &y[0], g.OW, bias)
					continue
				}
				// The row's last tiles, or the last tile row of an odd
				// output: through scratch, then what is inside the output.
				w.k.out(&src[0], w.ms, &tail[0], 16, bias)
				for i := range ys {
					copy(y[i*g.OW:][:cols], tail[16*i:][:cols])
				}
			}
		}
		if c.run.finishes() {
			c.finish(plane, off)
		}
	}
}
