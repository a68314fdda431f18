package ptx

import (
	"fmt"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// GemmTile is the blocking of the tiled GEMM: a block computes a BM×BN
// tile of C, stepping through K with both input tiles in shared memory;
// each thread owns a TM×TN sub-tile in registers. KS > 1 splits K among
// KS groups of threads, each taking BK of every staged step, summed in
// shared memory at the end (gemm_ksplit.go).
type GemmTile struct{ BM, BN, BK, TM, TN, KS int }

// Threads is the block size the tile needs.
func (t GemmTile) Threads() int { return t.groupThreads() * t.ks() }

// DefaultTile suits mid-sized F32 problems on sm_80 and newer.
var DefaultTile = GemmTile{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4}

// Validate checks that the tile divides evenly among its threads.
func (t GemmTile) Validate() error {
	if t.BM <= 0 || t.BN <= 0 || t.BK <= 0 || t.TM <= 0 || t.TN <= 0 || t.KS < 0 || t.BM%t.TM != 0 || t.BN%t.TN != 0 {
		return fmt.Errorf("ptx: tile %+v: BM, BN must be multiples of TM, TN", t)
	}
	n := t.Threads()
	if n < 32 || n > MaxThreads || (t.BM*t.kStep())%n != 0 || (t.BN*t.kStep())%n != 0 {
		return fmt.Errorf("ptx: tile %+v: %d threads must be 32..%d and divide BM·BK·KS and BN·BK·KS", t, n, MaxThreads)
	}
	if t.sharedBytes() > MaxStaticShared {
		return fmt.Errorf("ptx: tile %+v needs more than %d bytes of shared memory", t, MaxStaticShared)
	}
	return nil
}

// Gemm is a kdesc.Gemm (A and B F32, F16 or BF16, widened to f32 in
// shared memory) with the kernel's tile.
type Gemm struct {
	kdesc.Gemm
	Tile GemmTile // zero: autoTile's choice for the problem's size
}

// EmitGemm writes the tiled F32-accumulating GEMM. Parameters: out, a,
// b, then c when HasC, then res when HasRes.
func EmitGemm(g *Gemm) (*Kernel, error) {
	t := g.Tile
	if t == (GemmTile{}) {
		t = autoTile(g.M, g.N, g.K, product(g.Batch))
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	fr, err := newGemmFrame(g, t.BM)
	if err != nil {
		return nil, err
	}
	f, x := fr.f, fr.x
	threads := t.Threads()
	lda, ldb := stagedLd(t.BM, walksK(true, g.ASm, g.ASk)), stagedLd(t.BN, walksK(false, g.BSn, g.BSk))
	as := f.shared("As", ".f32", t.kStep()*lda, 16)
	bs := f.shared("Bs", ".f32", t.kStep()*ldb, 16)

	tid, bx, by := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", bx)
	f.op("mov.u32 %s, %%ctaid.y", by)
	tx, ty, grp := f.gemmLanes(t, tid)
	m0, n0 := f.reg(cB32), f.reg(cB32)
	f.op("mul.lo.u32 %s, %s, %d", m0, by, t.BM)
	f.op("mul.lo.u32 %s, %s, %d", n0, bx, t.BN)

	acc := make([][]string, t.TM)
	for i := range acc {
		acc[i] = make([]string, t.TN)
		for j := range acc[i] {
			acc[i][j] = f.f32(0)
		}
	}
	// Loop over K a staged step at a time: the A tile (transposed to
	// As[k][m]) and the B tile (Bs[k][n]).
	u := ix{f: f}
	k0 := u.imm(0)
	f.gridLoop(u, k0, u.imm(t.kStep()), g.K, func() {
		f.stageTile(x, tid, threads, t.BM, t.kStep(), true, m0, k0, g.M, g.K, fr.a, fr.aOff, g.ASm, g.ASk, g.A, as)
		f.stageTile(x, tid, threads, t.BN, t.kStep(), false, n0, k0, g.N, g.K, fr.b, fr.bOff, g.BSn, g.BSk, g.B, bs)
		f.op("bar.sync 0")
		f.tileFMA(t, acc, as, bs, tx, ty, grp, lda, ldb)
		f.op("bar.sync 0")
	})
	done := f.sumGroups(t, acc, tx, ty, grp)

	// Epilogue: alpha, optional beta·C, activation, residual, store.
	for i := range t.TM {
		gm := f.reg(cB32)
		f.op("mad.lo.u32 %s, %s, %d, %s", gm, ty, t.TM, m0)
		f.op("add.u32 %s, %s, %d", gm, gm, i)
		for j := range t.TN {
			gn := f.reg(cB32)
			f.op("mad.lo.u32 %s, %s, %d, %s", gn, tx, t.TN, n0)
			f.op("add.u32 %s, %s, %d", gn, gn, j)
			if err := fr.epilogue(g, gm, gn, acc[i][j]); err != nil {
				return nil, err
			}
		}
	}
	if done != "" {
		f.place(done)
	}
	l := Launch{Grid: [3]int{max(CeilDiv(g.N, t.BN), 1), max(CeilDiv(g.M, t.BM), 1), max(fr.batches, 1)}, Block: [3]int{threads, 1, 1}}
	return f.kernel(l), nil
}

// tilePad is the floats added to each staged row of a tile written
// walking k: the threads of a warp then store to rows span+tilePad
// floats apart, which spreads them over the banks (span floats apart,
// a multiple of 32, they all hit one), and rows stay 16-byte aligned
// for the vector reads of tileFMA.
const tilePad = 4

// walksK says whether stageTile's consecutive threads walk k (the
// operand's unit-stride dim when it has one; A's by default).
func walksK(isA bool, sS, sK int) bool { return sK == 1 || (isA && sS != 1) }

// stagedLd is the row length of a staged [k][span] tile.
func stagedLd(span int, walkK bool) int {
	if walkK {
		return span + tilePad
	}
	return span
}

// stageTile copies a bk×span tile of a global operand into shared memory
// laid out [k][ld] (ld = stagedLd), zero-filling past the matrix edge.
// For A, span runs over m (row stride sS) and the tile is stored
// transposed; for B over n. Consecutive threads walk the operand's
// unit-stride dim (walksK), so a warp's loads are coalesced.
func (f *fn) stageTile(x ix, tid string, threads, span, bk int, isA bool, s0, k0 string, limS, limK int,
	ptr, off string, sS, sK int, dt tensor.DType, sh string) {
	walkK := walksK(isA, sS, sK)
	ld := stagedLd(span, walkK)
	per := span * bk / threads
	if f.stageTileStrided(x, tid, threads, span, bk, walkK, ld, s0, k0, limS, limK, ptr, off, sS, sK, dt, sh) {
		return
	}
	// Every load first (predicated), then every store: see loadFloatIf.
	vals, addrs := make([]string, per), make([]string, per)
	for l := range per {
		e := f.reg(cB32)
		f.op("add.u32 %s, %s, %d", e, tid, l*threads)
		si, ki, gs, gk, addr := f.stagedElem(x, e, span, bk, walkK, s0, k0, ptr, off, sS, sK, dt)
		in := f.reg(cPred)
		f.op("setp.lt.u32 %s, %s, %d", in, gs, limS)
		q := f.reg(cPred)
		f.op("setp.lt.u32 %s, %s, %d", q, gk, limK)
		f.op("and.pred %s, %s, %s", in, in, q)
		vals[l] = f.loadFloatIf(dt, addr, in)
		addrs[l] = f.stagedAddr(sh, ki, si, ld)
	}
	for l := range per {
		f.op("st.shared.f32 [%s], %s", addrs[l], vals[l])
	}
}

// stagedAddr is the shared-memory byte address of staged element (ki,
// si) of a tile laid out [k][ld] from sh.
func (f *fn) stagedAddr(sh, ki, si string, ld int) string {
	sa := f.reg(cB32)
	f.op("mad.lo.u32 %s, %s, %d, %s", sa, ki, ld, si)
	f.op("shl.b32 %s, %s, 2", sa, sa)
	base := f.reg(cB32)
	f.op("mov.u32 %s, %s", base, sh)
	f.op("add.u32 %s, %s, %s", sa, sa, base)
	return sa
}

// stagedElem places staging element e of a bk×span tile: its tile
// coordinates (si along span, ki along k), its operand coordinates
// (gs = s0+si, gk = k0+ki) and its global address.
func (f *fn) stagedElem(x ix, e string, span, bk int, walkK bool, s0, k0, ptr, off string, sS, sK int, dt tensor.DType) (si, ki, gs, gk, addr string) {
	si, ki = f.reg(cB32), f.reg(cB32)
	if walkK {
		f.op("div.u32 %s, %s, %d", si, e, bk)
		f.op("rem.u32 %s, %s, %d", ki, e, bk)
	} else {
		f.op("div.u32 %s, %s, %d", ki, e, span)
		f.op("rem.u32 %s, %s, %d", si, e, span)
	}
	gs, gk = f.reg(cB32), f.reg(cB32)
	f.op("add.u32 %s, %s, %s", gs, s0, si)
	f.op("add.u32 %s, %s, %s", gk, k0, ki)
	return si, ki, gs, gk, x.addr(ptr, x.mad(x.ext(gk), sK, x.mad(x.ext(gs), sS, off)), dt.Size())
}

// stageTileStrided is stageTile when the block's threads divide the
// walked dim: element tid + l·threads then sits at a fixed offset from
// element tid, in the operand and in the tile, so each one costs a
// compare, a predicated load at an immediate offset and a store, with
// the index arithmetic done once. It reports false, emitting nothing,
// where that does not hold (or offsets could pass 2³⁰ bytes).
func (f *fn) stageTileStrided(x ix, tid string, threads, span, bk int, walkK bool, ld int, s0, k0 string, limS, limK int,
	ptr, off string, sS, sK int, dt tensor.DType, sh string) bool {
	per := span * bk / threads
	walked := span
	if walkK {
		walked = bk
	}
	if threads%walked != 0 {
		return false
	}
	// Per l: the walked coordinate is fixed, the other steps by rows.
	rows := threads / walked
	dS, dK := rows, 0 // steps of (s, k) per l
	if !walkK {
		dS, dK = 0, rows
	}
	step := dS*sS + dK*sK
	if int64(per)*int64(step)*int64(dt.Size()) > 1<<30 {
		return false
	}
	si, ki, gs, gk, addr := f.stagedElem(x, tid, span, bk, walkK, s0, k0, ptr, off, sS, sK, dt)
	sa := f.stagedAddr(sh, ki, si, ld)
	// The fixed coordinate's bound, checked once; the stepped one per l.
	fixed, fixedLim, moving, movingLim := gk, limK, gs, limS
	if !walkK {
		fixed, fixedLim, moving, movingLim = gs, limS, gk, limK
	}
	inFixed := f.reg(cPred)
	f.op("setp.lt.u32 %s, %s, %d", inFixed, fixed, fixedLim)
	vals := make([]string, per)
	for l := range per {
		if movingLim-l*rows <= 0 { // past the edge for every thread
			vals[l] = f.f32(0)
			continue
		}
		in := f.reg(cPred)
		f.op("setp.lt.u32 %s, %s, %d", in, moving, movingLim-l*rows)
		f.op("and.pred %s, %s, %s", in, in, inFixed)
		vals[l] = f.loadFloatIf(dt, fmt.Sprintf("%s+%d", addr, l*step*dt.Size()), in)
	}
	for l, v := range vals {
		f.op("st.shared.f32 [%s+%d], %s", sa, 4*l*(dK*ld+dS), v)
	}
	return true
}

// sharedRow loads n consecutive f32 from shared memory at base+off,
// with 16-byte vector loads when vec says base+off is 16-byte aligned.
func (f *fn) sharedRow(base string, off, n int, vec bool) []string {
	out := make([]string, n)
	for i := 0; i < n; {
		if vec && n-i >= 4 {
			a, b, c, d := f.reg(cF32), f.reg(cF32), f.reg(cF32), f.reg(cF32)
			f.op("ld.shared.v4.f32 {%s, %s, %s, %s}, [%s+%d]", a, b, c, d, base, off+4*i)
			out[i], out[i+1], out[i+2], out[i+3] = a, b, c, d
			i += 4
			continue
		}
		r := f.reg(cF32)
		f.op("ld.shared.f32 %s, [%s+%d]", r, base, off+4*i)
		out[i] = r
		i++
	}
	return out
}
