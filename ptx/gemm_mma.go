package ptx

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/tensor"
)

// MmaTile is the blocking of the tensor-core GEMM: a block computes a
// BM×BN tile of C, stepping through K by BK with both input tiles double
// buffered in shared memory; each warp owns a WM×WN sub-tile, computed
// as (WM/16)×(WN/8) mma.sync m16n8k16 products per 16 steps of k.
type MmaTile struct{ BM, BN, BK, WM, WN int }

// Threads is the block size the tile needs: one warp per warp tile.
func (t MmaTile) Threads() int { return 32 * (t.BM / t.WM) * (t.BN / t.WN) }

// The tensor-core tiles MmaTileFor picks from: MmaTileLarge once the
// grid has enough blocks to fill a GPU, MmaTileSmall below that and
// MmaTileRow for products of at most 16 rows (matrix-vector-like).
var (
	MmaTileLarge = MmaTile{BM: 128, BN: 128, BK: 32, WM: 64, WN: 32}
	MmaTileSmall = MmaTile{BM: 64, BN: 64, BK: 32, WM: 32, WN: 32}
	MmaTileRow   = MmaTile{BM: 16, BN: 128, BK: 32, WM: 16, WN: 32}
)

// mmaFillBlocks is about how many blocks of MmaTileLarge it takes to
// give every SM of an sm_80/sm_90 GPU work.
const mmaFillBlocks = 96

// MmaTileFor picks a tile for g by the size of the product alone (a
// choice of speed, not of result).
func MmaTileFor(g *Gemm) MmaTile {
	if g.M <= 16 {
		return MmaTileRow
	}
	l := MmaTileLarge
	if max(product(g.Batch), 1)*CeilDiv(g.M, l.BM)*CeilDiv(g.N, l.BN) >= mmaFillBlocks {
		return l
	}
	return MmaTileSmall
}

// Validate checks that warps tile the block in whole mma shapes and that
// a warp's accumulators fit comfortably in registers.
func (t MmaTile) Validate() error {
	if t.WM <= 0 || t.WN <= 0 || t.BK <= 0 || t.WM%16 != 0 || t.WN%16 != 0 || t.BK%16 != 0 ||
		t.BM <= 0 || t.BN <= 0 || t.BM%t.WM != 0 || t.BN%t.WN != 0 {
		return fmt.Errorf("ptx: mma tile %+v: WM, WN and BK must be multiples of 16, BM and BN of WM and WN", t)
	}
	if n := t.Threads(); n > MaxThreads {
		return fmt.Errorf("ptx: mma tile %+v needs %d threads (at most %d)", t, n, MaxThreads)
	}
	if t.WM*t.WN > 64*64 {
		return fmt.Errorf("ptx: mma tile %+v: a %d×%d warp tile needs too many accumulator registers", t, t.WM, t.WN)
	}
	return nil
}

// UseMMA reports whether g suits the tensor-core GEMM: both operands F16
// or both BF16 (mma.sync takes one input type).
func UseMMA(g *Gemm) bool {
	return (g.A == tensor.F16 || g.A == tensor.BF16) && g.B == g.A
}

// EmitGemmMMA writes g as a tensor-core GEMM (mma.sync m16n8k16 with f32
// accumulators, fragments read with ldmatrix) with the epilogue and
// parameters of EmitGemm; g.Tile is ignored and a zero t means
// MmaTileFor(g). Operand pointers must be 16-byte aligned (the planner
// aligns every buffer to 64).
func EmitGemmMMA(g *Gemm, t MmaTile) (*Kernel, error) {
	if t == (MmaTile{}) {
		t = MmaTileFor(g)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if !UseMMA(g) {
		return nil, fmt.Errorf("ptx: %s: the tensor-core GEMM takes two F16 or two BF16 operands, not %v and %v", g.Name, g.A, g.B)
	}
	fr, err := newGemmFrame(g, t.BM)
	if err != nil {
		return nil, err
	}
	f := fr.f
	tid, bx, by := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", bx)
	f.op("mov.u32 %s, %%ctaid.y", by)
	m0, n0 := f.reg(cB32), f.reg(cB32)
	f.op("mul.lo.u32 %s, %s, %d", m0, by, t.BM)
	f.op("mul.lo.u32 %s, %s, %d", n0, bx, t.BN)
	a := newMmaOperand(g.A, fr.a, fr.aOff, true, m0, t.BM, t.BK, g.M, g.K, g.ASm, g.ASk, multiplesOf(g.ABatch, 8))
	b := newMmaOperand(g.B, fr.b, fr.bOff, false, n0, t.BN, t.BK, g.N, g.K, g.BSn, g.BSk, multiplesOf(g.BBatch, 8))
	if s := 2 * (a.stageBytes() + b.stageBytes()); s > MaxStaticShared {
		return nil, fmt.Errorf("ptx: %s: mma tile %+v needs %d bytes of shared memory (at most %d)", g.Name, t, s, MaxStaticShared)
	}
	// Two stages of stageBytes/2 16-bit elements each.
	a.sh = f.shared("As", ".b16", a.stageBytes(), 16)
	b.sh = f.shared("Bs", ".b16", b.stageBytes(), 16)

	warp, lane := f.reg(cB32), f.reg(cB32)
	f.op("shr.u32 %s, %s, 5", warp, tid)
	f.op("and.b32 %s, %s, 31", lane, tid)
	wm0, wn0 := f.reg(cB32), f.reg(cB32)
	f.op("div.u32 %s, %s, %d", wm0, warp, t.BN/t.WN)
	f.op("mul.lo.u32 %s, %s, %d", wm0, wm0, t.WM)
	f.op("rem.u32 %s, %s, %d", wn0, warp, t.BN/t.WN)
	f.op("mul.lo.u32 %s, %s, %d", wn0, wn0, t.WN)
	aLane, bLane := a.laneAddr(f, lane, wm0), b.laneAddr(f, lane, wn0)

	mt, nt := t.WM/16, t.WN/8
	acc := make([][][4]string, mt)
	for i := range acc {
		acc[i] = make([][4]string, nt)
		for j := range acc[i] {
			for e := range 4 {
				acc[i][j][e] = f.f32(0)
			}
		}
	}
	if g.K > 0 {
		f.mmaLoop(g, fr.x, t, tid, a, b, aLane, bLane, acc)
	}

	// Epilogue: lane (g, q) holds rows g and g+8, columns 2q and 2q+1 of
	// each 16×8 product.
	gr, gc := f.reg(cB32), f.reg(cB32)
	f.op("shr.u32 %s, %s, 2", gr, lane)
	f.op("add.u32 %s, %s, %s", gr, gr, wm0)
	f.op("add.u32 %s, %s, %s", gr, gr, m0)
	f.op("and.b32 %s, %s, 3", gc, lane)
	f.op("shl.b32 %s, %s, 1", gc, gc)
	f.op("add.u32 %s, %s, %s", gc, gc, wn0)
	f.op("add.u32 %s, %s, %s", gc, gc, n0)
	for i := range mt {
		for j := range nt {
			for e := range 4 {
				gm, gn := f.reg(cB32), f.reg(cB32)
				f.op("add.u32 %s, %s, %d", gm, gr, 16*i+8*(e/2))
				f.op("add.u32 %s, %s, %d", gn, gc, 8*j+e%2)
				if err := fr.epilogue(g, gm, gn, acc[i][j][e]); err != nil {
					return nil, err
				}
			}
		}
	}
	l := Launch{Grid: [3]int{max(CeilDiv(g.N, t.BN), 1), max(CeilDiv(g.M, t.BM), 1), max(fr.batches, 1)},
		Block: [3]int{t.Threads(), 1, 1}}
	return f.kernel(l), nil
}

// mmaLoop steps through K: while the tensor cores work on one stage of
// the shared tiles, the next stage is being copied in.
func (f *fn) mmaLoop(g *Gemm, x ix, t MmaTile, tid string, a, b *mmaOperand, aLane, bLane string, acc [][][4]string) {
	threads := t.Threads()
	async := a.vec || b.vec
	k0, aCur, bCur := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, 0", k0)
	f.op("mov.u32 %s, 0", aCur)
	f.op("mov.u32 %s, 0", bCur)
	a.stage(f, x, tid, threads, k0, aCur)
	b.stage(f, x, tid, threads, k0, bCur)
	if async {
		f.op("cp.async.commit_group")
	}
	loop, last, ready := f.label("k"), f.label("klast"), f.label("kready")
	f.place(loop)
	k1, p := f.reg(cB32), f.reg(cPred)
	f.op("add.u32 %s, %s, %d", k1, k0, t.BK)
	f.op("setp.ge.u32 %s, %s, %d", p, k1, g.K)
	f.op("@%s bra %s", p, last)
	// The other stage was last read before the previous iteration's
	// closing barrier, so it is free.
	aNext, bNext := f.reg(cB32), f.reg(cB32)
	f.op("sub.u32 %s, %d, %s", aNext, a.stageBytes(), aCur)
	f.op("sub.u32 %s, %d, %s", bNext, b.stageBytes(), bCur)
	a.stage(f, x, tid, threads, k1, aNext)
	b.stage(f, x, tid, threads, k1, bNext)
	if async {
		f.op("cp.async.commit_group")
		f.op("cp.async.wait_group 1")
	}
	f.op("bra.uni %s", ready)
	f.place(last)
	if async {
		f.op("cp.async.wait_group 0")
	}
	f.place(ready)
	f.op("bar.sync 0")
	aBase, bBase := f.reg(cB32), f.reg(cB32)
	f.op("add.u32 %s, %s, %s", aBase, aLane, aCur)
	f.op("add.u32 %s, %s, %s", bBase, bLane, bCur)
	ty := map[tensor.DType]string{tensor.F16: "f16", tensor.BF16: "bf16"}[a.dt]
	for kk := range t.BK / 16 {
		af := make([][]string, t.WM/16)
		for i := range af {
			af[i] = a.ldmatrix(f, aBase, kk, i)
		}
		bf := make([][]string, t.WN/8)
		for p := range t.WN / 16 {
			r := b.ldmatrix(f, bBase, kk, p)
			bf[2*p], bf[2*p+1] = r[:2], r[2:]
		}
		for i := range af {
			for j := range bf {
				c := acc[i][j][:]
				f.op("mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%s}, {%s}, {%s}, {%s}", ty, ty,
					strings.Join(c, ", "), strings.Join(af[i], ", "), strings.Join(bf[j], ", "), strings.Join(c, ", "))
			}
		}
	}
	f.op("bar.sync 0")
	f.op("sub.u32 %s, %d, %s", aCur, a.stageBytes(), aCur)
	f.op("sub.u32 %s, %d, %s", bCur, b.stageBytes(), bCur)
	f.op("mov.u32 %s, %s", k0, k1)
	f.op("setp.lt.u32 %s, %s, %d", p, k0, g.K)
	f.op("@%s bra %s", p, loop)
}
