package ptx

import (
	"fmt"
	"math"
)

// argRowMin is the line length from which ArgMax/ArgMin over a
// contiguous axis (Inner 1: a vocabulary's logits) gives each line a
// block instead of a thread.
const argRowMin = 1024

// argRow reports whether the Arg takes the block-per-line kernel: a long
// (or, with Row, any) contiguous line of a 32-bit register kind (I64
// keeps a thread per line).
func (a *Arg) argRow(k kind) bool {
	return a.Inner == 1 && (a.Row || a.Size >= argRowMin) && k != kS64 && a.Count() <= MaxGridX
}

// argBetter emits whether candidate (v, i) beats (b, bi) in the total
// order ArgMax/ArgMin needs to be associative: NaN first, then the
// larger (smaller) value, ties to the lower index.
func (f *fn) argBetter(k kind, cmp, v, i, b, bi string) string {
	t := selType(k)
	p, eq, lo := f.reg(cPred), f.reg(cPred), f.reg(cPred)
	f.op("setp.%s.%s %s, %s, %s", cmp, t, p, v, b)
	f.op("setp.eq.%s %s, %s, %s", t, eq, v, b)
	f.op("setp.lt.u32 %s, %s, %s", lo, i, bi)
	if k == kF32 {
		vn, bn, q := f.reg(cPred), f.reg(cPred), f.reg(cPred)
		f.op("setp.nan.f32 %s, %s, %s", vn, v, v)
		f.op("setp.nan.f32 %s, %s, %s", bn, b, b)
		f.op("and.pred %s, %s, %s", q, vn, bn) // both NaN: a tie
		f.op("or.pred %s, %s, %s", eq, eq, q)
		f.op("not.pred %s, %s", bn, bn)
		f.op("and.pred %s, %s, %s", q, vn, bn) // only v is NaN: it wins
		f.op("or.pred %s, %s, %s", p, p, q)
	}
	f.op("and.pred %s, %s, %s", eq, eq, lo)
	f.op("or.pred %s, %s, %s", p, p, eq)
	return p
}

// emitArgRow writes ArgMax/ArgMin with one block per line: each thread
// scans a strided share of the line, then (value, index) pairs meet
// through warp shuffles and a shared array of one pair per warp.
func emitArgRow(a *Arg, k kind) (*Kernel, error) {
	block, err := rowBlock(a.Block, a.Size)
	if err != nil {
		return nil, err
	}
	lines := a.Count()
	f := newFn(a.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: lines*a.Size > math.MaxInt32/2}
	rc := newRow(f, lines*a.Size, a.Size, 1, block)
	cmp, t := "lt", selType(k)
	ident := "0f7F800000" // +Inf, or the largest s32
	if k == kS32 {
		ident = fmt.Sprint(math.MaxInt32)
	}
	if a.Max {
		cmp, ident = "gt", "0fFF800000"
		if k == kS32 {
			ident = fmt.Sprint(math.MinInt32)
		}
	}
	best, bi := f.reg(k.class()), f.reg(cB32)
	f.op("mov.%s %s, %s", t, best, ident)
	f.op("mov.u32 %s, %d", bi, math.MaxUint32) // past every index: any element beats it
	rc.each(func(j, e string) {
		v := f.load(a.DType, x.addr(xp, e, a.DType.Size()))
		p := f.argBetter(k, cmp, v, j, best, bi)
		f.op("selp.%s %s, %s, %s, %s", t, best, v, best, p)
		f.op("selp.b32 %s, %s, %s, %s", bi, j, bi, p)
	})
	fold := func() {
		for off := 16; off >= 1; off /= 2 {
			ov, oi := f.reg(k.class()), f.reg(cB32)
			f.op("shfl.sync.bfly.b32 %s, %s, %d, 31, -1", ov, best, off)
			f.op("shfl.sync.bfly.b32 %s, %s, %d, 31, -1", oi, bi, off)
			p := f.argBetter(k, cmp, ov, oi, best, bi)
			f.op("selp.%s %s, %s, %s, %s", t, best, ov, best, p)
			f.op("selp.b32 %s, %s, %s, %s", bi, oi, bi, p)
		}
	}
	fold()
	if block > 32 {
		// Warp leaders publish their pair; every warp refolds them all.
		sv, si := rc.scratch, f.shared("redi", ".u32", 32, 4)
		lane, warp, p := f.reg(cB32), f.reg(cB32), f.reg(cPred)
		f.op("and.b32 %s, %s, 31", lane, rc.tid)
		f.op("shr.u32 %s, %s, 5", warp, rc.tid)
		f.op("setp.eq.u32 %s, %s, 0", p, lane)
		// Pair w lives at sv+4w and si+4w.
		addr := func(arr, i string) string {
			a := f.reg(cB32)
			f.op("mov.u32 %s, %s", a, arr)
			f.op("mad.lo.u32 %s, %s, 4, %s", a, i, a)
			return a
		}
		f.op("@%s st.shared.b32 [%s], %s", p, addr(sv, warp), best)
		f.op("@%s st.shared.u32 [%s], %s", p, addr(si, warp), bi)
		f.op("bar.sync 0")
		f.op("mov.%s %s, %s", t, best, ident)
		f.op("mov.u32 %s, %d", bi, math.MaxUint32)
		f.op("setp.lt.u32 %s, %s, %d", p, lane, block/32)
		f.op("@%s ld.shared.b32 %s, [%s]", p, best, addr(sv, lane))
		f.op("@%s ld.shared.u32 %s, [%s]", p, bi, addr(si, lane))
		fold()
	}
	q := f.reg(cPred)
	f.op("setp.eq.u32 %s, %s, 0", q, rc.tid)
	row, w := f.reg(cB32), f.reg(cB64)
	f.op("mov.u32 %s, %%ctaid.x", row)
	f.op("cvt.u64.u32 %s, %s", w, bi)
	f.op("@%s st.global.s64 [%s], %s", q, ix{f: f}.addr(out, row, 8), w)
	rc.done()
	return f.kernel(Launch{Grid: [3]int{max(lines, 1), 1, 1}, Block: [3]int{block, 1, 1}}), nil
}
