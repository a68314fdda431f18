package asm

// blocks is the BLIS loop nest over one block of C: columns in NC blocks,
// depth in KC blocks (B packed once per pair), rows in MC blocks (A
// packed), then NR-column and MR-row micro-tiles, B panel outer so it
// stays in L1 while the A panels stream from L2.
func (g *Gemm) blocks(s *gemmScratch, e, ao, bo, co, m0, m1, n0, n1 int) {
	cfg, v := &g.cfg, g.v
	mr, nr := v.mr, v.nr
	c, ldc := g.run.C, cfg.LDC
	for jc := n0; jc < n1; jc += v.nc {
		nc := min(v.nc, n1-jc)
		for pc := 0; pc < cfg.K; pc += v.kc {
			kc := min(v.kc, cfg.K-pc)
			bp := g.bBlock(s, bo, pc, kc, jc, nc)
			flags := uint(0)
			if pc > 0 || cfg.Accumulate {
				flags = gemmAccumulate
			}
			last := pc+kc == cfg.K
			for ic := m0; ic < m1; ic += v.mc {
				mc := min(v.mc, m1-ic)
				ap := s.a[:gemmRoundUp(mc, mr)*kc]
				inPlace := 0 // rows [0, inPlace) of the block are read in place
				if cfg.InPlaceA && v.microRowA != nil {
					inPlace = mc / mr * mr
				}
				few := g.fewCols(mc, nc) // columns [0, few) read A in place (gemm_rows.go)
				if inPlace < mc && few < nc {
					packA(v, ap[inPlace*kc:], g.run.A[ao:], cfg, ic+inPlace, mc-inPlace, pc, kc)
				}
				epFrom := 0 // first column of C not yet through the epilogue
				for jr := 0; jr < nc; {
					ai, ci := ao+ic*cfg.LDA+pc, co+ic*ldc+jc+jr
					var width int // columns done
					if jr < few {
						width = fewRowsPanels * nr
						g.fewRowsGroup(kc, mc, ao, ic, pc, bp[jr*kc:], ci, flags)
					} else if v.panel2 != nil && inPlace == 0 && nc-jr >= 2*nr && mc >= pairMinRows*mr {
						// Two full column panels at once: the full tiles
						// through the two-panel kernel, 4 or 8 edge rows
						// through its edge kernel, others one panel at a
						// time.
						b0, b1 := bp[jr*kc:][:nr*kc], bp[(jr+nr)*kc:][:nr*kc]
						rows := mc / mr * mr
						_ = ap[rows*kc-1]
						_ = c[ci+(rows-1)*ldc+2*nr-1] // every tile is inside C
						// The first tile fetches the next pair of panels.
						v.panel2(rows/mr, kc, &ap[0], &b0[0], &b1[0], &c[ci], ldc, flags|gemmPrefetchNext)
						if e := mc - rows; (e == 4 || e == 8) && v.edge2 != nil {
							_ = ap[(rows+mr)*kc-1] // the edge rows' A panel
							_ = c[ci+(mc-1)*ldc+2*nr-1]
							v.edge2(e, kc, &ap[rows*kc], &b0[0], &b1[0], &c[ci+rows*ldc], ldc, flags)
							rows = mc
						}
						g.columnTiles(s, kc, ap, b0, ai, ci, rows, mc, inPlace, nr, flags)
						g.columnTiles(s, kc, ap, b1, ai, ci+nr, rows, mc, inPlace, nr, flags)
						width = 2 * nr
					} else {
						width = min(nr, nc-jr)
						bpan := bp[jr*kc : jr*kc+nr*kc]
						ir := 0 // rows done
						if width == nr {
							// The first pass over this B panel brings it
							// from memory: fetch a later one too.
							ir = g.fullTiles(kc, ap, bpan, ai, ci, mc, inPlace, flags|gemmPrefetchNext)
						}
						g.columnTiles(s, kc, ap, bpan, ai, ci, ir, mc, inPlace, width, flags)
					}
					jr += width
					if last && (jr-epFrom >= epilogueCols || jr == nc) {
						// Finished tiles, mc rows by up to epilogueCols
						// columns, still in L2.
						g.epilogue(e, co, ic, mc, jc+epFrom, jr-epFrom)
						epFrom = jr
					}
				}
			}
		}
	}
}

// pairMinRows is the fewest MR-row tiles a block needs for its column
// panels to go two at a time. It was 3 while the two-panel kernel had no
// prefetch: a B that few row panels share (a 16-row product over a large
// weight: an MLP at batch 16) streams from memory and needs the next
// panels fetched ahead. Now that it fetches the next pair, pairs win
// from one tile on (16×2048×2048 prepacked, 1 thread on Zen 5, AVX-512: 0.90 -> 0.74 ms).
// (A variable for benchmarks.)
var pairMinRows = 1

// columnTiles computes rows [ir, mc) of one column panel (nrv <= NR
// columns) of a block, tile by tile: A at offset ai (in place for rows
// below inPlace) or packed in ap, B panel bpan, C at offset ci.
func (g *Gemm) columnTiles(s *gemmScratch, kc int, ap, bpan []float32, ai, ci, ir, mc, inPlace, nrv int, flags uint) {
	v, c, ldc, lda := g.v, g.run.C, g.cfg.LDC, g.cfg.LDA
	mr, nr := v.mr, v.nr
	for ; ir < mc; ir += mr {
		mrv := min(mr, mc-ir)
		apan := ap[ir*kc : ir*kc+mr*kc]
		ct := ci + ir*ldc
		f := flags
		if ir == 0 {
			f |= gemmPrefetchNext
		}
		switch {
		case ir < inPlace:
			g.rowATile(s, kc, ai+ir*lda, bpan, ct, nrv, f)
		case mrv == mr && nrv == nr:
			_ = c[ct+(mr-1)*ldc+nr-1] // the whole tile is inside C
			v.micro(kc, &apan[0], &bpan[0], &c[ct], ldc, f)
		default:
			g.edgeTile(s, kc, apan, bpan, ct, mrv, nrv, flags)
		}
	}
}

// epilogueCols is how many columns of finished tiles the epilogue takes
// at a time: a block of MC rows by 128 columns (at most 144 KiB) is
// still in L2, and row segments of 128 keep the per-call cost of an
// ActFunc small next to its work.
const epilogueCols = 128

// fullTiles runs the variant's panel kernels down the leading full tiles
// of a column of full width, rows [0, mc) of the block at A offset ai
// (read in place, if inPlace > 0, else packed in ap) and C offset ci,
// and returns how many rows they covered: 0 where the variant has no
// panel kernel, so the caller's tile loop does it all.
func (g *Gemm) fullTiles(kc int, ap, bpan []float32, ai, ci, mc, inPlace int, flags uint) int {
	v, c, ldc := g.v, g.run.C, g.cfg.LDC
	_ = bpan[v.nr*kc-1]
	if inPlace > 0 {
		if v.panelRowA == nil {
			return 0
		}
		a, lda := g.run.A, g.cfg.LDA
		_ = a[ai+(inPlace-1)*lda+kc-1] // every tile's rows are inside A
		_ = c[ci+(inPlace-1)*ldc+v.nr-1]
		v.panelRowA(inPlace/v.mr, kc, &a[ai], lda, &bpan[0], &c[ci], ldc, flags)
		return inPlace
	}
	tiles := mc / v.mr
	if v.panel == nil || tiles == 0 {
		return 0
	}
	rows := tiles * v.mr
	_ = ap[rows*kc-1]
	_ = c[ci+(rows-1)*ldc+v.nr-1] // every tile is inside C
	v.panel(tiles, kc, &ap[0], &bpan[0], &c[ci], ldc, flags)
	return rows
}

// rowATile computes a full-height tile from the MR rows of A starting
// at A[ai] in place: straight into C, or through scratch for a partial
// tile of nrv < NR columns.
func (g *Gemm) rowATile(s *gemmScratch, kc, ai int, bpan []float32, ci, nrv int, flags uint) {
	v, a, c, lda, ldc := g.v, g.run.A, g.run.C, g.cfg.LDA, g.cfg.LDC
	_ = a[ai+(v.mr-1)*lda+kc-1] // the MR row segments are inside A
	if nrv == v.nr {
		_ = c[ci+(v.mr-1)*ldc+v.nr-1] // the whole tile is inside C
		v.microRowA(kc, &a[ai], lda, &bpan[0], &c[ci], ldc, flags)
		return
	}
	t := s.tile[:v.mr*v.nr]
	v.microRowA(kc, &a[ai], lda, &bpan[0], &t[0], v.nr, 0)
	for r := range v.mr {
		gemmMerge(c[ci+r*ldc:ci+r*ldc+nrv], t[r*v.nr:r*v.nr+nrv], flags&gemmAccumulate != 0)
	}
}

// edgeTile computes a partial tile with the smallest kernel that covers
// its rows: straight into C when that kernel's rows are the tile's and
// its columns full, else into scratch, writing back only the valid
// mrv×nrv part, so nothing outside C is touched.
func (g *Gemm) edgeTile(s *gemmScratch, kc int, apan, bpan []float32, ci, mrv, nrv int, flags uint) {
	v, c, ldc := g.v, g.run.C, g.cfg.LDC
	micro, rows := v.partial(mrv)
	if rows == mrv && nrv == v.nr {
		_ = c[ci+(rows-1)*ldc+v.nr-1] // the rows are inside C
		micro(kc, &apan[0], &bpan[0], &c[ci], ldc, flags)
		return
	}
	t := s.tile[:rows*v.nr]
	micro(kc, &apan[0], &bpan[0], &t[0], v.nr, 0)
	for r := range mrv {
		gemmMerge(c[ci+r*ldc:ci+r*ldc+nrv], t[r*v.nr:r*v.nr+nrv], flags&gemmAccumulate != 0)
	}
}
