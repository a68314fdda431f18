package ptx

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Attention is a kdesc.Attention with the kernel's block.
type Attention struct {
	kdesc.Attention
	// Block is the threads per query row (a multiple of 32); 0 gives one
	// per key up to 256.
	Block int
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
// (query, head, batch); the block stages the key rows in shared memory a
// chunk at a time and scores every key there, takes the softmax with
// block reductions, then sums the value rows, the keys split among
// groups of threads when the block holds several copies of the output
// features (attentionValues). A query whose every key is removed gets NaN, as the
// softmax it computes gives; with no keys at all (SK = 0, or a KVLen of
// 0) it gets zeros. With KVLen the block reads its batch's count of keys
// in use, n, from memory and runs every key loop to n instead of SK, so a
// KV cache allocated at SK costs only its filled part (causality aligns
// to n). Parameters: out, q, k, v, then mask when present, then the
// KVLen counts (I64 [B]) when set.
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
	blk := a.Block
	if blk == 0 { // a thread per key up to 256: the scores take one step
		blk = min(max(32, CeilDiv(a.SK, 32)*32), 256)
	}
	block, err := rowBlock(blk, a.SK)
	if err != nil {
		return nil, err
	}
	f := newFn(a.Name)
	out, q, k, v := f.ptrParam("out"), f.ptrParam("q"), f.ptrParam("k"), f.ptrParam("v")
	var mask, lens string
	if a.Mask != MaskNone {
		mask = f.ptrParam("mask")
	}
	if a.KVLen {
		lens = f.ptrParam("kvlen")
	}
	x := ix{f: f, wide: max(a.B*a.H*a.SQ*max(a.D, a.DV), a.B*a.HK*a.SK*max(a.D, a.DV), a.B*a.H*a.SQ*a.SK) > math.MaxInt32/2}
	scores := f.shared("scores", ".f32", max(a.SK, 1), 4)
	red := f.shared("red", ".f32", 32, 4)
	tid, i, h, b := f.reg(cB32), f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", i)
	f.op("mov.u32 %s, %%ctaid.y", h)
	f.op("mov.u32 %s, %%ctaid.z", b)
	hk := f.reg(cB32)
	f.op("div.u32 %s, %s, %d", hk, h, a.H/a.HK)
	bi, hi, ii, hki := x.ext(b), x.ext(h), x.ext(i), x.ext(hk)
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
	n := keysInUse(f, x, a, lens, bi)

	// 1. Scores and their maximum. The query row is staged in shared
	// memory, and the key rows chunk by chunk: the block's threads copy
	// each chunk's contiguous rows element by element (coalesced), into
	// rows padded to D+1 floats so that threads reading different rows
	// hit different banks. Each thread then scores its keys from there,
	// the dot product written out when D is at most maxUnrolledDot.
	qs := f.shared("qs", ".f32", max(a.D, 1), 4)
	f.loopU32(tid, a.D, block, func(d string) {
		qa := x.reg()
		f.op("add.%s %s, %s, %s", x.t(), qa, qBase, x.ext(d))
		f.op("st.shared.f32 [%s], %s", f.sharedAddr(qs, d), f.load(a.DType, x.addr(q, qa, es)))
	})
	ld, chunk := a.D+1, attentionChunk(a, block)
	ks := f.shared("ks", ".f32", chunk*ld, 4)
	mx := f.f32(float32(math.Inf(-1)))
	f.loopU32To("0", n, chunk, func(c0 string) {
		cn, end := f.reg(cB32), f.reg(cB32) // keys in this chunk; c0 + cn
		f.op("sub.u32 %s, %s, %s", cn, n, c0)
		f.op("min.u32 %s, %s, %d", cn, cn, chunk)
		f.op("add.u32 %s, %s, %s", end, c0, cn)
		elems := f.reg(cB32)
		f.op("mul.lo.u32 %s, %s, %d", elems, cn, a.D)
		src0 := x.mad(x.ext(c0), a.D, kBase)
		f.op("bar.sync 0") // the last chunk's readers are done (and qs is written)
		// stageUnroll elements a thread per trip, loads before stores
		// (see loadFloatIf).
		f.loopU32To(tid, elems, stageUnroll*block, func(e0 string) {
			vals, addrs, oks := make([]string, stageUnroll), make([]string, stageUnroll), make([]string, stageUnroll)
			for r := range stageUnroll {
				e := f.reg(cB32)
				f.op("add.u32 %s, %s, %d", e, e0, r*block)
				oks[r] = f.reg(cPred)
				f.op("setp.lt.u32 %s, %s, %s", oks[r], e, elems)
				row, col := ix{f: f}.divmod(e, max(a.D, 1))
				sa := f.reg(cB32)
				f.op("mad.lo.u32 %s, %s, %d, %s", sa, row, ld, col)
				addrs[r] = f.sharedAddr(ks, sa)
				ka := x.reg()
				f.op("add.%s %s, %s, %s", x.t(), ka, src0, x.ext(e))
				vals[r] = f.loadFloatIf(a.DType, x.addr(k, ka, es), oks[r])
			}
			for r := range stageUnroll {
				f.op("@%s st.shared.f32 [%s], %s", oks[r], addrs[r], vals[r])
			}
		})
		f.op("bar.sync 0")
		j0 := f.reg(cB32)
		f.op("add.u32 %s, %s, %s", j0, c0, tid)
		f.loopU32To(j0, end, block, func(j string) {
			r := f.reg(cB32)
			f.op("sub.u32 %s, %s, %s", r, j, c0)
			f.op("mul.lo.u32 %s, %s, %d", r, r, ld)
			kRow := f.sharedAddr(ks, r)
			s := f.f32(0)
			if a.D <= maxUnrolledDot {
				for d := range a.D {
					qv, kv := f.reg(cF32), f.reg(cF32)
					f.op("ld.shared.f32 %s, [%s+%d]", qv, qs, 4*d)
					f.op("ld.shared.f32 %s, [%s+%d]", kv, kRow, 4*d)
					f.op("fma.rn.f32 %s, %s, %s, %s", s, qv, kv, s)
				}
			} else {
				f.loopU32("0", a.D, 1, func(d string) {
					qv, kv, kd := f.reg(cF32), f.reg(cF32), f.reg(cB32)
					f.op("ld.shared.f32 %s, [%s]", qv, f.sharedAddr(qs, d))
					f.op("mad.lo.u32 %s, %s, 4, %s", kd, d, kRow)
					f.op("ld.shared.f32 %s, [%s]", kv, kd)
					f.op("fma.rn.f32 %s, %s, %s, %s", s, qv, kv, s)
				})
			}
			jx := x.ext(j)
			f.op("mul.f32 %s, %s, %s", s, s, fimm(scale))
			switch a.Mask {
			case MaskAdd:
				f.op("add.f32 %s, %s, %s", s, s, f.load(a.DType, x.addr(mask, x.mad(jx, a.MaskStrides[3], mBase), es)))
			case MaskBool:
				keep := f.load(tensor.Bool, x.addr(mask, x.mad(jx, a.MaskStrides[3], mBase), 1))
				f.op("selp.f32 %s, %s, %s, %s", s, s, ninf, keep)
			}
			if a.Causal {
				lim, p := f.reg(cB32), f.reg(cPred) // i + n - SQ
				f.op("add.u32 %s, %s, %s", lim, i, n)
				f.op("sub.u32 %s, %s, %d", lim, lim, a.SQ)
				f.op("setp.gt.s32 %s, %s, %s", p, j, lim)
				f.op("selp.f32 %s, %s, %s, %s", s, ninf, s, p)
			}
			sa := f.sharedAddr(scores, j)
			f.op("st.shared.f32 [%s], %s", sa, s)
			f.op("max.f32 %s, %s, %s", mx, mx, s)
		})
	})
	if block <= 32 { // chunks hand keys out from c0, not as phase 2 does: share the scores
		f.op("bar.sync 0")
	}
	mx = f.blockReduce(mx, "max.f32", tid, red, block, float32(math.Inf(-1)))
	// A fully masked row is NaN, as softmax gives it (graph.Attention).
	// This exp and max.f32 drop NaN, so the row is marked dead here and
	// its reciprocal sum set to NaN below; the shift by 0 keeps the
	// weights finite meanwhile. With no keys (SK = 0) the output is 0.
	dead := f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, %s", dead, mx, ninf)
	f.op("selp.f32 %s, 0f00000000, %s, %s", mx, mx, dead)
	if a.KVLen { // a row is dead only when there were keys to remove
		some := f.reg(cPred)
		f.op("setp.ne.u32 %s, %s, 0", some, n)
		f.op("and.pred %s, %s, %s", dead, dead, some)
	}

	// 2. Weights exp(s - max) in place, and their sum.
	sum := f.f32(0)
	f.loopU32To(tid, n, block, func(j string) {
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

	// 3. The weighted sum of the value rows.
	f.attentionValues(a, x, block, tid, n, scores, v, vBase, out, oBase, inv)
	l := Launch{Grid: [3]int{a.SQ, a.H, a.B}, Block: [3]int{block, 1, 1}}
	return f.kernel(l), nil
}

// keysInUse is the count of keys the block attends over: SK as an
// immediate, or with KVLen its batch's count loaded from lens and
// clamped to [0, SK] in a register.
func keysInUse(f *fn, x ix, a *Attention, lens, bi string) string {
	if !a.KVLen {
		return strconv.Itoa(a.SK)
	}
	w, n := f.reg(cB64), f.reg(cB32)
	f.op("ld.global.s64 %s, [%s]", w, x.addr(lens, bi, 8))
	f.op("max.s64 %s, %s, 0", w, w)
	f.op("min.s64 %s, %s, %d", w, w, a.SK)
	f.op("cvt.u32.u64 %s, %s", n, w)
	return n
}

// attentionChunk is how many padded key rows EmitAttention stages at a
// time: at most 16 KiB of them, in what the block's other shared arrays
// (scores, the query row, the value partial sums, reduction scratch)
// leave of the static limit; at least one.
func attentionChunk(a *Attention, block int) int {
	left := MaxStaticShared - 4*(max(a.SK, 1)+max(a.D, 1)+block+32)
	return max(1, min(a.SK, min(16<<10, left)/(4*(a.D+1))))
}

// stageUnroll is how many key elements each thread loads per trip when
// EmitAttention stages a chunk.
const stageUnroll = 8

// maxUnrolledDot is the longest query·key dot product written out in
// full (one load per feature, all in flight together).
const maxUnrolledDot = 256

// loopU32 emits `for j := start; j < n; j += step { body(j) }` with a
// fresh u32 counter (start is a register or an immediate).
func (f *fn) loopU32(start string, n, step int, body func(j string)) {
	f.loopU32To(start, strconv.Itoa(n), step, body)
}

// loopU32To is loopU32 with the bound n a register or an immediate.
func (f *fn) loopU32To(start, n string, step int, body func(j string)) {
	j := f.reg(cB32)
	f.op("mov.u32 %s, %s", j, start)
	top, end := f.label("for"), f.label("endfor")
	p := f.reg(cPred)
	f.place(top)
	f.op("setp.ge.u32 %s, %s, %s", p, j, n)
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
