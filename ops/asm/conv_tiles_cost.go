package asm

// The cost model behind planTiles' choice for several threads, in units
// of one MR-row panel times one NR-column panel over the full depth. The
// constants are rough (packing and reading weights are a few percent of
// the products in profiles); they only break near-ties between plans
// whose products balance equally well.

const (
	// convPackCost is packing one column panel of patches (all depth),
	// for a tile that packs its own.
	convPackCost = 0.25
	// convReadCost is a tile's first read of one row panel of weights
	// (from L3; the tile's other column panels find it in L2).
	convReadCost = 0.25
	// convTileCost is a tile's fixed cost: taking it, its epilogue's
	// calls, its output's first touch.
	convTileCost = 0.5
)

// colBlocks is the number of column blocks that keeps a tile of rows
// output rows within convTileFloats.
func (c *Conv2D) colBlocks(rows int) int {
	t := &c.convTiles
	per := max(1, max(convMinCols, convTileFloats/max(rows, 1))/t.unit)
	return min(max(1, (t.units+per-1)/per), max(t.units, 1))
}

// searchTiles sets rb and cb to the plan of least estimated finish on
// threads workers: row blocks up to 8 per thread (where allowed and
// their shared patches fit in convSharedMax), and for each, column
// blocks from those its tile size needs to twice as many, or 8 per
// thread (only the first where that already makes 32 tiles per thread,
// which balance well enough: a large batch).
func (c *Conv2D) searchTiles(threads int) {
	t := &c.convTiles
	planes := c.g.N * c.g.Groups
	rbMax := 1
	if convRowSplitOn && !c.pooled.on && c.mpg >= c.span && t.npan > 1 && planes*c.ktot*t.units*c.v.nr <= convSharedMax {
		rbMax = min(t.npan, 8*threads)
	}
	best, enough := -1.0, false
	for rb := 1; rb <= rbMax; rb++ {
		cb0 := c.colBlocks((c.mpg + rb - 1) / rb)
		hi := cb0
		if planes*rb*cb0 < 32*threads {
			hi = min(t.units, max(2*cb0, 8*threads))
		}
		for cb := cb0; cb <= hi; cb++ {
			// Fewer than convMinTiles per thread only when no plan has them.
			ok := planes*rb*cb >= convMinTiles*threads
			if enough && !ok {
				continue
			}
			if est := c.finishEstimate(rb, cb, planes, threads); best < 0 || est < best || ok && !enough {
				best, t.rb, t.cb = est, rb, cb
			}
			enough = enough || ok
		}
	}
}

// convSharedMax bounds the shared patches of a plan with row blocks (16
// MiB): batches large enough to exceed it have enough tiles without.
const convSharedMax = 1 << 22

// convMinTiles is the fewest tiles per thread a plan should have, so
// that a worker whose core is taken by other work for a while leaves
// some of its share to the others (a variable for
// BenchmarkConvResNet18Tiles).
var convMinTiles = 2

// finishEstimate is when the last of threads workers, taking the tiles
// of plan (rb, cb) in order as each finishes its last, would finish.
func (c *Conv2D) finishEstimate(rb, cb, planes, threads int) float64 {
	t := &c.convTiles
	saved := *t
	defer func() { *t = saved }()
	t.rb, t.cb = rb, cb
	shared := rb > 1 && !c.direct // as planShared decides
	var busy [64]float64
	w := busy[:min(threads, len(busy))]
	start := 0.0
	if shared { // all patches packed first, spread over the workers
		start = convPackCost * float64(planes*t.units) / float64(len(w))
	}
	for i := range w {
		w[i] = start
	}
	for range planes {
		for r := range rb {
			p0, p1 := t.rowBlock(r)
			m0, m1 := c.panelRows(p0, p1)
			rp := float64(p1 - p0)
			if p1 == t.npan && !c.direct {
				rp += 2 * float64(c.mgemv) / float64(c.v.mr) // one-row kernel rows, at half speed
			}
			if m1 <= m0 {
				continue
			}
			for b := range cb {
				_, cols := c.colBlock(b)
				cp := float64((cols + c.v.nr - 1) / c.v.nr)
				cost := rp*cp + rp*convReadCost + convTileCost
				if !shared {
					cost += cp * convPackCost
				}
				k := 0
				for i := range w {
					if w[i] < w[k] {
						k = i
					}
				}
				w[k] += cost
			}
		}
	}
	end := 0.0
	for _, v := range w {
		end = max(end, v)
	}
	return end
}
