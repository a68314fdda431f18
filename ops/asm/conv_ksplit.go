package asm

// Depth split. A convolution whose output plane is small and whose depth
// is large (ResNet's stride-2 3×3 convs into 14×14 and 7×7: 1153 and
// 2305 deep over 196 and 49 positions) has few column tiles to share
// between workers, so they split its output channels (row blocks), which
// then read patches packed once for both (shared patches): every worker
// reads the panels the others packed, across cores, and the plan has a
// pass of its own for them. Split by depth instead, each worker packs
// only the patches of its share of the depth blocks, reads only its
// share of the weights, and computes every output from them: the first
// share into the output, the others each into a scratch of its own. A
// second pass, split by output rows, adds the scratches in and runs the
// epilogue. The shares are summed in another order than one worker sums
// the depth blocks, so the outputs differ from the unsplit run's by
// rounding.

// convKSplit is the depth-split plan.
type convKSplit struct {
	on    bool
	parts int     // shares of the depth blocks
	kb    int     // depth blocks
	prod  *Chunks // computes parts [lo, hi)
	sum   *Chunks // adds the scratches into output rows [lo, hi), then the epilogue
	part  []float32
}

// convKSplitOn allows the depth split (a variable for the tests and
// benchmarks that compare it with the row blocks).
var convKSplitOn = true

// convKSplitMinBlocks is the fewest depth blocks a share gets.
const convKSplitMinBlocks = 2

// convKSplitFree holds the scratches not in use, as convSharedFree does
// the shared patches.
var convKSplitFree freeList

// planKSplit turns the depth split on where the tile plan chose row
// blocks (a small output plane: see searchTiles) for one plane on the
// packing path and the depth has at least convKSplitMinBlocks blocks for
// each of two workers; the tiles are then whole rows of column blocks,
// computed share by share.
func (c *Conv2D) planKSplit(par Par) {
	threads := max(1, par.Threads)
	s := &c.ksplit
	*s = convKSplit{}
	if !convKSplitOn || threads < 2 || c.direct || c.pooled.on || c.wino != nil || c.kc == 0 ||
		c.g.N*c.g.Groups != 1 || c.rb < 2 {
		return
	}
	s.kb = (c.ktot + c.kc - 1) / c.kc
	if s.kb < 2*convKSplitMinBlocks {
		return
	}
	s.on, s.parts = true, min(threads, s.kb/convKSplitMinBlocks)
	t := &c.convTiles
	t.rb, t.cb = 1, c.colBlocks(c.mpg)
	c.nb = min((t.units+t.cb-1)/t.cb*t.unit, max(c.span, 1))
	c.shared = convShared{}
	s.prod = NewChunks(par, s.parts, 1, c.kSplitPart)
	s.sum = NewChunks(par, c.mpg, 4, c.kSplitSum)
}

// kSplitPart computes shares [lo, hi) of the depth blocks: share p
// into the output (p = 0) or its scratch.
func (c *Conv2D) kSplitPart(ch, lo, hi int) {
	s, wk := &c.ksplit, &c.ws[ch]
	size := c.mpg * c.ohw
	for p := lo; p < hi; p++ {
		k0 := s.kb * p / s.parts * c.kc
		k1 := min(s.kb*(p+1)/s.parts*c.kc, c.ktot)
		y := c.run.y[:size]
		if p > 0 {
			y = s.part[(p-1)*size:][:size]
		}
		for cb := range c.cb {
			j0, cols := c.colBlock(cb)
			c.tileDepth(wk, y, c.ohw, j0, 0, 0, 0, c.npan, j0, cols, k0, k1, false)
		}
	}
}

// kSplitSum adds every scratch into output rows [lo, hi) and runs the
// epilogue on them.
func (c *Conv2D) kSplitSum(_, lo, hi int) {
	s := &c.ksplit
	size := c.mpg * c.ohw
	rows := c.run.y[lo*c.ohw : hi*c.ohw]
	for p := 1; p < s.parts; p++ {
		c.k.Axpy(rows, s.part[(p-1)*size+lo*c.ohw:][:len(rows)], 1) // 1·s + y rounds as s + y
	}
	if c.run.finishes() {
		c.finish(rows, lo*c.ohw)
	}
}

// runKSplit runs the shares, then the sums.
func (c *Conv2D) runKSplit() {
	s := &c.ksplit
	s.part = convKSplitFree.take((s.parts - 1) * c.mpg * c.ohw)
	s.prod.Do()
	s.sum.Do()
	convKSplitFree.give(s.part)
	s.part = nil
}
