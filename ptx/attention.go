package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Attention describes softmax(Q·Kᵀ·Scale + mask)·V over contiguous
// [B, H, S, D] tensors, with grouped K/V heads (H a multiple of HK).
type Attention struct {
	Name             string
	DType            tensor.DType
	B, H, HK, SQ, SK int
	D, DV            int
	Scale            float32 // 0: 1/√D
	Causal           bool    // query i sees keys up to i + SK - SQ
	// Mask: MaskNone, MaskAdd (DType, added to the scores) or MaskBool
	// (false removes a key), read at element strides MaskStrides over
	// [B, H, SQ, SK] (0 broadcasts).
	Mask        int
	MaskStrides []int
	Block       int
}

// Mask kinds of Attention.
const (
	MaskNone = kdesc.MaskNone
	MaskAdd  = kdesc.MaskAdd
	MaskBool = kdesc.MaskBool
)

// maxAttentionKeys bounds SK: one query row of scores lives in shared
// memory (a flash-style kernel that streams K/V is future work).
const maxAttentionKeys = 8192

// EmitAttention writes a row-at-a-time attention kernel: one block per
// (query, head, batch); the block scores every key into shared memory,
// takes the softmax with block reductions, then each thread accumulates
// output features. A query whose every key is removed gets NaN, as the
// softmax it computes gives; with no keys at all (SK = 0) it gets zeros.
// Parameters: out, q, k, v, then mask when present.
func EmitAttention(a *Attention) (*Kernel, error) {
	if err := floatOnly(a.DType); err != nil {
		return nil, err
	}
	if a.HK <= 0 || a.H%a.HK != 0 || a.SK > maxAttentionKeys || a.SQ > MaxGridX || a.H > MaxGridYZ || a.B > MaxGridYZ {
		return nil, fmt.Errorf("ptx: %s: heads %d/%d, keys %d (at most %d), queries %d, batch %d", a.Name, a.H, a.HK, a.SK, maxAttentionKeys, a.SQ, a.B)
	}
	if a.SQ <= 0 || a.H <= 0 || a.B <= 0 {
		return nil, fmt.Errorf("ptx: %s: empty attention (queries %d, heads %d, batch %d)", a.Name, a.SQ, a.H, a.B)
	}
	if a.Mask != MaskNone && len(a.MaskStrides) != 4 {
		return nil, fmt.Errorf("ptx: %s: mask needs 4 strides", a.Name)
	}
	scale := a.Scale
	if scale == 0 && a.D > 0 {
		scale = float32(1 / math.Sqrt(float64(a.D)))
	}
	block, err := rowBlock(a.Block, a.SK)
	if err != nil {
		return nil, err
	}
	f := newFn(a.Name)
	out, q, k, v := f.ptrParam("out"), f.ptrParam("q"), f.ptrParam("k"), f.ptrParam("v")
	var mask string
	if a.Mask != MaskNone {
		mask = f.ptrParam("mask")
	}
	x := ix{f: f, wide: max(a.B*a.H*a.SQ*max(a.D, a.DV), a.B*a.HK*a.SK*max(a.D, a.DV), a.B*a.H*a.SQ*a.SK) > math.MaxInt32/2}
	scores := f.shared("scores", ".f32", max(a.SK, 1), 4)
	red := f.shared("red", ".f32", 32, 4)
	tid, i, h, b := f.reg(cB32), f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", i)
	f.op("mov.u32 %s, %%ctaid.y", h)
	f.op("mov.u32 %s, %%ctaid.z", b)
	w := func(r string) string {
		if !x.wide {
			return r
		}
		o := f.reg(cB64)
		f.op("cvt.u64.u32 %s, %s", o, r)
		return o
	}
	hk := f.reg(cB32)
	f.op("div.u32 %s, %s, %d", hk, h, a.H/a.HK)
	bi, hi, ii, hki := w(b), w(h), w(i), w(hk)
	// Row starts: q and out at ((b·H + h)·SQ + i)·D, k and v at (b·HK + hk)·SK·D.
	qrow := x.mad(x.mad(bi, a.H, hi), a.SQ, ii)
	qBase := x.mad(qrow, a.D, x.imm(0))
	oBase := x.mad(qrow, a.DV, x.imm(0))
	kvHead := x.mad(bi, a.HK, hki)
	kBase := x.mad(kvHead, a.SK*a.D, x.imm(0))
	vBase := x.mad(kvHead, a.SK*a.DV, x.imm(0))
	var mBase string
	if a.Mask != MaskNone {
		ms := a.MaskStrides
		mBase = x.mad(bi, ms[0], x.imm(0))
		mBase = x.mad(hi, ms[1], mBase)
		mBase = x.mad(ii, ms[2], mBase)
	}
	es := a.DType.Size()
	ninf := fimm(float32(math.Inf(-1)))

	// 1. Scores and their maximum.
	mx := f.f32(float32(math.Inf(-1)))
	f.loopU32(tid, a.SK, block, func(j string) {
		jx := w(j)
		kRow := x.mad(jx, a.D, kBase)
		s := f.f32(0)
		f.loopU32("0", a.D, 1, func(d string) {
			dx := w(d)
			qa := x.reg()
			f.op("add.%s %s, %s, %s", x.t(), qa, qBase, dx)
			ka := x.reg()
			f.op("add.%s %s, %s, %s", x.t(), ka, kRow, dx)
			f.op("fma.rn.f32 %s, %s, %s, %s", s, f.load(a.DType, x.addr(q, qa, es)), f.load(a.DType, x.addr(k, ka, es)), s)
		})
		f.op("mul.f32 %s, %s, %s", s, s, fimm(scale))
		switch a.Mask {
		case MaskAdd:
			f.op("add.f32 %s, %s, %s", s, s, f.load(a.DType, x.addr(mask, x.mad(jx, a.MaskStrides[3], mBase), es)))
		case MaskBool:
			keep := f.load(tensor.Bool, x.addr(mask, x.mad(jx, a.MaskStrides[3], mBase), 1))
			f.op("selp.f32 %s, %s, %s, %s", s, s, ninf, keep)
		}
		if a.Causal {
			lim, p := f.reg(cB32), f.reg(cPred)
			f.op("add.u32 %s, %s, %d", lim, i, a.SK-a.SQ)
			f.op("setp.gt.s32 %s, %s, %s", p, j, lim)
			f.op("selp.f32 %s, %s, %s, %s", s, ninf, s, p)
		}
		sa := f.sharedAddr(scores, j)
		f.op("st.shared.f32 [%s], %s", sa, s)
		f.op("max.f32 %s, %s, %s", mx, mx, s)
	})
	mx = f.blockReduce(mx, "max.f32", tid, red, block, float32(math.Inf(-1)))
	// A fully masked row is NaN, as softmax gives it (graph.Attention).
	// This exp and max.f32 drop NaN, so the row is marked dead here and
	// its reciprocal sum set to NaN below; the shift by 0 keeps the
	// weights finite meanwhile. With no keys (SK = 0) the output is 0.
	dead := f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, %s", dead, mx, ninf)
	f.op("selp.f32 %s, 0f00000000, %s, %s", mx, mx, dead)

	// 2. Weights exp(s - max) in place, and their sum.
	sum := f.f32(0)
	f.loopU32(tid, a.SK, block, func(j string) {
		sa := f.sharedAddr(scores, j)
		s := f.reg(cF32)
		f.op("ld.shared.f32 %s, [%s]", s, sa)
		f.op("sub.f32 %s, %s, %s", s, s, mx)
		p := f.exp(s)
		f.op("st.shared.f32 [%s], %s", sa, p)
		f.op("add.f32 %s, %s, %s", sum, sum, p)
	})
	sum = f.blockReduce(sum, "add.f32", tid, red, block, 0)
	if block <= 32 {
		// A one-warp reduction only shuffles, and shfl.sync orders no
		// memory: publish the weights before every lane reads them all.
		// (Bigger blocks get this from blockReduce's barriers.)
		f.op("bar.sync 0")
	}
	inv := f.reg(cF32)
	f.op("rcp.rn.f32 %s, %s", inv, sum)
	zero := f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, 0f00000000", zero, sum)
	f.op("selp.f32 %s, 0f00000000, %s, %s", inv, inv, zero)
	if a.SK > 0 {
		f.op("selp.f32 %s, 0f7FC00000, %s, %s", inv, inv, dead)
	}

	// 3. Each thread accumulates output features d = tid, tid+block, ...
	f.loopU32(tid, a.DV, block, func(d string) {
		dx := w(d)
		acc := f.f32(0)
		f.loopU32("0", a.SK, 1, func(j string) {
			p := f.reg(cF32)
			f.op("ld.shared.f32 %s, [%s]", p, f.sharedAddr(scores, j))
			va := x.mad(w(j), a.DV, vBase)
			f.op("add.%s %s, %s, %s", x.t(), va, va, dx)
			f.op("fma.rn.f32 %s, %s, %s, %s", acc, p, f.load(a.DType, x.addr(v, va, es)), acc)
		})
		f.op("mul.f32 %s, %s, %s", acc, acc, inv)
		oa := x.reg()
		f.op("add.%s %s, %s, %s", x.t(), oa, oBase, dx)
		f.store(a.DType, x.addr(out, oa, es), acc)
	})
	l := Launch{Grid: [3]int{a.SQ, a.H, a.B}, Block: [3]int{block, 1, 1}}
	return f.kernel(l), nil
}

// loopU32 emits `for j := start; j < n; j += step { body(j) }` with a
// fresh u32 counter (start is a register or an immediate).
func (f *fn) loopU32(start string, n, step int, body func(j string)) {
	j := f.reg(cB32)
	f.op("mov.u32 %s, %s", j, start)
	top, end := f.label("for"), f.label("endfor")
	p := f.reg(cPred)
	f.place(top)
	f.op("setp.ge.u32 %s, %s, %d", p, j, n)
	f.op("@%s bra %s", p, end)
	body(j)
	f.op("add.u32 %s, %s, %d", j, j, step)
	f.op("bra.uni %s", top)
	f.place(end)
}

// sharedAddr is the shared address of element j of an f32 array.
func (f *fn) sharedAddr(arr, j string) string {
	a := f.reg(cB32)
	f.op("mov.u32 %s, %s", a, arr)
	f.op("mad.lo.u32 %s, %s, 4, %s", a, j, a)
	return a
}

// AttentionOf describes an Attention node (kdesc.AttentionOf).
func AttentionOf(name string, n *graph.Node) (*Attention, error) {
	d, err := kdesc.AttentionOf(name, n)
	if err != nil {
		return nil, err
	}
	return &Attention{Name: d.Name, DType: d.DType, B: d.B, H: d.H, HK: d.HK, SQ: d.SQ, SK: d.SK, D: d.D, DV: d.DV,
		Scale: d.Scale, Causal: d.Causal, Mask: d.Mask, MaskStrides: d.MaskStrides}, nil
}
