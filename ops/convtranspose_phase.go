package ops

import (
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
)

// A 2-D ConvTranspose at stride 2 whose output is twice its input along
// both axes (the decoders' 3×3 with pad 1 and output padding 1, the
// DCGAN 4×4 with pad 1, the U-Nets' 2×2) runs as its four output phases
// where the convolution kernels have a vector phase product (AVX-512):
// output cell (2j+py, 2i+px) takes only the taps (ky, kx) with
// py + pad - ky·dilation and px + pad - kx·dilation even, each reading
// input cell (j+sy, i+sx) for the halves sy, sx of those. So each phase
// is a stride-1 convolution of the input over its own taps, computed
// straight into the output (asm.PhaseProduct: the even or odd cells of
// its rows), and no tap's product is written to a scratch and summed
// into the output by a second pass, as the col2im and blocked paths do
// (their ZipSumRows was 13-15% of a DCGAN step's time, reading four
// products per output cell back from the last-level cache). The kernel
// reads the input in place, each segment's loads masked where a lane's
// tap falls outside the input (edge tiles: a class of masks per kind of
// segment), where a padded copy of the input (per block of rows) cost 5%
// of a 3×3 decoder step. The input rows are split into blocks (at least
// one per worker), the output channels into panels of 12, 8 or 4 rows,
// which a block runs phase by phase (the phase's weights panel stays in
// L1 across the input positions).
// Input rows that are not a whole number of segments (a generator's 4×4
// and 8×8 layers, a 28-wide decoder) run on the grid instead: segments
// of sixteen consecutive cells of the block's rows, so a segment may
// span rows, a lane whose tap column crosses a row's end masked like an
// edge (each kind of segment its class). The sums go to a scratch laid
// out as the rows, and each panel's cells are copied to the output once
// its four phases are done. Only the block's last segment wastes
// products (a grid of padded rows wasted pad of every W + pad cells: a
// third of an 8×8 layer's; copies of the rows, one per column shift,
// cost 4% / 10% of that step at one / two threads). On the grid the
// workers split the output channels instead of the rows (a block of
// fewer rows would waste more of its last segment). An input of one
// segment runs on the one-segment kernel, masked the same way (its
// copies of the rows, one per column shift, were 10% of a generator's
// 4×4 step).
// Where both column phases of a row phase read the same steps (a U-Net's
// 2×2 without pads: one tap each, at the same cell) a panel's rows pair
// them, a channel's even and odd columns (asm.PhaseProduct.RunPairs):
// two runs instead of four, each output row written once with whole
// vectors, where the column phases' runs wrote every other float twice.

// convTPhases is the phase plan of a convTFast (nil where it does not
// apply).
type convTPhases struct {
	f         *convTFast
	pad       int // zero cells around each input plane
	phases    [4]convTPhase
	panels    []convTPanel
	packed    []float32 // per panel, per phase: the weights, then the bias
	nonFinite []bool    // per panel: a weight packed is NaN or infinite (run)
	blocks    []convTPhaseBlock
	grid      bool           // segments run over the grid of rows, through scratch
	one       bool           // the input is one segment: panels of one segment a tile (asm.PhaseOneRows)
	pairs     bool           // panels' rows pair the column phases of channels: runs of phases 0 and 2 compute 1 and 3 too
	runs      []int          // the phases a panel runs: all four, or 0 and 2 with pairs
	tapAt     []convTTapAt   // per kernel tap (ky·kw + kx): where packing puts its weights
	ldg       int            // grid mode: a channel's stride in a block's scratch of each row phase
	packInRun bool           // weights computed at run time, one block: each item packs its panels as it runs them
	packNow   bool           // the items of this image pack (packInRun, the first image)
	packer    *asm.TapPacker // nil: weights pack in Go
	packOffs  [][][2][]int   // per panel, per block of up to 16 channels: the packer's offsets and steps
	packErrs  firstError     // of a packing's chunks (none is expected: the plan sizes every operand)
	weights   convWeights
	w, b      []float32 // the run's weights and bias, for pack
	x, y      []float32 // the current image
	pack      func() error
	packBody  func(lo, hi int)
	body      func(lo, hi int)
	shares    [][2]int // the panels [lo, hi) of each share of the output channels (one but on the grid)
}

// convTPhase is one output phase (row parity py, column parity px): its
// taps (kernel row and column, input row and column shift) and product.
type convTPhase struct {
	py, px int
	taps   [][4]int
	prod   *asm.PhaseProduct
}

// convTPhaseBlock is a block of input rows [r0, r1): its tiles of two
// sixteen-position segments.
type convTPhaseBlock struct {
	r0, r1 int
	tiles  [4]*asm.PhaseTiles // per phase (with edge masks, each phase's own)
	ys     [2][]float32       // grid mode: the sums of each row phase, per channel, as the grid (ldg apart)
}

// convTTapAt is where a kernel tap's weights go in a panel's packing:
// run phase ph's step t of each input channel (steps a channel), row
// offset e (the odd column phase's row with pairs).
type convTTapAt struct{ ph, t, steps, e int }

// convTPanel is a panel of output channels [c0, c0+n) computed as rows
// (4, 8 or 12) rows, two a channel with pairs; at[p] is where phase p's
// weights start in packed.
type convTPanel struct {
	c0, n, rows int
	at          [4]int
}

// newConvTPhases returns the phase plan of f, or nil where it does not
// apply: not 2-D, groups, a stride other than 2, an output other than
// twice the input, a phase that no tap lands on, weights packed every
// run over a small input (convTPhaseRepackCells), or no vector phase
// product.
func newConvTPhases(f *convTFast, n *graph.Node) (*convTPhases, error) {
	g := &f.convTGeom
	if g.in[0] != 1 || g.k[0] != 1 || g.out[0] != 1 || g.groups != 1 || g.s[1] != 2 || g.s[2] != 2 ||
		g.out[1] != 2*g.in[1] || g.out[2] != 2*g.in[2] {
		return nil, nil
	}
	p := &convTPhases{f: f, grid: g.in[2]%16 != 0}
	p.weights = convWeights{cached: FromWeights(n.Inputs[1]) && (!g.bias || FromWeights(n.Inputs[2])), version: f.env.WeightsVersion}
	if !p.weights.cached && g.inSz < convTPhaseRepackCellsVector {
		return nil, nil
	}
	for ph := range p.phases {
		py, px := ph/2, ph%2
		cur := &p.phases[ph]
		cur.py, cur.px = py, px
		for ky := range g.k[1] {
			vy := py + g.pb[1] - ky*g.d[1]
			if vy%2 != 0 {
				continue
			}
			for kx := range g.k[2] {
				if vx := px + g.pb[2] - kx*g.d[2]; vx%2 == 0 {
					cur.taps = append(cur.taps, [4]int{ky, kx, vy / 2, vx / 2})
					p.pad = max(p.pad, vy/2, -vy/2, vx/2, -vx/2)
				}
			}
		}
		if len(cur.taps) == 0 {
			return nil, nil
		}
	}
	// The kernel reads the input in place, each segment's loads masked
	// where a tap reaches past the input's edges (the zeros a padded copy
	// held: the copy cost 5% of a 3×3 decoder step, and 4% / 10% of a
	// DCGAN step at 8² at one / two threads, its rows' shifted copies)
	// or, on the grid, past its last cell.
	// Blocks of input rows: whole rows, the input they read (with the
	// rows around them) within convTPhaseBlockBytes, at least one per
	// worker off the grid (on it the workers split the channels), split
	// evenly. On the grid a block is a multiple of unit rows, whose cells
	// fill whole tiles, but the last (a 256-channel 8×8 input in blocks of
	// three rows computed 32 cells for each 24).
	rows := min(max(convTPhaseBlockBytes/(4*g.c*g.in[2])-2*p.pad, 1), g.in[1])
	if p.grid {
		unit := 1
		for unit*g.in[2]%32 != 0 {
			unit++
		}
		rows = min(max(rows/unit, 1)*unit, g.in[1])
	}
	if p.one = p.grid && g.inSz <= 16; p.one { // one block, of one segment
		rows = g.in[1]
	}
	// Phases run in index order, which for the decoders' 3×3 is fewest
	// taps first. Running the four-tap phase first, so that a block's
	// first pass over input and output lines not yet in cache had the
	// most arithmetic to hide them behind, made a 64→32 channel step at
	// 32² and 64² 15-20% slower from a flushed cache (Zen 5).
	p.runs = []int{0, 1, 2, 3}
	if p.pairs = !p.one && p.phases[0].sameSteps(&p.phases[1]) && p.phases[2].sameSteps(&p.phases[3]); p.pairs {
		p.runs = []int{0, 2}
	}
	if !p.weights.cached && g.inSz < convTPhaseRepackCells && (p.pairs || !p.tapPackable()) {
		return nil, nil // (pairs: the zip path, which packs nothing, at small inputs)
	}
	p.tapAt = make([]convTTapAt, g.kSz)
	for _, ph := range p.runs {
		taps := p.phases[ph].taps
		for t, tap := range taps {
			p.tapAt[tap[0]*g.k[2]+tap[1]] = convTTapAt{ph, t, len(taps), 0}
			if p.pairs { // the same step's tap of the odd columns
				odd := p.phases[ph+1].taps[t]
				p.tapAt[odd[0]*g.k[2]+odd[1]] = convTTapAt{ph, t, len(taps), 1}
			}
		}
	}
	nb := (g.in[1] + rows - 1) / rows
	t := max(f.env.Threads, 1)
	// The workers split the output channels on the grid, and where
	// weights computed at run time are packed every run over an input of
	// at most a block per worker: then each packs the panels it runs
	// (packShares, or as it runs them: packInRun), where with blocks of
	// rows every worker reads every panel, and the next run's packing
	// writes lines the other core holds. DCGAN step at 16² (128 → 64
	// channels) at two threads: 0.86-0.89 of the GEMM in row blocks,
	// 1.12-1.18 split so; a 3×3 step at 32²: 1.05-1.12 against 1.16-1.32;
	// at 64² (five blocks) the rows stay better (1.13-1.14 against
	// 0.98-1.11; Zen 5).
	splitChannels := p.grid || !p.weights.cached && nb <= t
	if !splitChannels && nb%t != 0 {
		nb = min((nb+t-1)/t*t, g.in[1])
	}
	for ph := range p.phases {
		cur := &p.phases[ph]
		off := make([]int, 0, g.c*len(cur.taps))
		for ci := range g.c {
			for _, t := range cur.taps {
				off = append(off, ci*g.inSz+t[2]*g.in[2]+t[3])
			}
		}
		prod, err := asm.NewPhaseProduct(off)
		if err != nil || prod == nil {
			return nil, err
		}
		cur.prod = prod
	}
	var segs [][]convTSeg
	for b := range nb {
		blk := convTPhaseBlock{r0: g.in[1] * b / nb, r1: g.in[1] * (b + 1) / nb}
		if p.grid {
			blk.r0, blk.r1 = b*rows, min((b+1)*rows, g.in[1])
		}
		segs = append(segs, p.blockSegs(&blk))
		p.blocks = append(p.blocks, blk)
	}
	var edges *convTEdges // masks wherever a lane may read outside the input
	if p.pad > 0 || p.grid {
		edges = &convTEdges{class: map[string]int{}}
	}
	if err := p.setTiles(segs, edges); err != nil {
		return nil, err
	}
	// The grid's scratch.
	for i := range p.blocks {
		if p.grid {
			p.blocks[i].ys = [2][]float32{make([]float32, g.m*p.ldg), make([]float32, g.m*p.ldg)}
		}
	}
	// On the grid the workers split the output channels (a block of fewer
	// rows wastes more of its last segment): a share of panels each.
	shares := 1
	if splitChannels {
		shares = min(t, (g.m+3)/4)
	}
	size := 0
	for w := range shares {
		p.shares = append(p.shares, [2]int{len(p.panels), 0})
		for _, pn := range p.panelsOf(g.m*w/shares, g.m*(w+1)/shares) {
			for _, ph := range p.runs {
				pn.at[ph] = size
				size += (p.phases[ph].prod.Steps() + 1) * pn.rows
			}
			p.panels = append(p.panels, pn)
		}
		p.shares[w][1] = len(p.panels)
	}
	p.packed = make([]float32, size)
	p.nonFinite = make([]bool, len(p.panels))
	p.planTapPacking()
	// Weights computed at run time, where every panel runs in one item (one
	// block): each item packs a panel just before it runs it, on the same
	// core, while it is in that core's L2. Packed in a pass of their own,
	// a DCGAN step's weights at 8² (256 → 128 channels) took 170-190 µs on
	// two workers against 110 on one, and its products ran at 1.3× the
	// one-thread rate against 1.75 with params (Zen 5).
	p.packInRun = !p.weights.cached && len(p.blocks) == 1
	p.pack, p.packBody, p.body = p.packWeights, p.packPanels, p.runItems
	return p, nil
}

// run computes every image of x through weights w (and bias) into y. It
// reports false, computing nothing, where a weight is not finite: the
// phases multiply every weight by the pad cells around the input, and
// 0·Inf would put a NaN where the definition (input cells only) has
// none; the caller runs the reference then.
func (p *convTPhases) run(x, w, bias, y []float32) (bool, error) {
	g := &p.f.convTGeom
	p.w, p.b = w, bias
	defer func() { p.w, p.b, p.x, p.y, p.packNow = nil, nil, nil, nil, false }()
	if p.packInRun {
		p.packErrs.reset()
	} else if err := p.weights.repack(w, bias, p.pack); err != nil || slices.Contains(p.nonFinite, true) {
		return false, err
	}
	for b := range g.n {
		p.packNow = p.packInRun && b == 0
		p.x = x[b*g.c*g.inSz : (b+1)*g.c*g.inSz]
		p.y = y[b*g.m*g.outSz : (b+1)*g.m*g.outSz]
		p.f.env.For(len(p.blocks)*len(p.shares), 1, p.body)
		if p.packNow {
			if err := p.packErrs.reset(); err != nil || slices.Contains(p.nonFinite, true) {
				return false, err
			}
		}
	}
	return true, nil
}

// packWeights packs the run's weights, the panels split over the
// workers.
func (p *convTPhases) packWeights() error {
	p.packErrs.reset()
	if len(p.shares) > 1 {
		p.f.env.For(len(p.shares), 1, p.packShares)
	} else {
		p.f.env.For(len(p.panels), 1, p.packBody)
	}
	return p.packErrs.reset()
}

// packShares packs the panels of shares [lo, hi): where the workers
// split the output channels, each packs the panels it runs, as the
// run's items split the same way (runItems), so that no packing writes
// lines the other core read last run. (Packing a DCGAN step's weights
// at 8² took 2.4× as long on two workers as on one when the cores'
// panels did not match: every write fetched its line from the other
// core; Zen 5.)
func (p *convTPhases) packShares(lo, hi int) {
	p.packBody(p.shares[lo][0], p.shares[hi-1][1])
}

// packPanels lays out panels [lo, hi)'s weights phase by phase, a step
// (input channel, tap) at a time, a row per output channel (zero past
// the panel's channels), then the panel's bias. It reads the weights
// by input channel, gathering one tap of the panel's channels a row
// (every tap lands on one phase: tapAt says where).
func (p *convTPhases) packPanels(lo, hi int) {
	g := &p.f.convTGeom
	kSz := g.kSz
	per := 1 // panel rows a channel
	if p.pairs {
		per = 2
	}
	var dst [4][]float32
	for i := lo; i < hi; i++ {
		pn := p.panels[i]
		p.nonFinite[i] = false
		for _, ph := range p.runs {
			steps := p.phases[ph].prod.Steps()
			dst[ph] = p.packed[pn.at[ph]:][:(steps+1)*pn.rows]
			bias := dst[ph][steps*pn.rows:]
			if per*pn.n < pn.rows { // zero rows past the channels
				clear(dst[ph])
			} else if p.b == nil {
				clear(bias)
			}
			if p.b != nil {
				for r, v := range p.b[pn.c0 : pn.c0+pn.n] {
					bias[r*per] = v
					bias[r*per+per-1] = v // with pairs, each channel's twice
				}
			}
		}
		if p.packer != nil {
			p.packTaps(i)
			continue
		}
		bad := false
		for ci := range g.c {
			w := p.w[(ci*g.m+pn.c0)*kSz:][:pn.n*kSz] // the panel's channels, their taps in a row
			for k, at := range p.tapAt {
				row := dst[at.ph][(ci*at.steps+at.t)*pn.rows+at.e:][:(pn.n-1)*per+1]
				for r := range pn.n {
					v := w[r*kSz+k]
					row[r*per] = v
					bad = bad || v-v != 0 // NaN or ±Inf
				}
			}
		}
		p.nonFinite[i] = bad
	}
}

// packTaps packs panel i's weights on the tap packer, sixteen channels
// at a time (packOffs), and sets its nonFinite.
func (p *convTPhases) packTaps(i int) {
	g := &p.f.convTGeom
	pn, bad := p.panels[i], false
	for j, s := range p.packOffs[i] {
		n := min(asm.TapPackerMax, pn.n-asm.TapPackerMax*j)
		w := p.w[(pn.c0+asm.TapPackerMax*j)*g.kSz:]
		var b bool
		var err error
		if p.pairs { // each channel's two column phases in rows 2c, 2c+1
			b, err = p.packer.PackSpread(p.packed, w, g.c, g.m*g.kSz, n, s[0], s[1])
		} else {
			b, err = p.packer.Pack(p.packed, w, g.c, g.m*g.kSz, n, s[0], s[1])
		}
		p.packErrs.add(err)
		bad = bad || b
	}
	p.nonFinite[i] = bad
}

// tapPackable reports whether the tap packer can pack p's weights: the
// CPU has one and the kernel at most sixteen taps. (With pairs a panel
// holds at most six channels, each tap's every other row: PackSpread.)
func (p *convTPhases) tapPackable() bool {
	return p.f.kSz <= asm.TapPackerMax && asm.NewTapPacker() != nil
}

// planTapPacking sets packOffs where the tap packer can pack: its offsets
// and steps per tap, for each panel's blocks of up to sixteen channels.
func (p *convTPhases) planTapPacking() {
	g := &p.f.convTGeom
	if !p.tapPackable() {
		return
	}
	p.packer = asm.NewTapPacker() // not nil: tapPackable
	p.packOffs = make([][][2][]int, len(p.panels))
	for i, pn := range p.panels {
		for s := 0; s < pn.n; s += asm.TapPackerMax {
			off, step := make([]int, g.kSz), make([]int, g.kSz)
			for k, at := range p.tapAt {
				off[k] = pn.at[at.ph] + at.t*pn.rows + at.e + s
				step[k] = at.steps * pn.rows
			}
			p.packOffs[i] = append(p.packOffs[i], [2][]int{off, step})
		}
	}
}

// runItems runs work items [lo, hi), item i being block i mod blocks's
// panels of share i / blocks (share-major: a chunk of items runs the
// panels its worker packed, packShares). Each panel runs phase by phase (with
// pairs, row phase by row phase), all the block's tiles in one call (on
// the grid into the block's scratch, copied out after).
func (p *convTPhases) runItems(lo, hi int) {
	g := &p.f.convTGeom
	for i := lo; i < hi; i++ {
		blk, share := &p.blocks[i%len(p.blocks)], p.shares[i/len(p.blocks)]
		for j := share[0]; j < share[1]; j++ {
			pn := p.panels[j]
			if p.packNow {
				p.packBody(j, j+1)
			}
			for _, ph := range p.runs {
				cur := &p.phases[ph]
				steps := cur.prod.Steps()
				a := p.packed[pn.at[ph]:][:steps*pn.rows]
				bias := p.packed[pn.at[ph]+steps*pn.rows:][:pn.rows]
				x, y, base, ldo := p.x, p.y, pn.c0*g.outSz+cur.py*g.out[2]+cur.px, g.outSz
				if p.grid {
					y, base, ldo = blk.ys[cur.py], pn.c0*p.ldg+cur.px, p.ldg
				}
				if p.pairs {
					cur.prod.RunPairs(pn.rows, 2*pn.n, a, bias, x, y, base, ldo, blk.tiles[ph])
					continue
				}
				cur.prod.Run(pn.rows, pn.n, a, bias, x, y, base, ldo, blk.tiles[ph])
			}
			if p.grid {
				p.copyOut(blk, pn)
			}
		}
	}
}

// copyOut copies panel pn's real cells of block blk from the grid
// scratch to the output rows they belong to.
func (p *convTPhases) copyOut(blk *convTPhaseBlock, pn convTPanel) {
	g := &p.f.convTGeom
	ow := g.out[2]
	for c := pn.c0; c < pn.c0+pn.n; c++ {
		for py := range 2 {
			src := blk.ys[py][c*p.ldg:][:p.ldg]
			for r := blk.r0; r < blk.r1; r++ {
				copy(p.y[c*g.outSz+(2*r+py)*ow:][:ow], src[2*(r-blk.r0)*g.in[2]:][:ow])
			}
		}
	}
}

// convTSeg is a segment of a block: its first input cell and its first
// output (in the output, or on the grid the block's scratch).
type convTSeg struct{ q, o int }

// blockSegs lists block blk's segments: off the grid sixteen cells of a
// row each, their outputs from the first even cell of their output rows;
// on the grid sixteen consecutive cells from the block's first to its
// last (the last reaching past it), their sums at twice their cells in
// the scratch, whose channel stride ldg it widens to the block's.
func (p *convTPhases) blockSegs(blk *convTPhaseBlock) []convTSeg {
	g := &p.f.convTGeom
	w := g.in[2]
	var segs []convTSeg
	if p.grid {
		cells := (blk.r1 - blk.r0) * w
		p.ldg = max(p.ldg, 32*(cells/16+1)+2)
		first := blk.r0 * w // the block's first cell
		for q := 0; q < cells; q += 16 {
			segs = append(segs, convTSeg{first + q, 2 * q})
		}
		return segs
	}
	for row := blk.r0; row < blk.r1; row++ {
		for col := 0; col < w; col += 16 {
			segs = append(segs, convTSeg{row*w + col, row*2*g.out[2] + 2*col})
		}
	}
	return segs
}

// convTEdges are the edge masks of a plan that reads the input in place
// where a tap reaches past its edges (or a grid segment past its end): a
// class per kind of segment, shared by the phases, and each phase's
// masks by class.
type convTEdges struct {
	class map[string]int
	taps  [4][][]uint16 // per phase, per class: per tap, the lanes inside the input
	masks [4]*asm.PhaseMasks
}

// classOf is the class of the segment from cell q of the input: lane j
// reads cell q+j, kept where that lies in the input and the tap's cell
// from it too (its row and column shifted inside the input).
func (e *convTEdges) classOf(p *convTPhases, q int) int {
	g := &p.f.convTGeom
	h, w := g.in[1], g.in[2]
	var lanes [4][]uint16
	key := make([]byte, 0, 64)
	for ph := range p.phases {
		for _, t := range p.phases[ph].taps {
			var bits uint16
			for j := range 16 {
				c := q + j
				if y, x := c/w+t[2], c%w+t[3]; c < h*w && y >= 0 && y < h && x >= 0 && x < w {
					bits |= 1 << j
				}
			}
			lanes[ph] = append(lanes[ph], bits)
			key = append(key, byte(bits), byte(bits>>8))
		}
	}
	c, ok := e.class[string(key)]
	if !ok {
		c = len(e.class)
		e.class[string(key)] = c
		for ph := range p.phases {
			e.taps[ph] = append(e.taps[ph], lanes[ph])
		}
	}
	return c
}

// finish makes each phase's masks: a class's tap masks for every input
// channel, in the steps' order.
func (e *convTEdges) finish(p *convTPhases) error {
	for ph := range p.phases {
		var masks [][]uint16
		for _, taps := range e.taps[ph] {
			m := make([]uint16, 0, p.f.convTGeom.c*len(taps))
			for range p.f.convTGeom.c {
				m = append(m, taps...)
			}
			masks = append(masks, m)
		}
		var err error
		if e.masks[ph], err = p.phases[ph].prod.NewMasks(masks); err != nil {
			return err
		}
	}
	return nil
}

// setTiles sets each block's tiles from its segments, by pairs (an odd
// last one twice): with edge masks (e) each phase's edge tiles, else
// plain tiles shared by the phases.
func (p *convTPhases) setTiles(segs [][]convTSeg, e *convTEdges) error {
	xLen := p.f.convTGeom.c * p.f.convTGeom.inSz
	cls := make([][]int, len(segs)) // each segment's class, all before the masks are made
	if e != nil {
		for b, ss := range segs {
			for _, sg := range ss {
				cls[b] = append(cls[b], e.classOf(p, sg.q))
			}
		}
		if err := e.finish(p); err != nil {
			return err
		}
	}
	for b := range p.blocks {
		blk, ss := &p.blocks[b], segs[b]
		var at []int
		for s := 0; s < len(ss); s += 2 {
			s1 := min(s+1, len(ss)-1)
			at = append(at, ss[s].q, ss[s1].q, ss[s].o, ss[s1].o)
			if e != nil {
				at = append(at, cls[b][s], cls[b][s1])
			}
		}
		if e == nil {
			ts, err := asm.NewPhaseTiles(at)
			if err != nil {
				return err
			}
			blk.tiles = [4]*asm.PhaseTiles{ts, ts, ts, ts}
			continue
		}
		for ph := range p.phases {
			var err error
			if blk.tiles[ph], err = p.phases[ph].prod.EdgeTiles(at, e.masks[ph], xLen); err != nil {
				return err
			}
		}
	}
	return nil
}

// convTPhaseRepackCells is the fewest input cells a phase plan needs
// where its weights are packed every run (computed at run time, not a
// model's params): the packing is a gather in Go, worth it where each
// weight meets many cells. A DCGAN step (128→64 channels, 4×4, 16²
// input) ran at 0.82 / 0.50 of the GEMM's rate at 1 / 2 threads so, the
// blocked path 0.82 / 0.80; a 64→32 channel 3×3 step at 32² 0.91 / 1.01
// against 0.82 / 0.85 (AVX-512, Zen 5).
const convTPhaseRepackCells = 1024

// convTPhaseRepackCellsVector is convTPhaseRepackCells where the tap
// packer packs: run-time weights of a DCGAN step at 8² (64 cells, 256 →
// 128 channels) on the phases ran at 1.10-1.20 / 1.03-1.22 of the GEMM
// at one / two threads over four rounds, against 0.86-0.87 / 0.84-0.89
// on the blocked path (Zen 5).
const convTPhaseRepackCellsVector = 64

// convTPhaseBlockBytes is about the most input a block of rows
// reads (the rows it computes and the pads around them): a share of a
// 1 MiB L2 that leaves room for the weights panels and the output.
var convTPhaseBlockBytes = 256 << 10

// sameSteps reports whether phases c and d read the same steps: their
// taps' input shifts, in order.
func (c *convTPhase) sameSteps(d *convTPhase) bool {
	return slices.EqualFunc(c.taps, d.taps, func(a, b [4]int) bool { return a[2] == b[2] && a[3] == b[3] })
}

// panelsOf splits output channels [c0, c1) into panels (phasePanels),
// with pairs panels of rows two a channel.
func (p *convTPhases) panelsOf(c0, c1 int) []convTPanel {
	if !p.pairs {
		return phasePanels(c0, c1, p.one)
	}
	ps := phasePanels(2*c0, 2*c1, false) // panels of an even number of rows: each a whole number of channels
	for i := range ps {
		ps[i].c0, ps[i].n = ps[i].c0/2, ps[i].n/2
	}
	return ps
}

// phasePanels splits output channels [c0, c1) into panels of 12, 8 or 4
// rows: twelves, but sixteen channels as two eights (not a twelve and a
// four, whose eight accumulators wait on the FMA latency) and a last
// panel of under twelve rounded up to a multiple of four. For an input
// of one segment (one) the panels are of 24 or 16 rows, which compute
// one segment a tile where the others compute it twice: twenty-fours,
// but a last twenty-four and up to eight channels after it as two
// panels of sixteen rows (128 channels: four 24s and two 16s, where a
// last eight computed its segment twice on the two-segment kernel), and
// only an input of up to eight channels on the two-segment kernel.
func phasePanels(c0, c1 int, one bool) []convTPanel {
	var ps []convTPanel
	for one && c1-c0 > 8 {
		n := min(24, c1-c0)
		if left := c1 - c0; left > 24 && left <= 32 {
			n = 16 // the rest, 9 to 16, is the last panel
		}
		rows := 24
		if n <= 16 {
			rows = 16
		}
		ps = append(ps, convTPanel{c0: c0, n: n, rows: rows})
		c0 += n
	}
	for c0 < c1 {
		n := min(12, c1-c0)
		if left := c1 - c0; left > 12 && left < 24 && left%12 <= 4 {
			n = 8
		}
		ps = append(ps, convTPanel{c0: c0, n: n, rows: (n + 3) / 4 * 4})
		c0 += n
	}
	return ps
}
