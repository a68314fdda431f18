package ptx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// GemmTile is the blocking of the tiled GEMM: a block computes a BM×BN
// tile of C, stepping through K by BK with both input tiles in shared
// memory; each thread owns a TM×TN sub-tile in registers.
type GemmTile struct{ BM, BN, BK, TM, TN int }

// Threads is the block size the tile needs.
func (t GemmTile) Threads() int { return (t.BM / t.TM) * (t.BN / t.TN) }

// DefaultTile suits mid-sized F32 problems on sm_80 and newer.
var DefaultTile = GemmTile{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4}

// Validate checks that the tile divides evenly among its threads.
func (t GemmTile) Validate() error {
	if t.BM <= 0 || t.BN <= 0 || t.BK <= 0 || t.TM <= 0 || t.TN <= 0 || t.BM%t.TM != 0 || t.BN%t.TN != 0 {
		return fmt.Errorf("ptx: tile %+v: BM, BN must be multiples of TM, TN", t)
	}
	n := t.Threads()
	if n < 32 || n > MaxThreads || (t.BM*t.BK)%n != 0 || (t.BN*t.BK)%n != 0 {
		return fmt.Errorf("ptx: tile %+v: %d threads must be 32..%d and divide BM·BK and BN·BK", t, n, MaxThreads)
	}
	if 4*t.BK*(t.BM+t.BN) > MaxStaticShared {
		return fmt.Errorf("ptx: tile %+v needs more than %d bytes of shared memory", t, MaxStaticShared)
	}
	return nil
}

// Gemm describes out[b] = Alpha·A[b]·B[b] (+ Beta·C[b]) with every
// operand addressed through element strides, which covers transposed
// operands, numpy-broadcast batches and a broadcast bias. out is
// contiguous [batch..., M, N].
type Gemm struct {
	Name    string
	A, B    tensor.DType // F32, F16 or BF16 (widened to f32 in shared memory)
	Out     tensor.DType
	M, N, K int
	Batch   []int // batch dims of out
	// A(m, k) is a[Σ batch·ABatch + m·ASm + k·ASk]; likewise B(k, n).
	ASm, ASk, BSk, BSn int
	ABatch, BBatch     []int
	Alpha              float32
	// C, when HasC: Beta·C(m, n) added, C of dtype CType at
	// Σ batch·CBatch + m·CSm + n·CSn.
	HasC     bool
	CType    tensor.DType
	Beta     float32
	CSm, CSn int
	CBatch   []int
	// Act (graph.OpInvalid for none) is applied after C; then, when
	// HasRes, the residual (ResType, laid out like out) is added.
	Act     graph.Op
	HasRes  bool
	ResType tensor.DType
	Tile    GemmTile // zero: DefaultTile
}

// EmitGemm writes the tiled F32-accumulating GEMM. Parameters: out, a,
// b, then c when HasC, then res when HasRes.
func EmitGemm(g *Gemm) (*Kernel, error) {
	t := g.Tile
	if t == (GemmTile{}) {
		t = DefaultTile
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
	as := f.shared("As", ".f32", t.BK*t.BM, 16)
	bs := f.shared("Bs", ".f32", t.BK*t.BN, 16)

	tid, bx, by := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", bx)
	f.op("mov.u32 %s, %%ctaid.y", by)
	tx, ty := f.reg(cB32), f.reg(cB32)
	f.op("rem.u32 %s, %s, %d", tx, tid, t.BN/t.TN)
	f.op("div.u32 %s, %s, %d", ty, tid, t.BN/t.TN)
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
	// Loop over K in steps of BK.
	k0 := f.reg(cB32)
	f.op("mov.u32 %s, 0", k0)
	kloop, kend := f.label("k"), f.label("kend")
	pk := f.reg(cPred)
	f.place(kloop)
	f.op("setp.ge.u32 %s, %s, %d", pk, k0, g.K)
	f.op("@%s bra %s", pk, kend)
	// Stage the A tile (transposed to As[k][m]) and the B tile (Bs[k][n]).
	f.stageTile(x, tid, threads, t.BM, t.BK, true, m0, k0, g.M, g.K, fr.a, fr.aOff, g.ASm, g.ASk, g.A, as)
	f.stageTile(x, tid, threads, t.BN, t.BK, false, n0, k0, g.N, g.K, fr.b, fr.bOff, g.BSn, g.BSk, g.B, bs)
	f.op("bar.sync 0")
	aRow, bCol := f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %s", aRow, as)
	f.op("mad.lo.u32 %s, %s, %d, %s", aRow, ty, 4*t.TM, aRow)
	f.op("mov.u32 %s, %s", bCol, bs)
	f.op("mad.lo.u32 %s, %s, %d, %s", bCol, tx, 4*t.TN, bCol)
	for kk := 0; kk < t.BK; kk++ {
		av := f.sharedRow(aRow, 4*kk*t.BM, t.TM, t.TM%4 == 0)
		bv := f.sharedRow(bCol, 4*kk*t.BN, t.TN, t.TN%4 == 0)
		for i := range t.TM {
			for j := range t.TN {
				f.op("fma.rn.f32 %s, %s, %s, %s", acc[i][j], av[i], bv[j], acc[i][j])
			}
		}
	}
	f.op("bar.sync 0")
	f.op("add.u32 %s, %s, %d", k0, k0, t.BK)
	f.op("bra.uni %s", kloop)
	f.place(kend)

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
	l := Launch{Grid: [3]int{max(CeilDiv(g.N, t.BN), 1), max(CeilDiv(g.M, t.BM), 1), max(fr.batches, 1)}, Block: [3]int{threads, 1, 1}}
	return f.kernel(l), nil
}

// stageTile copies a BK×span tile of a global operand into shared memory
// laid out [k][span], zero-filling past the matrix edge. For A, span runs
// over m (row stride sm) and the tile is stored transposed; for B over n.
func (f *fn) stageTile(x ix, tid string, threads, span, bk int, isA bool, s0, k0 string, limS, limK int,
	ptr, off string, sS, sK int, dt tensor.DType, sh string) {
	per := span * bk / threads
	for l := range per {
		e := f.reg(cB32)
		f.op("add.u32 %s, %s, %d", e, tid, l*threads)
		// For A consecutive threads walk k (A is usually row-major); for
		// B they walk n. Either way the shared layout is [k][span].
		var si, ki string
		si, ki = f.reg(cB32), f.reg(cB32)
		if isA {
			f.op("div.u32 %s, %s, %d", si, e, bk)
			f.op("rem.u32 %s, %s, %d", ki, e, bk)
		} else {
			f.op("div.u32 %s, %s, %d", ki, e, span)
			f.op("rem.u32 %s, %s, %d", si, e, span)
		}
		gs, gk := f.reg(cB32), f.reg(cB32)
		f.op("add.u32 %s, %s, %s", gs, s0, si)
		f.op("add.u32 %s, %s, %s", gk, k0, ki)
		in := f.reg(cPred)
		f.op("setp.lt.u32 %s, %s, %d", in, gs, limS)
		q := f.reg(cPred)
		f.op("setp.lt.u32 %s, %s, %d", q, gk, limK)
		f.op("and.pred %s, %s, %s", in, in, q)
		v := f.f32(0)
		skip := f.label("ld")
		f.op("@!%s bra %s", in, skip)
		gsx, gkx := gs, gk
		if x.wide {
			gsx, gkx = f.reg(cB64), f.reg(cB64)
			f.op("cvt.u64.u32 %s, %s", gsx, gs)
			f.op("cvt.u64.u32 %s, %s", gkx, gk)
		}
		idx := x.mad(gsx, sS, off)
		idx = x.mad(gkx, sK, idx)
		f.op("mov.f32 %s, %s", v, f.load(dt, x.addr(ptr, idx, dt.Size())))
		f.place(skip)
		sa := f.reg(cB32)
		f.op("mad.lo.u32 %s, %s, %d, %s", sa, ki, span, si)
		f.op("shl.b32 %s, %s, 2", sa, sa)
		base := f.reg(cB32)
		f.op("mov.u32 %s, %s", base, sh)
		f.op("add.u32 %s, %s, %s", sa, sa, base)
		f.op("st.shared.f32 [%s], %s", sa, v)
	}
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

// GemmOf describes a MatMul, FusedMatMul or Gemm node (kdesc.GemmOf),
// with the default tile.
func GemmOf(name string, n *graph.Node) (*Gemm, error) {
	d, err := kdesc.GemmOf(name, n)
	if err != nil {
		return nil, err
	}
	return &Gemm{Name: d.Name, A: d.A, B: d.B, Out: d.Out, M: d.M, N: d.N, K: d.K, Batch: d.Batch,
		ASm: d.ASm, ASk: d.ASk, BSk: d.BSk, BSn: d.BSn, ABatch: d.ABatch, BBatch: d.BBatch, Alpha: d.Alpha,
		HasC: d.HasC, CType: d.CType, Beta: d.Beta, CSm: d.CSm, CSn: d.CSn, CBatch: d.CBatch,
		Act: d.Act, HasRes: d.HasRes, ResType: d.ResType}, nil
}
