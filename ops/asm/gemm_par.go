package asm

// Sharing one product among workers. B is packed once into a buffer all
// workers read (in parallel, unless it is pre-packed or one-row products
// read it in place), then C is cut into more blocks than workers, dealt
// out in contiguous shares (workClaims: each run gives a worker the same
// blocks, whose weights its own caches then hold), and a worker whose
// share is done takes blocks from the back of the others', so one whose
// core is busy elsewhere simply does fewer. (A shared counter scattered
// the blocks over the cores anew each run: an MLP at batch 16 on two
// threads ran 1.18 ms against 1.14, medians of six interleaved rounds on
// the Zen 5 VM.)

// gemmShared is the state of the product being shared.
type gemmShared struct {
	e             int              // the product
	tm, tn        int              // grid of C blocks: tm rows × tn columns
	pm, pn        int              // row and column panels of C
	claims        workClaims       // the blocks, dealt out per worker (claims.go)
	full          PackedB          // B packed for the run when not pre-packed
	src           []float32        // B being packed
	packs, groups int              // packing jobs, column groups per depth block
	itemBody      func(lo, hi int) // g.runItems
	packBody      func(lo, hi int) // g.packJobs
}

// sharedPackMax caps the floats of B packed whole for one run (16 MiB);
// past it workers split C statically and pack their own blocks. (A
// variable so tests can reach that path.)
var sharedPackMax = 1 << 22

// packGroupPanels is how many NR-column panels one packing job does.
const packGroupPanels = 8

// runShared computes product e with up to threads workers.
func (g *Gemm) runShared(e, threads int) {
	cfg, v, sh := &g.cfg, g.v, &g.shared
	gemv := g.gemvRow()
	npad := gemmRoundUp(cfg.N, v.nr)
	if !gemv && g.run.PackedB == nil {
		if cfg.K*npad > sharedPackMax {
			g.runStatic(e, threads)
			return
		}
		g.packShared(e, threads)
		g.run.PackedB = &sh.full
		defer func() { g.run.PackedB = nil }()
	}
	sh.e = e
	sh.pm, sh.pn = (cfg.M+v.mr-1)/v.mr, (cfg.N+v.nr-1)/v.nr
	sh.tm, sh.tn = g.grid(threads, gemv)
	sh.claims.resetFor(sh.tm*sh.tn, threads)
	g.par.For(threads, 1, sh.itemBody)
}

// grid picks how many row and column blocks to cut C into for threads
// workers. Estimated cycles, minimised over grids of threads to
// 8·threads blocks:
//
//	A packing, again for every column block:   M·K·tn / 2
//	B streamed from L3, again per row block:   K·N·tm / 4
//	imbalance, a quarter block per worker:     work / (tm·tn) / 4
//
// with work = M·N·K/16 cycles (16 FMAs a cycle). One-row products cut
// only their columns.
func (g *Gemm) grid(threads int, gemv bool) (tm, tn int) {
	cfg, sh := &g.cfg, &g.shared
	maxBlocks := 8 * threads
	if gemv {
		return 1, max(1, min(sh.pn, 4*threads))
	}
	m, n, k := float64(cfg.M), float64(cfg.N), float64(cfg.K)
	work := m * n * k / 16
	best := -1.0
	tm, tn = 1, 1
	for a := 1; a <= min(sh.pm, maxBlocks); a++ {
		for b := 1; b <= min(sh.pn, maxBlocks/a); b++ {
			if a*b < threads {
				continue
			}
			c := m*k*float64(b)/2 + k*n*float64(a)/4 + work/float64(a*b)/4
			if best < 0 || c < best {
				best, tm, tn = c, a, b
			}
		}
	}
	return tm, tn
}

// runItems is the For body of a shared product: worker slots [lo, hi)
// take blocks until none are left.
func (g *Gemm) runItems(lo, hi int) {
	sh, v := &g.shared, g.v
	for t := lo; t < hi; t++ {
		s := &g.scratch[t]
		for {
			i, ok := sh.claims.next(t)
			if !ok {
				break
			}
			im, in := i/sh.tn, i%sh.tn
			m0, m1 := im*sh.pm/sh.tm*v.mr, min(g.cfg.M, (im+1)*sh.pm/sh.tm*v.mr)
			n0, n1 := in*sh.pn/sh.tn*v.nr, min(g.cfg.N, (in+1)*sh.pn/sh.tn*v.nr)
			g.product(s, sh.e, m0, m1, n0, n1)
		}
	}
}

// packShared packs product e's B whole into the shared buffer, jobs of
// packGroupPanels panels of one depth block split over the workers.
func (g *Gemm) packShared(e, threads int) {
	cfg, v, sh := &g.cfg, g.v, &g.shared
	npad := gemmRoundUp(cfg.N, v.nr)
	if size := cfg.K * npad; cap(sh.full.data) < size {
		sh.full.data = make([]float32, size)
	}
	sh.full.v, sh.full.k, sh.full.n, sh.full.npad = v, cfg.K, cfg.N, npad
	sh.full.data = sh.full.data[:cfg.K*npad]
	_, bo, _ := g.offsets(e)
	sh.src = g.run.B[bo:]
	sh.groups = (npad/v.nr + packGroupPanels - 1) / packGroupPanels
	sh.packs = (cfg.K + v.kc - 1) / v.kc * sh.groups
	g.par.For(sh.packs, 1, sh.packBody)
	sh.src = nil
}

// packJobs is the For body of packShared.
func (g *Gemm) packJobs(lo, hi int) {
	cfg, v, sh := &g.cfg, g.v, &g.shared
	for j := lo; j < hi; j++ {
		pc, grp := j/sh.groups*v.kc, j%sh.groups
		kc := min(v.kc, cfg.K-pc)
		j0 := grp * packGroupPanels * v.nr
		nc := min(packGroupPanels*v.nr, cfg.N-j0)
		packB(v, sh.full.block(pc, kc, j0, nc), sh.src, cfg, pc, kc, j0, nc)
	}
}

// runStatic splits product e's C into one block per worker, each packing
// its own panels (for a B too large to pack whole).
func (g *Gemm) runStatic(e, threads int) {
	if n := g.split(e, threads); n > 1 {
		g.par.For(n, 1, g.body)
	} else {
		g.runTasks(0, 1)
	}
}

// split divides product e's C into at most threads blocks, fills g.tasks
// and returns how many: the rows×columns grid whose largest block costs
// least, counting micro-tiles (about 6 cycles per step of k) and packing
// (about 1 cycle per element; A is packed once per NC columns, B once per
// block of rows).
func (g *Gemm) split(e, threads int) int {
	cfg, v := &g.cfg, g.v
	pm, pn := (cfg.M+v.mr-1)/v.mr, (cfg.N+v.nr-1)/v.nr
	tm, tn, best := 1, 1, -1
	for m := 1; m <= threads; m++ {
		n := threads / m
		if threads%m != 0 || m > pm || n > pn {
			continue
		}
		rows, cols := (pm+m-1)/m, (pn+n-1)/n
		cost := rows*cols*cfg.K*6 + rows*v.mr*cfg.K*((cols*v.nr+v.nc-1)/v.nc) + cols*v.nr*cfg.K
		if best < 0 || cost < best {
			best, tm, tn = cost, m, n
		}
	}
	for im := range tm {
		for in := range tn {
			g.tasks[im*tn+in] = gemmTask{e, e + 1,
				im * pm / tm * v.mr, min(cfg.M, (im+1)*pm/tm*v.mr),
				in * pn / tn * v.nr, min(cfg.N, (in+1)*pn/tn*v.nr)}
		}
	}
	return tm * tn
}
