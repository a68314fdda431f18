package asm

// The GEMM path of Conv2D, per (batch, group) plane:
//
//	Y[mpg × OH·OW] = [bias | W][mpg × 1+K] · [1 ; patches][1+K × OH·OW]
//
// (K = C/G·KH·KW; the bias column and the row of ones only with a bias).
// The left operand is packed once per weights (PackWeights) into the
// micro-kernel's MR-row panels, each the full depth, so a depth block is
// a slice of it. The right operand is never materialised as an im2col
// matrix: a depth block of each NR-column panel of patches is packed
// (conv_pack.go) just before every row panel meets it, in L1. Per tile of
// output columns the depth blocks are outer, so the weights' block stays
// in L2 while the tile's panels pass. The first depth block overwrites Y,
// so Y needs no zero fill or bias pass, and the epilogue runs on each
// finished tile while it is in cache.

// convTileFloats bounds a tile of output (M/G rows of its columns): 16K
// floats (64 KiB), which stays in L2, next to a depth block of the
// weights (at most 192 KiB), from one depth block to the next and until
// the epilogue. (A variable for BenchmarkConvTile.)
var convTileFloats = 1 << 14

// convKC bounds a depth block, split evenly (3×3×64 + 1 = 577 deep is
// two blocks of 289): its B panel, at most 300×16 floats (19 KiB), stays
// in a 32 KiB L1 next to the A panel it meets (7 KiB) while every row
// panel passes.
var convKC = 300

// convGemvRows is the most rows past the last full MR-row panel that run
// through the one-row kernel rather than a zero-padded panel, which costs
// MR rows: the one-row kernel is load-bound, about half as fast per row
// as the micro-kernel in the CNN benchmark's profile, so it wins for up
// to two rows.
const convGemvRows = 2

// convMinCols is the least tile width worth an epilogue call per row.
const convMinCols = 64

// convGemm is the GEMM path's plan.
type convGemm struct {
	ktot, kc  int        // depth (with the bias row, but on the direct path); depth block
	mpan      int        // MR-row panels per group
	mgemv     int        // rows per group past the panels, run one at a time
	astride   int        // packed weights per group
	nb        int        // columns of the widest tile
	span      int        // columns the tiles cover: OH·OW, or a pooled conv's row pairs
	convTiles            // how tiles cut the output (conv_tiles.go)
	shared    convShared // patches packed once per run (conv_tiles.go)
	ksplit    convKSplit // the depth split (conv_ksplit.go)
	koff      []int      // tap offsets into a padded plane group (conv_pack.go)
	pad       convPad
	taps      *convKernels
	direct    bool          // the direct path (conv_direct.go)
	wino      *convWino     // the Winograd path (conv_wino.go), or nil
	winoG     *convWinoGemm // the packing path's Winograd runs (conv_wino_gemm.go), or nil
	dpan      []int         // its panels' rows
	ws        []convWorker
	claims    workClaims // the run's tiles (or the direct Winograd path's blocks), per worker
}

type convWorker struct {
	b    [2][]float32 // each a row of ones, then room for a depth block of a panel (see panel)
	tile []float32    // MR×NR, for edge micro-tiles
	out  []float32    // a pooled conv's tile (M/G × nb) or, depthwise, row pair
	far  uint         // gemmPrefetchFar where the weights the products read stream from memory
	// kFirst is the first step of the depth the worker is computing
	// (tileDepth): its block overwrites the output, later ones add.
	kFirst int
	// clamp is the in-register epilogue (convRun.clamp) for the tile in
	// progress, whose products are all whole tiles of one depth block; 0
	// otherwise.
	clamp uint
	_     workerPad
}

// convFarBytes is the size of packed weights past which a pass over them
// streams from memory rather than from L2 (1 MiB on Zen 4/5, 2 MiB on
// recent Xeons): their panels are fetched far ahead (gemmPrefetchFar).
const convFarBytes = 1 << 20

// convColdFarBytes is convFarBytes for a convolution whose weights are
// evicted between runs (ColdWeights): then any pass over more than a few
// pages of them streams from memory. DenseNet-121 (31 MiB of weights) at
// 64² has 40 1×1 convs of 128-512 KiB over 2×2 and 4×4 planes; with their
// weights cold, their products at 4×4 ran 18.4 → 15.1 µs fetching far ahead.
const convColdFarBytes = 64 << 10

// farFlag is gemmPrefetchFar for a product pass over floats of packed
// weights larger than convFarBytes (convColdFarBytes when cold), else 0.
func farFlag(floats int, cold bool) uint {
	limit := convFarBytes
	if cold {
		limit = convColdFarBytes
	}
	if 4*floats > limit {
		return gemmPrefetchFar
	}
	return 0
}

// ColdWeights tells the convolution that its weights leave the caches
// between runs (a model whose weights far exceed them: the caller knows
// the model), so that its products fetch the weights far ahead from
// smaller sizes on (convColdFarBytes). It does not change results.
func (c *Conv2D) ColdWeights() {
	c.cold = true
	c.setFar()
}

// setFar sets the workers' far-prefetch flags for the plan's packed
// weights.
func (c *Conv2D) setFar() {
	for i := range c.ws {
		c.ws[i].far = farFlag(c.g.Groups*c.astride, c.cold)
	}
	if w := c.winoG; w != nil {
		for i := range w.ws {
			w.ws[i].far = farFlag(16*w.ustride, c.cold)
		}
	}
}

// panel is where depth block [pc, pc+kc) of the worker's panel i (0 or
// 1: a pair of panels runs through the two-panel kernel) goes. With a
// bias, the first block starts at the row of ones (filled once, when the
// worker is made) and later blocks after it, so nothing overwrites it.
func (w *convWorker) panel(i, pc, kc, nr int, bias bool) []float32 {
	if bias && pc > 0 {
		return w.b[i][nr : nr+kc*nr]
	}
	return w.b[i][:kc*nr]
}

// prepareGemm plans the GEMM path.
func (c *Conv2D) prepareGemm(par Par) {
	g, v := &c.g, c.v
	c.taps = convKernelsFor(v.Feature)
	c.ktot = c.kk
	if c.direct = c.useDirect(); c.direct {
		c.dpan = directPanels(c.mpg)
		c.astride = c.mpg * c.kk
		if c.bias {
			c.astride += c.mpg
		}
	} else {
		if c.bias {
			c.ktot++
		}
		c.mpan = c.mpg / v.mr
		if rest := c.mpg % v.mr; rest > convGemvRows {
			c.mpan++ // a zero-padded panel
		} else {
			c.mgemv = rest
		}
		c.astride = (c.mpan*v.mr + c.mgemv) * c.ktot
	}
	if blocks := (c.ktot + convKC - 1) / convKC; blocks > 0 {
		c.kc = (c.ktot + blocks - 1) / blocks // even blocks: no thin last one
	}
	c.preparePad(par)
	threads := max(1, par.Threads)
	// A pooled conv's tiles are whole pairs of output rows (the last odd
	// row, which floor mode drops, in none).
	c.span = c.ohw
	if c.pooled.on {
		c.span = c.pooled.ph * 2 * g.OW
	}
	c.planTiles(threads)
	c.planShared(par)
	c.winoG = c.planWinoGemm(par)
	work, body := c.tiles(g.N*g.Groups), c.gemmTiles
	if c.wino = c.planWino(threads); c.wino != nil {
		work, body = g.N*c.wino.blocks, c.winoTiles
	}
	if c.planKSplit(par); c.ksplit.on {
		work = c.tiles(g.N * g.Groups)
	}
	c.c = NewChunks(par, work, 1, body)
	if c.wino != nil {
		c.wino.winoWorkers(c.c.N())
	}
	c.claims = newWorkClaims(c.c.N())
	workers := c.c.N()
	if c.ksplit.on {
		workers = max(workers, c.ksplit.prod.N())
	}
	c.ws = make([]convWorker, workers)
	for i := range c.ws {
		for j := range c.ws[i].b {
			c.ws[i].b[j] = make([]float32, (c.kc+1)*v.nr)
			fill(c.ws[i].b[j][:v.nr], 1)
		}
		c.ws[i].tile = make([]float32, convEdgeTileFloats(v))
		if c.pooled.on {
			c.ws[i].out = make([]float32, c.mpg*c.nb)
		}
	}
	c.setFar()
}

// packA packs [bias | w] of every group: MR-row panels of full depth
// (panel p holds, for each step s < ktot, the MR values of rows p·MR + r;
// zeros past the group's rows), then the mgemv rows past them as they
// are, each ktot long.
func (c *Conv2D) packA(pw *ConvWeights, w, b []float32) {
	if c.point != nil {
		c.packPoint(pw, w, b)
		return
	}
	if c.direct {
		c.packDirect(pw, w, b)
		return
	}
	size := c.g.Groups * c.astride
	if cap(pw.data) < size {
		pw.data = make([]float32, size)
	}
	pw.data = pw.data[:size]
	first := c.ktot - c.kk // 1 with a bias column
	for grp := range c.g.Groups {
		c.packRowPanels(pw.data[grp*c.astride:][:c.astride], c.ktot, c.kc, func(m, s int) float32 {
			m += grp * c.mpg
			if s < first {
				return b[m]
			}
			return w[m*c.kk+s-first]
		})
	}
}

// packRowPanels packs the group's rows of depth values, value s of row
// m being at(m, s), at rowPanelAt for depth blocks of kc: MR-row panels
// (zeros past the group's rows), then the mgemv rows past them as they
// are. dst is (mpan·MR + mgemv)·depth floats.
func (c *Conv2D) packRowPanels(dst []float32, depth, kc int, at func(m, s int) float32) {
	clear(dst)
	for m := range c.mpg {
		for s := range depth {
			dst[c.rowPanelAt(m, s, depth, kc)] = at(m, s)
		}
	}
}

// rowPanelAt is where value s of row m goes in packRowPanels' packing,
// which is depth block major: block [pc, pc+kc) holds each MR-row panel
// in turn, panel p holding, for each step of the block, the MR values of
// rows p·MR + r (rowPanel finds it). The products take the blocks in
// that order, so a pass over the weights reads memory front to back,
// which the far prefetch (gemmPrefetchFar) relies on: a panel-major
// packing had each call read a block-long run, then jump a panel on.
// The rows past the panels follow, each depth long.
func (c *Conv2D) rowPanelAt(m, s, depth, kc int) int {
	mr := c.v.mr
	if m < c.mpan*mr {
		pc := s / kc * kc
		return c.rowPanel(m/mr, pc, min(kc, depth-pc)) + (s-pc)*mr + m%mr
	}
	return m*depth + s
}

// rowPanel is the offset of row panel ip's depth block [pc, pc+kc) in a
// packRowPanels packing: the blocks before it hold pc steps of every
// panel.
func (c *Conv2D) rowPanel(ip, pc, kc int) int {
	return (pc*c.mpan + ip*kc) * c.v.mr
}

// gemmTiles is the body of worker ch: it takes tiles, numbered over (n,
// group, row block, column block), from the run's claims until none are
// left.
func (c *Conv2D) gemmTiles(ch, _, _ int) {
	g, wk := &c.g, &c.ws[ch]
	for {
		it, ok := c.claims.next(ch)
		if !ok {
			return
		}
		plane, rblk, cblk := it/(c.rb*c.cb), it/c.cb%c.rb, it%c.cb
		p0, p1 := c.rowBlock(rblk)
		j0, cols := c.colBlock(cblk)
		c.tileRows(wk, plane/g.Groups, plane%g.Groups, p0, p1, j0, cols)
	}
}

// tile computes output columns [j0, j0+cols) of every row of group grp
// of image n.
func (c *Conv2D) tile(wk *convWorker, n, grp, j0, cols int) {
	c.tileRows(wk, n, grp, 0, c.npan, j0, cols)
}

// tileRows computes output columns [j0, j0+cols) of row panels [p0, p1)
// of group grp of image n (p1 = npan: the rows past the panels too;
// pooled, for a pooled conv, which takes all rows, from the worker's
// scratch) and applies the epilogue.
func (c *Conv2D) tileRows(wk *convWorker, n, grp, p0, p1, j0, cols int) {
	g := &c.g
	// The tile's first output is y[yoff], its rows ldy apart: in the
	// output, or a pooled conv's scratch, pooled from there.
	y, ldy, yoff := c.run.y, c.ohw, (n*g.M+grp*c.mpg)*c.ohw+j0
	if c.pooled.on {
		y, ldy, yoff = wk.out, c.nb, 0
	}
	m0, m1 := c.panelRows(p0, p1)
	// The kernels clamp the sums of whole micro-tiles (full row and column
	// panels) in registers as they store the last depth block
	// (ConvArgs.ActIsRelu), and the epilogue pass runs on the rest only:
	// the rows past the last whole panel, the columns past the last whole
	// column panel (finishRest).
	clamps := c.run.clamp != 0 && !c.direct && c.ktot > 0
	wk.clamp = 0
	if c.ktot == 0 { // no input channels and no bias
		for m := m0; m < m1; m++ {
			clear(y[yoff+m*ldy:][:cols])
		}
	}
	c.tileDepth(wk, y, ldy, yoff, n, grp, p0, p1, j0, cols, 0, c.ktot, clamps)
	wk.clamp = 0
	switch {
	case clamps:
		c.finishRest(y, ldy, yoff, m0, m1, p1, cols)
	case c.run.finishes() && cols == ldy: // the rows are contiguous: one call (a squeeze-excitation's 1×1 planes)
		c.finish(y[yoff+m0*ldy:][:(m1-m0)*ldy], yoff+m0*ldy)
	case c.run.finishes():
		for m := m0; m < m1; m++ {
			c.finish(y[yoff+m*ldy:][:cols], yoff+m*ldy)
		}
	}
	if c.pooled.on {
		c.poolTile(y, n*g.M+grp*c.mpg, j0, cols)
	}
}

// tileDepth computes depth [k0, k1) (whole depth blocks, k0 a block's
// first step) of output columns [j0, j0+cols) of row panels [p0, p1) of
// group grp of image n into y from y[yoff], rows ldy apart: the block at
// k0 overwrites y, the later ones add to it. With clamps the last block
// of the whole depth stores through the run's in-register clamp.
func (c *Conv2D) tileDepth(wk *convWorker, y []float32, ldy, yoff, n, grp, p0, p1, j0, cols, k0, k1 int, clamps bool) {
	g, nr := &c.g, c.v.nr
	wk.kFirst = k0 // (back to 0 at the end: the Winograd runs share the products)
	php := c.pad.hp * c.pad.wp
	xg := c.run.x[(n*g.C+grp*c.cpg)*php:][:c.cpg*php]
	a := c.run.a[grp*c.astride:][:c.astride]
	// Depth blocks outer: the weights' block stays in L2 and the
	// output tile in cache while every panel meets them.
	for pc := k0; pc < k1; pc += c.kc {
		kc := min(c.kc, c.ktot-pc)
		if clamps && pc+kc == c.ktot {
			wk.clamp = c.run.clamp
		}
		if c.direct {
			c.directProduct(y, ldy, a, xg, pc, kc, yoff, j0, cols, p0, p1)
			continue
		}
		// Column panels two at a time through the two-panel kernel
		// where the variant has one, the rest one at a time.
		pair := 1
		if c.v.panel2 != nil {
			pair = 2
		}
		for jp := 0; jp < cols; {
			np := min(pair, (cols-jp)/nr) // full panels taken together
			np = max(np, 1)
			var bp [2][]float32
			for i := range np {
				j := j0 + jp + i*nr
				if c.shared.on {
					bp[i] = c.sharedPanel(n*g.Groups+grp, pc/c.kc, j/nr)
				} else {
					bp[i] = wk.panel(i, pc, kc, nr, c.bias)
					c.packPanel(bp[i], xg, j, min(nr, cols-jp-i*nr), pc, kc)
				}
			}
			if np == 2 {
				c.panelPairProduct(wk, y, ldy, a, c.ktot, bp, pc, kc, yoff+jp, p0, p1)
			} else {
				c.panelProduct(wk, y, ldy, a, c.ktot, bp[0], pc, kc, yoff+jp, min(nr, cols-jp), p0, p1)
			}
			jp += np * nr
		}
	}
	wk.kFirst = 0
}

// finishRest runs the epilogue (the activation alone: the in-register
// clamp is only taken without a residual or a later activation) on the
// outputs of rows [m0, m1), columns [0, cols) of a tile that the kernels
// did not clamp in registers: those of the rows past the tile's last
// whole row panel (the edge kernels' and the one-row kernel's), and of
// the columns past its last whole column panel (computed through
// scratch). Channel counts such as 16, 64, 256 and 1000 (MobileNet's,
// ResNet's, SqueezeNet's) are not multiples of twelve: a clamp taken
// only by tiles of whole panels left a separate Relu pass over most of
// their outputs, 12% of SqueezeNet 1.1's one-thread profile.
func (c *Conv2D) finishRest(y []float32, ldy, yoff, m0, m1, p1, cols int) {
	whole := min(max(min(p1, c.mpg/c.v.mr)*c.v.mr, m0), m1) // rows [m0, whole) are in whole panels
	done := cols / c.v.nr * c.v.nr                          // and their columns [0, done) in whole panels
	for m := m0; m < m1; m++ {
		from := 0
		if m < whole {
			from = done
		}
		if from < cols {
			at := yoff + m*ldy + from
			c.finish(y[at:][:cols-from], at)
		}
	}
}

// panelPairProduct is panelProduct for two full column panels, bp[0]
// and bp[1] (2·NR columns of y from y[ci]): the full row panels run
// through the two-panel kernel, a last panel of 4 or 8 rows through its
// edge kernel, other edge rows through panelProduct for each panel.
func (c *Conv2D) panelPairProduct(wk *convWorker, y []float32, ldy int, a []float32, ktot int, bp [2][]float32, pc, kc, ci, p0, p1 int) {
	v := c.v
	mr, nr := v.mr, v.nr
	flags := wk.far
	if pc > wk.kFirst {
		flags |= gemmAccumulate
	}
	b0, b1 := bp[0][:kc*nr], bp[1][:kc*nr]
	full := min(p1, c.mpg/mr) // panels [p0, full) have all MR rows
	for ip := p0; ip < full; ip++ {
		ap := a[c.rowPanel(ip, pc, kc):][:kc*mr]
		at := ci + ip*mr*ldy
		_ = y[at+(mr-1)*ldy+2*nr-1] // the whole tile is inside y
		v.panel2(1, kc, &ap[0], &b0[0], &b1[0], &y[at], ldy, flags|wk.clamp)
	}
	rest := max(p0, full)
	if rows := c.mpg - rest*mr; rest < p1 && (rows == 4 || rows == 8) && v.edge2 != nil {
		// The last panel's 4 or 8 rows, both column panels at once.
		ap := a[c.rowPanel(rest, pc, kc):][:kc*mr]
		at := ci + rest*mr*ldy
		_ = y[at+(rows-1)*ldy+2*nr-1] // the rows are inside y
		v.edge2(rows, kc, &ap[0], &b0[0], &b1[0], &y[at], ldy, flags)
		rest++
	}
	if rest < p1 || p1 == c.mpan && c.mgemv > 0 {
		c.panelProduct(wk, y, ldy, a, ktot, b0, pc, kc, ci, nr, rest, p1)
		c.panelProduct(wk, y, ldy, a, ktot, b1, pc, kc, ci+nr, nr, rest, p1)
	}
}

// colsPanels computes the ncol (<= colsMax) columns of the whole row
// panels from ip on, below p1, on the variant's colsPanelsKernels where
// it has them and enough panels remain, merging them into y as
// panelProduct does; it returns the panels done (0: none).
func (c *Conv2D) colsPanels(wk *convWorker, y []float32, ldy int, a, bp []float32, pc, kc, ci, ncol, ip, p1 int) int {
	v, mr := c.v, c.v.mr
	full := min(p1, c.mpg/mr) - ip // whole panels left
	var n int
	switch {
	case ncol == 1 && v.colsP8 != nil && full >= 8:
		n = 8
	case v.colsP4 != nil && full >= 4:
		n = 4
	default:
		return 0
	}
	t := wk.tile[:colsPanelsMax*colsMax*16]
	ap := a[c.rowPanel(ip, pc, kc):][:n*kc*mr] // the panels lie kc·MR floats apart
	if n == 8 {
		v.colsP8(kc, &ap[0], kc*mr, &bp[0], &t[0])
	} else {
		v.colsP4(kc, &ap[0], kc*mr, &bp[0], &t[0])
	}
	acc := pc > wk.kFirst
	for p := range n {
		at := ci + (ip+p)*mr*ldy
		for r := range mr {
			dst := y[at+r*ldy:][:ncol]
			for j := range dst {
				if acc {
					dst[j] += t[(p*colsMax+j)*16+r]
				} else {
					dst[j] = t[(p*colsMax+j)*16+r]
				}
			}
		}
	}
	return n
}

// panelProduct computes depth block [pc, pc+kc) of the ncol (<= NR)
// columns of y (rows ldy apart) from y[ci], the group's first row, for
// row panels [p0, p1) (and the rows past them when p1 = mpan): the
// packed weights a times the panel bp, which stays in L1 while every row
// panel meets it. The first block overwrites y, the others add to it.
func (c *Conv2D) panelProduct(wk *convWorker, y []float32, ldy int, a []float32, ktot int, bp []float32, pc, kc, ci, ncol, p0, p1 int) {
	v := c.v
	mr, nr := v.mr, v.nr
	flags := wk.far
	if pc > wk.kFirst {
		flags |= gemmAccumulate
	}
	bp = bp[:kc*nr]
	for ip := p0; ip < p1; ip++ {
		rows := min(mr, c.mpg-ip*mr)
		ap := a[c.rowPanel(ip, pc, kc):][:kc*mr]
		at := ci + ip*mr*ldy
		if ncol <= colsMax {
			if n := c.colsPanels(wk, y, ldy, a, bp, pc, kc, ci, ncol, ip, p1); n > 0 {
				ip += n - 1 // and the loop's one
				continue
			}
		}
		if rows == mr && ncol == nr {
			_ = y[at+(mr-1)*ldy+nr-1] // the whole tile is inside y
			v.micro(kc, &ap[0], &bp[0], &y[at], ldy, flags|wk.clamp)
			continue
		}
		if rows == 4 && ncol == nr && v.micro4 != nil { // M/G ≡ 4 (mod 6): 64 = 6·10 + 4
			_ = y[at+3*ldy+nr-1] // the four rows are inside y
			v.micro4(kc, &ap[0], &bp[0], &y[at], ldy, flags)
			continue
		}
		t := wk.tile
		if ncol <= colsMax && v.cols != nil {
			// A tile of a few columns (a 7×7 plane's last position).
			_ = t[colsMax*16-1]
			v.cols(kc, &ap[0], &bp[0], &t[0])
			acc := flags&gemmAccumulate != 0
			for r := range rows {
				dst := y[at+r*ldy:][:ncol]
				for j := range dst {
					if acc {
						dst[j] += t[j*16+r]
					} else {
						dst[j] = t[j*16+r]
					}
				}
			}
			continue
		}
		v.micro(kc, &ap[0], &bp[0], &t[0], nr, flags&gemmPrefetchFar)
		for r := range rows {
			gemmMerge(y[at+r*ldy:][:ncol], t[r*nr:][:ncol], flags&gemmAccumulate != 0)
		}
	}
	if p1 < c.mpan {
		return
	}
	for r := range c.mgemv {
		m := c.mpan*mr + r
		ar := a[m*ktot+pc:][:kc]
		at := ci + m*ldy
		if ncol == nr {
			_ = y[at+nr-1]
			v.gemv(kc, &ar[0], &bp[0], nr, &y[at], flags)
			continue
		}
		t := wk.tile[:nr]
		v.gemv(kc, &ar[0], &bp[0], nr, &t[0], 0)
		gemmMerge(y[at:][:ncol], t[:ncol], flags&gemmAccumulate != 0)
	}
}
