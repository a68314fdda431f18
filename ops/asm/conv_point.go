package asm

// The pointwise path. A 1×1 convolution at stride 1, without padding or
// groups, over planes of at least 256 positions (MobileNet's expand and
// project steps at 28² and up, the 1×1 steps of DenseNet and YOLO
// necks) runs on the vector
// phase product (conv_phase.go), its rows stored whole
// (PhaseProduct.RunWhole): the input channels are its steps, step q
// reading a segment's sixteen positions in place at q·H·W floats from
// them, so no patch panel is packed. The GEMM path copied every input
// value into its B panels before the products, a pass as long as the
// products themselves where the depth is a few dozen channels: on Zen 5
// (one thread) MobileNetV2's 32 → 16 step at 112² ran at 80 GFLOP/s
// through it and 108 through the phase product, its 96 → 24 step at 56²
// at 129 against 174.
//
// Output channels go in panels of 12 rows (the last of 4, 8 or 12,
// PhaseRows), positions in blocks of two-segment tiles sized so that a
// block's inputs stay in L1 across the panels (pointBlockBytes). Workers
// take blocks (workClaims: contiguous shares, as the GEMM path's column
// blocks, so consecutive steps split positions alike) and apply the
// epilogue to a panel's rows of a block as soon as they are computed.

// convPointOn enables the pointwise path (a variable for the tests and
// benchmarks that compare it with the GEMM path).
var convPointOn = true

// pointBlockBytes bounds a block's inputs: under Zen 5's 48 KiB L1D.
const pointBlockBytes = 32 << 10

// pointMinPositions is the smallest plane the path takes. On smaller
// ones the weights outweigh the input: every block reads all of them,
// where the GEMM path splits them over the workers (row blocks) and
// fetches them far ahead when they stream from memory. MobileNetV2's
// 1×1 steps at 14² and 7² ran 10-40% slower on the phase product at one
// thread and up to twice as long at two, those at 28² and up 10-45%
// faster at one thread and 15-50% at two (Zen 5).
const pointMinPositions = 256

// convPoint is the pointwise path's plan.
type convPoint struct {
	prod   *PhaseProduct
	panels []pointPanel
	tiles  []*PhaseTiles // per block of positions
	pos    []int         // block b's positions: [pos[b], pos[b+1])
	size   int           // floats of the packed weights
	claims workClaims    // the run's (image, block) items
}

// pointPanel is output channels [m0, m0+n) computed as rows rows (n
// rounded up to a PhaseRows height); its weights start at at in the
// packing, step-major (a[q·rows + r]), its bias after them.
type pointPanel struct{ m0, n, rows, at int }

// planPoint returns the pointwise plan of c, or nil where the path does
// not apply: not such a convolution, a plane of fewer than
// pointMinPositions, or a GEMM variant whose convolution kernels have no
// vector phase product.
// It depends on the geometry and the variant only, never on par (so
// plans for any number of workers share their packing).
func (c *Conv2D) planPoint(par Par) *convPoint {
	g := &c.g
	if !convPointOn || c.pooled.on || g.Groups != 1 || g.C < 2 || g.KH != 1 || g.KW != 1 || g.SH != 1 || g.SW != 1 ||
		g.PT != 0 || g.PL != 0 || g.OH != g.H || g.OW != g.W || c.ohw < pointMinPositions || g.M == 0 {
		return nil
	}
	k := convKernelsFor(c.v.Feature)
	if k.phase == nil {
		return nil
	}
	off := make([]int, g.C)
	for q := range off {
		off[q] = q * c.hw
	}
	prod, err := newPhaseProduct(k.phase, off)
	if err != nil {
		return nil
	}
	p := &convPoint{prod: prod}
	for m0 := 0; m0 < g.M; m0 += 12 {
		n := min(12, g.M-m0)
		rows := (n + 3) &^ 3 // 4, 8 or 12
		p.panels = append(p.panels, pointPanel{m0: m0, n: n, rows: rows, at: p.size})
		p.size += rows * (g.C + 1)
	}
	// Blocks of consecutive two-segment tiles, in position order.
	tiles := pointTiles(c.ohw)
	per := max(1, pointBlockBytes/(4*32*g.C))
	for t0 := 0; t0 < len(tiles); t0 += per {
		var at []int
		for _, t := range tiles[t0:min(t0+per, len(tiles))] {
			at = append(at, t[0], t[1], t[0], t[1])
		}
		ts, err := NewPhaseTiles(at)
		if err != nil {
			return nil
		}
		p.tiles = append(p.tiles, ts)
		p.pos = append(p.pos, tiles[t0][0])
	}
	p.pos = append(p.pos, c.ohw)
	threads := max(1, par.Threads)
	c.c = NewChunks(par, min(threads, g.N*len(p.tiles)), 1, c.pointBlocks)
	p.claims = newWorkClaims(c.c.N())
	return p
}

// pointTiles pairs the sixteen-position segments of a plane of p >= 16
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

// Pointwise reports whether runs take the pointwise path.
func (c *Conv2D) Pointwise() bool { return c.point != nil }

// packPoint packs w [M,C] and b [M] (nil: zeros) as the plan's panels.
func (c *Conv2D) packPoint(pw *ConvWeights, w, b []float32) {
	g, p := &c.g, c.point
	if cap(pw.data) < p.size {
		pw.data = make([]float32, p.size)
	}
	pw.data = pw.data[:p.size]
	clear(pw.data)
	for _, pn := range p.panels {
		a := pw.data[pn.at:][:pn.rows*(g.C+1)]
		for r := range pn.n {
			for q, v := range w[(pn.m0+r)*g.C:][:g.C] {
				a[q*pn.rows+r] = v
			}
			if b != nil {
				a[g.C*pn.rows+r] = b[pn.m0+r]
			}
		}
	}
}

// runPoint runs the pointwise path over every image.
func (c *Conv2D) runPoint() {
	c.point.claims.reset(c.g.N * len(c.point.tiles))
	c.c.Do()
}

// pointBlocks is the body of worker ch: it takes (image, block) items
// and computes every panel of each, each panel's rows through the
// epilogue right after.
func (c *Conv2D) pointBlocks(ch, _, _ int) {
	g, p, r := &c.g, c.point, &c.run
	blocks := len(p.tiles)
	for {
		it, ok := p.claims.next(ch)
		if !ok {
			return
		}
		n, b := it/blocks, it%blocks
		x := r.x[n*g.C*c.hw:][:g.C*c.hw]
		p0, p1 := p.pos[b], p.pos[b+1]
		for _, pn := range p.panels {
			a := r.a[pn.at:][:pn.rows*(g.C+1)]
			base := (n*g.M + pn.m0) * c.ohw
			p.prod.RunWhole(pn.rows, pn.n, a[:g.C*pn.rows], a[g.C*pn.rows:], x, r.y, base, c.ohw, p.tiles[b], r.clamp)
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
