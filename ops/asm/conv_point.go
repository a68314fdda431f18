package asm

// The phase-product paths. Where the convolution kernels have a vector
// phase product (conv_phase.go: AVX-512), two kinds of convolution run
// on it, its rows stored whole (PhaseProduct.RunWhole), each step of its
// depth (input channel and tap) a read of sixteen consecutive inputs at
// that step's offset from a segment's first, so no patch panel is
// packed:
//
//   - pointwise: 1×1 at stride 1 without padding, reading the input in
//     place (step q: channel q, at q·H·W floats). The GEMM path copied
//     every input value into its B panels before the products, a pass as
//     long as the products themselves where the depth is a few dozen
//     channels: on Zen 5 (one thread) MobileNetV2's 32 → 16 step at 112²
//     ran at 80 GFLOP/s through it and 108 through the phase product,
//     its 96 → 24 step at 56² at 129 against 174.
//   - strided: stride 1 or 2 with any kernel but 1×1, padding and
//     dilation, and a depth of at most pointMaxDepth (the stems of
//     MobileNet, SqueezeNet, ResNet and YOLO-style detectors, and the
//     detectors' shallow stride-2 steps), reading a copy of the input
//     split into stride phases and zero-padded as the depthwise path
//     splits a plane (depthwiseLoad): tap (ky, kx) of output (oy, ox) is
//     phase (ky·DH mod SH, kx·DW mod SW) at (oy + ky·DH/SH, ox + kx·DW/SW),
//     so each step is one offset from a segment's (oy, ox). Segments run
//     along output rows; a row that ends mid-segment ends with one ending
//     at its end, and tiles pair segments across rows (rowTiles). Where
//     that wastes more (rows of 40 compute 48), segments run over the
//     phase copy's grid instead, whose rows are wq cells wide, all of
//     them computed (a block's sums go through scratch, its output cells
//     copied out: a detector's 16 → 32 channel step at 32×40 ran at
//     1.10-1.12× the GEMM path's rate so, Zen 5 with AVX-512, one
//     thread). Stride-1 3×3 convolutions keep Winograd.
//
// Both take groups of one, planes of at least pointMinPositions (the
// pointwise one: and twice its channels; the strided one also smaller
// planes where its weights are small, pointSmallWeights). Output
// channels go in
// panels of 12 rows (the last of 4, 8 or 12, PhaseRows), positions in
// blocks of two-segment tiles sized so that a block's inputs stay in L1
// across the panels (pointBlockBytes). Workers take blocks (workClaims:
// contiguous shares, as the GEMM path's column blocks, so consecutive
// steps split positions alike), on the strided path each into a phase
// copy of its own, which it fills with the rows its blocks read as it
// takes them (copyBlockRows), and clamp in registers (a Relu or ReLU6
// epilogue) or apply the epilogue to a panel's rows of a block as soon as
// they are computed.

// convPointOn enables the phase-product paths (a variable for the tests
// and benchmarks that compare them with the GEMM path).
var convPointOn = true

// pointBlockBytes bounds a block's inputs: under Zen 5's 48 KiB L1D.
const pointBlockBytes = 32 << 10

// pointMinPositions is the smallest plane the paths take. On smaller
// ones the weights outweigh the input: every block reads all of them,
// where the GEMM path splits them over the workers (row blocks) and
// fetches them far ahead when they stream from memory. MobileNetV2's
// 1×1 steps at 14² and 7² ran 10-40% slower on the phase product at one
// thread and up to twice as long at two, those at 28² and up 10-45%
// faster at one thread and 15-50% at two (Zen 5); DenseNet's at 16² ran
// 0-5% slower. Nor does the pointwise path take planes of fewer
// positions than twice its depth, where the GEMM path's packing is
// amortised over the most output channels.
const pointMinPositions = 512

// pointSmallWeights bounds the weights (bytes) of a strided convolution
// the path takes on a plane below pointMinPositions (but of at least
// four segments): weights every block reads from L1 or L2. A detector's
// 32 → 32 channel 3×3 stride-2 step at 16×20 (36 KiB) ran at 1.28× the
// GEMM path's rate on it, a 32 → 64 one at 16×16 (72 KiB) 1.10× (Zen 5,
// one thread).
const pointSmallWeights = 128 << 10

// pointMaxDepth bounds the strided path's depth (channels × taps):
// what it saves is the packing of the patches, which costs the GEMM path
// about as much at any depth while the products grow with it. On Zen 5
// (one thread, BenchmarkConvStrided and its deeper cases) the stems of
// 27 steps ran 1.21-1.40× the GEMM path's rate, ResNet's 7×7 stem (147)
// 1.12-1.13×, a detector's 3×3 stride-2 steps from 16 and 32 channels
// (144, 288) 1.24× and 1.10×; from 64 and 128 channels (576, 1152) both
// paths ran alike (0.98-1.02×; ResNet's 64 → 128 step at 28² on the
// phase grid too, 0.99-1.00×: the steps' inputs outgrow L1, where the
// GEMM path's packed panels do not). The path also declines rows whose
// segments waste more than 15% (a row of 40 computes 48), and 1×1
// kernels at stride 2, which read a quarter of the phase copy they
// would make.
const pointMaxDepth = 320

// convPoint is the phase-product paths' plan.
type convPoint struct {
	prod   *PhaseProduct
	panels []pointPanel
	tiles  []*PhaseTiles // per block of positions
	pos    []int         // block b's positions: [pos[b], pos[b+1])
	size   int           // floats of the packed weights
	claims workClaims    // the run's blocks, of the image in progress
	// The strided path's phase copy (split false: the input is read in
	// place): each channel's SH·SW phase planes of plane floats (the
	// depthwise path's geometry, c.dw), a copy a worker, holding the rows
	// its blocks read (copyBlockRows).
	split  bool
	buf    []float32 // the run's copies
	have   []copied  // per worker: the padded rows its copy holds
	plane  int
	phases int
	// On the phase grid (gridRows > 0: rows that end mid-segment),
	// blocks of gridRows output rows compute every cell of their rows of
	// the phase copy's grid (wq wide) into the worker's scratch, gridLd
	// floats a panel row, and copy each row's output cells out.
	gridRows, gridLd, wq int
	scratch              [][]float32 // per worker
}

// copied is the padded input rows [lo, hi) a worker's phase copy holds
// for the image in progress.
type copied struct {
	lo, hi int
	_      workerPad
}

// pointPanel is output channels [m0, m0+n) computed as rows rows (n
// rounded up to a PhaseRows height); its weights start at at in the
// packing, step-major (a[q·rows + r]), its bias after them.
type pointPanel struct{ m0, n, rows, at int }

// planPoint returns the phase-product plan of c, or nil where neither
// path applies. It depends on the geometry and the variant only, never
// on par (so plans for any number of workers share their packing).
func (c *Conv2D) planPoint(par Par) *convPoint {
	g := &c.g
	if !convPointOn || c.pooled.on || g.Groups != 1 || g.C < 2 || g.M == 0 || c.ohw < 64 {
		return nil
	}
	small := c.ohw < pointMinPositions
	k := convKernelsFor(c.v.Feature)
	if k.phase == nil {
		return nil
	}
	inPlace := g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1 && g.PT == 0 && g.PL == 0 && g.OH == g.H && g.OW == g.W
	if inPlace && (small || c.ohw < 2*g.C) {
		return nil // deep and small: see pointMinPositions
	}
	if !inPlace && (g.is3x3S1() || g.KH*g.KW == 1 || g.SH > 2 || g.SW > 2 || c.kk > pointMaxDepth ||
		small && 4*c.kk*g.M > pointSmallWeights) {
		return nil
	}
	per := max(1, pointBlockBytes/(4*32*c.kk)) // tiles a block
	p := &convPoint{}
	if !inPlace && g.OW%16 != 0 {
		// Rows that end mid-segment: the phase grid where it wastes less
		// than segments ending at each row's end (with its copy-out, about
		// two hundredths), else those; neither where both waste more than
		// 15% (rows of 40 outputs: 48 computed a row on rows, 41 on the
		// grid of a 3×3 kernel's phases).
		_, wq := phaseDims(g)
		rowWaste := float64(16*((g.OW+15)/16))/float64(g.OW) - 1
		if g.OW < 16 {
			rowWaste = 1 // no whole segment
		}
		rows, waste := gridRows(g.OH, g.OW, wq, max(1, 32*per/wq))
		switch {
		case waste+0.02 < rowWaste && waste <= 0.15:
			p.gridRows = rows
		case rowWaste > 0.15:
			return nil
		}
	}
	// Steps.
	off := make([]int, 0, c.kk)
	if inPlace {
		for ci := range g.C {
			off = append(off, ci*c.hw)
		}
	} else {
		c.preparePhases()
		d := &c.dw
		if p.gridRows > 0 {
			// A grid segment reads up to sixteen cells past its row's
			// last, the grid's last row's into the next plane: room for
			// the last plane's.
			d.plane = roundUp(d.hq*d.wq+d.wq+16, 16)
		}
		p.plane, p.phases, p.wq, p.split = d.plane, g.SH*g.SW, d.wq, true
		taps := phaseTaps(g, p.plane, d.wq)
		for ci := range g.C {
			for _, t := range taps {
				off = append(off, ci*p.phases*p.plane+t)
			}
		}
	}
	prod, err := newPhaseProduct(k.phase, off)
	if err != nil {
		return nil
	}
	p.prod = prod
	for m0 := 0; m0 < g.M; m0 += 12 {
		n := min(12, g.M-m0)
		rows := (n + 3) &^ 3 // 4, 8 or 12
		p.panels = append(p.panels, pointPanel{m0: m0, n: n, rows: rows, at: p.size})
		p.size += rows * (c.kk + 1)
	}
	// Blocks of positions, each its tiles' segment starts: in place, runs
	// of the plane's tiles; strided, whole output rows (their segments
	// read rows of the phase copy, d.wq apart).
	switch {
	case inPlace:
		tiles := pointTiles(c.ohw)
		for t0 := 0; t0 < len(tiles); t0 += per {
			var at []int
			for _, t := range tiles[t0:min(t0+per, len(tiles))] {
				at = append(at, t[0], t[1], t[0], t[1])
			}
			if !p.addBlock(at, tiles[t0][0]) {
				return nil
			}
		}
	case p.gridRows > 0:
		p.gridBlocks(g)
	default:
		segs := len(rowSegments(g.OW))
		rows, single := max(1, 2*per/segs), segs // rows a block; segments of a row paired across rows
		if g.OW%16 != 0 {
			single -= 2
		}
		if rows*single%2 != 0 {
			// An even number of lone segments, none computed twice, for
			// a block a little past pointBlockBytes: ResNet's 7×7 stem in
			// blocks of one row (seven segments) computed eight, and ran
			// at 0.98× the GEMM path's rate against 1.12× (Zen 5).
			rows++
		}
		for oy0 := 0; oy0 < g.OH; oy0 += rows {
			var at []int
			for _, t := range rowTiles(g.OW, min(rows, g.OH-oy0)) {
				for u := range 2 {
					at = append(at, (oy0+t[u][0])*c.dw.wq+t[u][1])
				}
				for u := range 2 {
					at = append(at, (oy0+t[u][0])*g.OW+t[u][1])
				}
			}
			if !p.addBlock(at, oy0*g.OW) {
				return nil
			}
		}
	}
	p.pos = append(p.pos, c.ohw)
	threads := max(1, par.Threads)
	c.c = NewChunks(par, min(threads, len(p.tiles)), 1, c.pointBlocks)
	p.claims = newWorkClaims(c.c.N())
	p.have = make([]copied, c.c.N())
	if p.gridRows > 0 {
		p.scratch = make([][]float32, c.c.N())
		for i := range p.scratch {
			p.scratch[i] = make([]float32, 12*p.gridLd)
		}
	}
	return p
}

// preparePhases sets the depthwise path's plane geometry up (c.dw: hq,
// wq, plane and kernels) for the strided path's phase copy: every read
// of a segment, the last row's last one too, lies in its phase's hq×wq
// cells (phaseDims).
func (c *Conv2D) preparePhases() {
	d := &c.dw
	d.k = depthwiseFor(c.k)
	d.hq, d.wq = phaseDims(&c.g)
	d.plane = roundUp(d.hq*d.wq, 16)
}

// pointTiles pairs the sixteen-position segments of a row of p >= 16
// positions into tiles, in order: segments from 0, 16, ... while whole,
// and where p is not a multiple of 16 a last one ending at p, which
// overlaps the one before it; the two always share the last tile, whose
// second segment then stores the same sums again over the overlap (one
// worker's, before its epilogue). A segment left alone is computed
// twice, the same sums to the same place.
func pointTiles(p int) [][2]int {
	whole := p / 16
	last := -1 // the segment ending at p, if it overlaps
	if p%16 != 0 {
		last = p - 16
	}
	var tiles [][2]int
	n := whole
	if last >= 0 {
		n-- // the last whole segment goes with the overlapping one
	}
	for s := 0; s < n; s += 2 {
		tiles = append(tiles, [2]int{16 * s, 16 * min(s+1, n-1)})
	}
	if last >= 0 {
		tiles = append(tiles, [2]int{16 * (whole - 1), last})
	}
	return tiles
}

// addBlock appends a block of tiles (NewPhaseTiles' offsets) whose
// positions start at pos, reporting false where the offsets are bad.
func (p *convPoint) addBlock(at []int, pos int) bool {
	ts, err := NewPhaseTiles(at)
	if err != nil {
		return false
	}
	p.tiles = append(p.tiles, ts)
	p.pos = append(p.pos, pos)
	return true
}

// rowSegments returns the starts of the sixteen-position segments of an
// output row of w >= 16 positions: 0, 16, ... while whole, and where w
// is not a multiple of 16 a last one ending at w, which overlaps the one
// before it.
func rowSegments(w int) []int {
	var s []int
	for at := 0; at+16 <= w; at += 16 {
		s = append(s, at)
	}
	if w%16 != 0 {
		s = append(s, w-16)
	}
	return s
}

// rowTiles pairs the segments of rows [0, rows) of w positions into
// tiles, each segment as (row, start), in order and across rows: a
// row's whole segments pair with the next whole ones, its own or the
// next row's, so that a row of an odd number of segments computes none
// twice (stems of 112 outputs a row computed 128 in tiles of one row),
// but a row's overlapping last segment always shares its tile with the
// one it overlaps, so one worker stores the overlap before its
// epilogue. A lone segment left at the end is computed twice, the same
// sums to the same place.
func rowTiles(w, rows int) [][2][2]int {
	segs := rowSegments(w)
	single := segs
	if w%16 != 0 {
		single = segs[:len(segs)-2]
	}
	var tiles [][2][2]int
	pending, have := [2]int{}, false
	for r := range rows {
		for _, s := range single {
			if !have {
				pending, have = [2]int{r, s}, true
				continue
			}
			tiles = append(tiles, [2][2]int{pending, {r, s}})
			have = false
		}
		if w%16 != 0 {
			n := len(segs)
			tiles = append(tiles, [2][2]int{{r, segs[n-2]}, {r, segs[n-1]}})
		}
	}
	if have {
		tiles = append(tiles, [2][2]int{pending, pending})
	}
	return tiles
}

// gridRows returns the output rows of a block on the phase grid (wq
// cells a row, ow of them outputs) and the share of the block's computed
// cells that are not outputs: the least number of rows from r0 whose
// segments waste at most 5%, else the least wasteful, up to a quarter of
// the oh rows (blocks for the workers).
func gridRows(oh, ow, wq, r0 int) (rows int, waste float64) {
	hi := max(1, oh/4)
	rows, waste = 0, 2.0
	for r := min(r0, hi); r <= hi; r++ {
		w := float64(16*((r*wq+15)/16))/float64(r*ow) - 1
		if w < waste-1e-9 {
			rows, waste = r, w
		}
		if waste <= 0.05 {
			break
		}
	}
	return rows, waste
}

// gridBlocks makes the blocks on the phase grid: each gridRows output
// rows (the last fewer), its segments sixteen consecutive grid cells
// from its first row's, in pairs, their sums at the same cells of the
// scratch (the last segment reaching past the block's rows into cells
// no output takes).
func (p *convPoint) gridBlocks(g *ConvGeom) {
	for oy0 := 0; oy0 < g.OH; oy0 += p.gridRows {
		cells := min(p.gridRows, g.OH-oy0) * p.wq
		var at []int
		for s := 0; s < cells; s += 32 {
			s1 := min(s+16, (cells-1)/16*16) // a lone last segment twice
			at = append(at, oy0*p.wq+s, oy0*p.wq+s1, s, s1)
		}
		p.addBlock(at, oy0*g.OW) // offsets >= 0: never fails
		p.gridLd = max(p.gridLd, (cells+15)/16*16)
	}
}

// Pointwise reports whether runs take a phase-product path (pointwise or
// strided).
func (c *Conv2D) Pointwise() bool { return c.point != nil }

// Strided reports whether runs take the strided phase-product path.
func (c *Conv2D) Strided() bool { return c.point != nil && c.point.split }

// packPoint packs w [M,C,KH,KW] and b [M] (nil: zeros) as the plan's
// panels.
func (c *Conv2D) packPoint(pw *ConvWeights, w, b []float32) {
	p, kk := c.point, c.kk
	if cap(pw.data) < p.size {
		pw.data = make([]float32, p.size)
	}
	pw.data = pw.data[:p.size]
	clear(pw.data)
	for _, pn := range p.panels {
		a := pw.data[pn.at:][:pn.rows*(kk+1)]
		for r := range pn.n {
			for q, v := range w[(pn.m0+r)*kk:][:kk] {
				a[q*pn.rows+r] = v
			}
			if b != nil {
				a[kk*pn.rows+r] = b[pn.m0+r]
			}
		}
	}
}

// runPoint runs the plan image by image: the phase copy first where
// there is one, then the blocks.
func (c *Conv2D) runPoint() {
	g, p := &c.g, c.point
	x, y, res := c.run.x, c.run.y, c.run.res
	if p.split {
		p.buf = convPadFree.take(c.c.N() * g.C * p.phases * p.plane)
		defer func() { convPadFree.give(p.buf); p.buf = nil }()
	}
	for n := range g.N {
		c.run.x = x[n*g.C*c.hw:][:g.C*c.hw]
		c.run.y = y[n*g.M*c.ohw:][:g.M*c.ohw]
		if res != nil {
			c.run.res = res[n*g.M*c.ohw:][:g.M*c.ohw]
		}
		p.claims.reset(len(p.tiles))
		clear(p.have) // the copies hold nothing of this image
		if p.split && c.c.N() == 1 {
			c.copyPaddedRows(0, 0, c.dw.hq*g.SH) // all of it, ahead of the blocks
		}
		c.c.Do()
	}
	c.run.x, c.run.y, c.run.res = x, y, res
}

// copyBlockRows brings worker ch's phase copy up to the rows block b
// reads: of every channel, the phase rows of the block's padded rows it
// does not hold yet, cleared, then the input rows among them
// (depthwiseLoad). Each worker copies what its blocks read, as it takes
// them (the next block's rows mostly follow the last's: only those past
// them are copied), so the run has no pass of its own for the copy,
// which, split over the workers, handed the cells each block reads
// between cores and cost a second start of the workers: a detector's
// 16 → 32 channel step at 32×40 ran at 1.10× its one-thread rate on two
// threads so, against 1.4× on the GEMM path (Zen 5).
func (c *Conv2D) copyBlockRows(ch, b int) []float32 {
	p, g, d := c.point, &c.g, &c.dw
	oy0, oy1 := p.pos[b]/g.OW, (p.pos[b+1]+g.OW-1)/g.OW
	// The block's first padded row and one past its last.
	return c.copyPaddedRows(ch, oy0*g.SH, min((oy1-1)*g.SH+(g.KH-1)*g.DH+1, d.hq*g.SH))
}

// copyPaddedRows brings worker ch's phase copy up to padded rows [a, z)
// and returns the copy.
func (c *Conv2D) copyPaddedRows(ch, a, z int) []float32 {
	p, g, d := c.point, &c.g, &c.dw
	size := g.C * p.phases * p.plane
	buf := p.buf[ch*size:][:size]
	h := &p.have[ch]
	if h.hi > h.lo && a >= h.lo && a <= h.hi {
		a = max(a, h.hi) // the rows past those held
		h.hi = max(h.hi, z)
	} else {
		h.lo, h.hi = a, z
	}
	if a >= z {
		return buf
	}
	iy0, iy1 := min(max(a-g.PT, 0), g.H), min(max(z-g.PT, 0), g.H) // the input rows among them
	for ci := range g.C {
		planes := buf[ci*p.phases*p.plane:][:p.phases*p.plane]
		for py := range g.SH {
			j0, j1 := min((a-py+g.SH-1)/g.SH, d.hq), min((z-py+g.SH-1)/g.SH, d.hq)
			for px := range g.SW {
				clear(planes[(py*g.SW+px)*p.plane:][j0*d.wq : j1*d.wq])
			}
		}
		if iy1 > iy0 {
			w := dwWorker{pad: planes}
			c.depthwiseLoad(&w, c.run.x[ci*c.hw:][:c.hw], iy0, iy1)
		}
	}
	return buf
}

// pointBlocks is the body of worker ch: it takes blocks of the image in
// progress and computes every panel of each, each panel's rows through
// the epilogue right after.
func (c *Conv2D) pointBlocks(ch, _, _ int) {
	p, r := c.point, &c.run
	x := r.x
	for {
		b, ok := p.claims.next(ch)
		if !ok {
			return
		}
		if p.split {
			x = c.copyBlockRows(ch, b)
		}
		p0, p1 := p.pos[b], p.pos[b+1]
		for _, pn := range p.panels {
			a := r.a[pn.at:][:pn.rows*(c.kk+1)]
			base := pn.m0 * c.ohw
			if p.gridRows > 0 {
				c.gridPanel(ch, pn, a, x, b)
			} else {
				p.prod.RunWhole(pn.rows, pn.n, a[:c.kk*pn.rows], a[c.kk*pn.rows:], x, r.y, base, c.ohw, p.tiles[b], r.clamp)
			}
			if r.clamp != 0 || !r.finishes() {
				continue
			}
			for i := range pn.n {
				at := base + i*c.ohw + p0
				c.finish(r.y[at:at+p1-p0], at)
			}
		}
	}
}

// gridPanel computes panel pn of grid block b into worker ch's scratch
// and copies each of the block's output rows out of it.
func (c *Conv2D) gridPanel(ch int, pn pointPanel, a, x []float32, b int) {
	p, r, ow := c.point, &c.run, c.g.OW
	scr := p.scratch[ch]
	p.prod.RunWhole(pn.rows, pn.n, a[:c.kk*pn.rows], a[c.kk*pn.rows:], x, scr, 0, p.gridLd, p.tiles[b], r.clamp)
	oy0, oy1 := p.pos[b]/ow, p.pos[b+1]/ow
	for i := range pn.n {
		y := r.y[(pn.m0+i)*c.ohw+oy0*ow:][:(oy1-oy0)*ow]
		src := scr[i*p.gridLd:][:p.gridLd]
		for oy := range oy1 - oy0 {
			copy(y[oy*ow:][:ow], src[oy*p.wq:][:ow])
		}
	}
}
