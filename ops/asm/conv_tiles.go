package asm

// Tiles of the GEMM path. A tile is one (batch, group) plane's block of
// row panels (output channels) times a block of column units (NR output
// positions, or a pooled conv's row pairs). Blocks split their panels and
// units evenly (sizes differ by at most one), so tiles cost about the
// same: a block of 13 column panels split four ways is 4+3+3+3 panels,
// where blocks of a fixed width were 4+4+4+1.
//
// One thread splits only the columns, so that a tile's output stays
// within convTileFloats. More threads take tiles as they go, and the
// plan is the one whose estimated finish (finishEstimate, in
// conv_tiles_cost.go: list scheduling in tile order, as the workers take
// them) is earliest: enough tiles of
// even cost that no worker waits long for the last. More tiles are had
// two ways: more column blocks, each of which reads all of the group's
// weights again, or row blocks. Row blocks are considered where a plane
// has no more output positions than channels (ResNet's last stages: 512
// channels of 7×7), where the weights are the larger operand and column
// blocks would be thin, wasting most of a micro-tile's columns; their
// patches are packed once for all row blocks (convShared).

// convRowSplitOn enables row blocks (a variable for
// BenchmarkConvResNet18Tiles, which compares column blocks alone).
var convRowSplitOn = true

// convTiles is how the GEMM path's output is cut into tiles.
type convTiles struct {
	unit   int   // output positions per column unit
	units  int   // column units per plane
	cb, rb int   // column and row blocks per plane
	npan   int   // row panels per group: MR-row ones, or the direct path's
	dpan0  []int // the direct path's first row of each panel, and M/G
}

// planTiles chooses the blocks for threads workers and sets nb, the
// widest column block in positions.
func (c *Conv2D) planTiles(threads int) {
	g, t := &c.g, &c.convTiles
	t.unit = c.v.nr
	if c.pooled.on {
		t.unit = 2 * g.OW
	}
	t.units = (c.span + t.unit - 1) / t.unit
	t.npan = c.mpan
	if c.direct {
		t.npan = len(c.dpan)
		t.dpan0 = make([]int, len(c.dpan)+1)
		for i, r := range c.dpan {
			t.dpan0[i+1] = t.dpan0[i] + r
		}
	}
	t.rb, t.cb = 1, c.colBlocks(c.mpg)
	if threads > 1 {
		c.searchTiles(threads)
	}
	c.setColBlocks(t.cb)
}

// setColBlocks sets the plan's column blocks (at most its units) and nb.
func (c *Conv2D) setColBlocks(cb int) {
	t := &c.convTiles
	t.cb = min(cb, max(t.units, 1))
	c.nb = min((t.units+t.cb-1)/t.cb*t.unit, max(c.span, 1))
}

// tiles is the number of tiles of a run.
func (t *convTiles) tiles(planes int) int { return planes * t.rb * t.cb }

// colBlock is column block i's first output position and width.
func (c *Conv2D) colBlock(i int) (j0, cols int) {
	t := &c.convTiles
	u0, u1 := i*t.units/t.cb, (i+1)*t.units/t.cb
	j0 = u0 * t.unit
	return j0, min(u1*t.unit, c.span) - j0
}

// rowBlock is row block i's panels [p0, p1).
func (t *convTiles) rowBlock(i int) (p0, p1 int) {
	return i * t.npan / t.rb, (i + 1) * t.npan / t.rb
}

// panelRows is the group's rows from panel p0 to p1 (p1 = npan: all
// rows to the last, with those the one-row kernel takes).
func (c *Conv2D) panelRows(p0, p1 int) (m0, m1 int) {
	t := &c.convTiles
	if c.direct {
		m0, m1 = t.dpan0[p0], t.dpan0[p1]
	} else {
		m0, m1 = p0*c.v.mr, p1*c.v.mr
	}
	if p1 == t.npan {
		m1 = c.mpg
	}
	return min(m0, c.mpg), min(m1, c.mpg)
}

// Shared patches. Row blocks of one plane would each pack the same
// patches: where output rows are shorter than a panel (7×7: every panel
// gathers three row segments per tap) packing is 9% of the 512-channel
// conv's time at one thread, so eight row blocks packing their own would
// add 60%. A plan with row blocks therefore packs every panel of every
// depth block once per run, spread over the workers, into one buffer the
// tiles then read.

// convShared is the shared-patches plan and run state.
type convShared struct {
	on    bool
	kb    int     // depth blocks
	items int     // (plane, depth block, column panel) panels
	pack  *Chunks // packs panels [lo, hi)
	buf   []float32
}

// convSharedFree holds the shared-patches buffers not in use, as
// convPadFree does the padded inputs.
var convSharedFree freeList

// planShared sets the shared-patches plan up when the tiles have row
// blocks (on the packing path).
func (c *Conv2D) planShared(par Par) {
	s := &c.shared
	if c.rb < 2 || c.direct || c.pooled.on || c.ktot == 0 {
		return
	}
	s.on = true
	s.kb = (c.ktot + c.kc - 1) / c.kc
	s.items = c.g.N * c.g.Groups * s.kb * c.units
	s.pack = NewChunks(par, s.items, 4, c.packShared)
}

// sharedPanel is the packed panel of column panel q, depth block d of
// plane pl.
func (c *Conv2D) sharedPanel(pl, d, q int) []float32 {
	s, nr := &c.shared, c.v.nr
	kc := min(c.kc, c.ktot-d*c.kc)
	return s.buf[((pl*s.kb+d)*c.units+q)*c.kc*nr:][:kc*nr]
}

// packShared packs panels [lo, hi), numbered over (plane, depth block,
// column panel).
func (c *Conv2D) packShared(_, lo, hi int) {
	g, s, nr := &c.g, &c.shared, c.v.nr
	php := c.pad.hp * c.pad.wp
	for it := lo; it < hi; it++ {
		pl, d, q := it/(s.kb*c.units), it/c.units%s.kb, it%c.units
		n, grp := pl/g.Groups, pl%g.Groups
		xg := c.run.x[(n*g.C+grp*c.cpg)*php:][:c.cpg*php]
		dst := c.sharedPanel(pl, d, q)
		if d == 0 && c.bias {
			fill(dst[:nr], 1) // the row of ones that meets the bias column
		}
		j := q * nr
		c.packPanel(dst, xg, j, min(nr, c.span-j), d*c.kc, len(dst)/nr)
	}
}

// runTiles runs the tiles, after packing the shared patches when the
// plan has them.
func (c *Conv2D) runTiles() {
	if c.point != nil {
		c.runPoint()
		return
	}
	if c.winoG != nil && c.run.wino && c.runWinoGemm() {
		return
	}
	if !c.run.padded {
		c.pad.c.Do() // the Winograd runs stopped before padding every plane
		c.run.padded = true
	}
	if c.ksplit.on {
		c.runKSplit()
		return
	}
	if c.wino != nil {
		c.claims.reset(c.g.N * c.wino.blocks)
	} else {
		c.claims.reset(c.tiles(c.g.N * c.g.Groups))
	}
	s := &c.shared
	if !s.on || c.wino != nil {
		c.c.Do()
		return
	}
	size := s.items * c.kc * c.v.nr
	s.buf = convSharedFree.take(size)
	s.pack.Do()
	c.c.Do()
	convSharedFree.give(s.buf)
	s.buf = nil
}

// finishes reports whether the run has an epilogue (Conv2D.finish) to
// apply to its tiles.
func (r *convRun) finishes() bool {
	return r.actFunc != nil || r.act != ActNone || r.res != nil || r.postFunc != nil || r.postAct != ActNone
}
