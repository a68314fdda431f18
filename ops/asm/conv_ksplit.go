package asm

// Depth split. A convolution whose output plane is small and whose depth
// is large (ResNet's stride-2 3×3 convs into 14×14 and 7×7: 1153 and
// 2305 deep over 196 and 49 positions) has few column tiles to share
// between workers, so they split its output channels (row blocks), which
// then read patches packed once for all (shared patches): every worker
// reads the panels the others packed, across cores, and the plan has a
// pass of its own for them. Split by depth instead, into two shares of
// the depth blocks, each worker packs only the patches of its share,
// reads only its share of the weights, and computes every output from
// them: the first share into the output, the second into a scratch. A
// second pass, split by output rows, adds the scratch in and runs the
// epilogue. The shares are part of the convolution's arithmetic, not of
// its split: a plane qualifies by its geometry alone, and on one worker
// (or three, where each share's rows are cut into blocks) the shares are
// computed and added just the same, so every number of workers gives the
// same bits (which the executor's inline runs rely on: exec/tune.go).

// convKSplit is the depth-split plan.
type convKSplit struct {
	on   bool
	kb   int     // depth blocks
	rows int     // row blocks of each share
	prod *Chunks // computes items [lo, hi): share it / rows, row block it % rows
	sum  *Chunks // adds the scratch into output rows [lo, hi), then the epilogue
	part []float32
}

// convKSplitShares is the number of depth shares.
const convKSplitShares = 2

// convKSplitOn allows the depth split (a variable for the tests and
// benchmarks that compare it with the row blocks).
var convKSplitOn = true

// convKSplitMinBlocks is the fewest depth blocks a share gets.
const convKSplitMinBlocks = 2

// convKSplitFree holds the scratches not in use, as convSharedFree does
// the shared patches.
var convKSplitFree freeList

// planKSplit turns the depth split on for one plane on the packing path
// whose output is small (no more positions than channels, as the row
// blocks of searchTiles require) and whose depth has at least
// convKSplitMinBlocks blocks for each share; the tiles are then whole
// rows of column blocks, and each share's rows are cut into a block per
// worker past the shares (none on one or two workers).
func (c *Conv2D) planKSplit(par Par) {
	threads := max(1, par.Threads)
	s := &c.ksplit
	*s = convKSplit{}
	if !convKSplitOn || c.direct || c.pooled.on || c.kc == 0 || // (the Winograd path is direct)
		c.g.N*c.g.Groups != 1 || c.mpg < c.span || c.npan < 2 {
		return
	}
	s.kb = (c.ktot + c.kc - 1) / c.kc
	if s.kb < convKSplitShares*convKSplitMinBlocks {
		return
	}
	s.on = true
	s.rows = min((threads+convKSplitShares-1)/convKSplitShares, c.npan)
	c.rb = 1
	c.setColBlocks(c.colBlocks(c.mpg))
	c.shared = convShared{}
	s.prod = NewChunks(par, convKSplitShares*s.rows, 1, c.kSplitPart)
	s.sum = NewChunks(par, c.mpg, 4, c.kSplitSum)
}

// kSplitPart computes items [lo, hi): item i is share i / rows (into
// the output for the first, the scratch for the second) of row block
// i % rows.
func (c *Conv2D) kSplitPart(ch, lo, hi int) {
	s, wk := &c.ksplit, &c.ws[ch]
	size := c.mpg * c.ohw
	for i := lo; i < hi; i++ {
		p, rb := i/s.rows, i%s.rows
		k0 := s.kb * p / convKSplitShares * c.kc
		k1 := min(s.kb*(p+1)/convKSplitShares*c.kc, c.ktot)
		p0, p1 := rb*c.npan/s.rows, (rb+1)*c.npan/s.rows
		y := c.run.y[:size]
		if p > 0 {
			y = s.part[(p-1)*size:][:size]
		}
		for cb := range c.cb {
			j0, cols := c.colBlock(cb)
			c.tileDepth(wk, y, c.ohw, j0, 0, 0, p0, p1, j0, cols, k0, k1, false)
		}
	}
}

// kSplitSum adds every scratch into output rows [lo, hi) and runs the
// epilogue on them.
func (c *Conv2D) kSplitSum(_, lo, hi int) {
	s := &c.ksplit
	size := c.mpg * c.ohw
	rows := c.run.y[lo*c.ohw : hi*c.ohw]
	for p := 1; p < convKSplitShares; p++ {
		c.k.Axpy(rows, s.part[(p-1)*size+lo*c.ohw:][:len(rows)], 1) // 1·s + y rounds as s + y
	}
	if c.run.finishes() {
		c.finish(rows, lo*c.ohw)
	}
}

// runKSplit runs the shares, then the sums.
func (c *Conv2D) runKSplit() {
	s := &c.ksplit
	s.part = convKSplitFree.take((convKSplitShares - 1) * c.mpg * c.ohw)
	s.prod.Do()
	s.sum.Do()
	convKSplitFree.give(s.part)
	s.part = nil
}
