package ptx

// K groups: a SIMT GEMM block's time is its number of K steps times the
// latency of one (global loads, barrier, FMAs), whatever the grid's size,
// so a small product (a transformer layer at batch 1: 128×384 outputs
// over K = 1536, twelve 64×64 blocks) waits on ~100 serial steps while
// most of the GPU idles. Splitting K among KS groups of threads in the
// block, each owning the same output tile, cuts the steps KS-fold; the
// groups' sums meet in shared memory before the epilogue, so the result
// stays deterministic and the kernel a single launch.

// ks is the number of K groups (KS, at least 1).
func (t GemmTile) ks() int { return max(t.KS, 1) }

// groupThreads is the threads of one K group: one per TM×TN sub-tile.
func (t GemmTile) groupThreads() int { return (t.BM / t.TM) * (t.BN / t.TN) }

// kStep is the K consumed per staged step: BK for each group.
func (t GemmTile) kStep() int { return t.BK * t.ks() }

// sharedBytes bounds the tiles' shared memory (both padded, see
// tilePad) plus the groups' partial sums.
func (t GemmTile) sharedBytes() int {
	return 4*t.kStep()*(t.BM+t.BN+2*tilePad) + 4*(t.ks()-1)*t.BM*t.BN
}

// smallTile is the tile for grids too small to fill a GPU with 64×64
// blocks: 32×32 blocks of 4×4 sub-tiles (64 threads a group).
var smallTile = GemmTile{BM: 32, BN: 32, BK: 16, TM: 4, TN: 4}

// autoTile picks the SIMT tile for rows×cols outputs in `batches`
// independent products over depth K. Grids of 256 or more 64×64 blocks
// keep DefaultTile (throughput-bound); smaller ones take 32×32 blocks
// and split K among up to four groups, with 32-deep steps when there
// would still be more than 16 of them.
func autoTile(rows, cols, depth, batches int) GemmTile {
	if CeilDiv(rows, DefaultTile.BM)*CeilDiv(cols, DefaultTile.BN)*max(batches, 1) >= 256 {
		return DefaultTile
	}
	t := smallTile
	switch {
	case depth >= 8*t.BK:
		t.KS = 4
	case depth >= 4*t.BK:
		t.KS = 2
	}
	if CeilDiv(depth, t.kStep()) > 16 {
		t.BK = 32
	}
	return t
}

// gemmLanes splits the thread index into the thread's column and row in
// its group's tile (tx, ty) and its K group.
func (f *fn) gemmLanes(t GemmTile, tid string) (tx, ty, grp string) {
	u := ix{f: f}
	grp, lane := u.divmod(tid, t.groupThreads())
	ty, tx = u.divmod(lane, t.BN/t.TN)
	return tx, ty, grp
}

// sumGroups adds the K groups' accumulators into group 0's through
// shared memory and sends the other groups to the returned label, which
// the caller places after the epilogue; "" when there is one group.
// The K loop must end with a barrier (the tiles are not reused here).
func (f *fn) sumGroups(t GemmTile, acc [][]string, tx, ty, grp string) string {
	if t.ks() == 1 {
		return ""
	}
	red := f.shared("Red", ".f32", (t.ks()-1)*t.BM*t.BN, 16)
	// This thread's partial sums start at Red + ((grp-1)·BM·BN +
	// ty·TM·BN + tx·TN)·4; each of its TM rows is BN floats further.
	u := ix{f: f}
	cell := u.mad(ty, t.TM*t.BN, u.imm(0))
	cell = u.mad(tx, t.TN, cell)
	base := f.reg(cB32)
	f.op("mov.u32 %s, %s", base, red)
	f.op("mad.lo.u32 %s, %s, 4, %s", base, cell, base)
	own := f.reg(cB32) // grp-1, for groups 1.. only
	f.op("sub.u32 %s, %s, 1", own, grp)
	f.op("mad.lo.u32 %s, %s, %d, %s", own, own, 4*t.BM*t.BN, base)
	lead := f.reg(cPred)
	f.op("setp.eq.u32 %s, %s, 0", lead, grp)
	stored, done := f.label("stored"), f.label("summed")
	f.op("@%s bra %s", lead, stored)
	for i := range t.TM {
		for j := range t.TN {
			f.op("st.shared.f32 [%s+%d], %s", own, 4*(i*t.BN+j), acc[i][j])
		}
	}
	f.place(stored)
	f.op("bar.sync 0")
	f.op("@!%s bra %s", lead, done)
	for g := range t.ks() - 1 {
		for i := range t.TM {
			for j := range t.TN {
				v := f.reg(cF32)
				f.op("ld.shared.f32 %s, [%s+%d]", v, base, 4*(g*t.BM*t.BN+i*t.BN+j))
				f.op("add.rn.f32 %s, %s, %s", acc[i][j], acc[i][j], v)
			}
		}
	}
	return done
}
