package ptx

import (
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
)

// TopK is a kdesc.TopK with the kernel's block.
type TopK struct {
	kdesc.TopK
	Block int // threads per block (0: 256)
}

// EmitTopK writes TopK as a line kernel: each thread makes K passes over
// its line, pass r picking the element that comes first, in TopK's order,
// among those after pass r-1's pick. The order (kdesc.TopK) is strict
// on (value, index), so the passes need no scratch: O(K·Size) per line,
// the shape of the small K that detection heads and MoE routers use.
// Parameters: out (K per line, values or I64 indices), x.
func EmitTopK(d *TopK) (*Kernel, error) {
	k, err := lineKind(d.Name, d.DType)
	if err != nil {
		return nil, err
	}
	lines := d.Count()
	f := newFn(d.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: lines*d.Size > math.MaxInt32/2}
	es, t := d.DType.Size(), selType(k)
	// greater reports a > b with NaN above every number (a pred).
	greater := func(a, b string) string {
		p := f.reg(cPred)
		f.op("setp.gt.%s %s, %s, %s", t, p, a, b)
		if t == "f32" {
			an, bn := f.reg(cPred), f.reg(cPred)
			f.op("setp.nan.f32 %s, %s, %s", an, a, a)
			f.op("setp.num.f32 %s, %s, %s", bn, b, b)
			f.op("and.pred %s, %s, %s", an, an, bn)
			f.op("or.pred %s, %s, %s", p, p, an)
		}
		return p
	}
	// before reports whether (a, ia) comes before (b, ib) in the output:
	// the greater (the smaller with Smallest) first, the lower index on
	// ties, NaN equal to NaN.
	before := func(a, ia, b, ib string) string {
		p := greater(a, b)
		if d.Smallest {
			p = greater(b, a)
		}
		eq := f.reg(cPred)
		f.op("setp.eq.%s %s, %s, %s", t, eq, a, b)
		if t == "f32" {
			both := f.reg(cPred)
			f.op("setp.nan.f32 %s, %s, %s", both, a, a)
			nb := f.reg(cPred)
			f.op("setp.nan.f32 %s, %s, %s", nb, b, b)
			f.op("and.pred %s, %s, %s", both, both, nb)
			f.op("or.pred %s, %s, %s", eq, eq, both)
		}
		lo := f.reg(cPred)
		f.op("setp.lt.%s %s, %s, %s", x.t(), lo, ia, ib)
		f.op("and.pred %s, %s, %s", eq, eq, lo)
		f.op("or.pred %s, %s, %s", p, p, eq)
		return p
	}
	zero := func(r string) {
		if t == "f32" {
			f.op("mov.f32 %s, 0f00000000", r)
		} else {
			f.op("mov.%s %s, 0", t, r)
		}
	}
	outLines := kdesc.Lines{Outer: d.Outer, Size: d.K, Inner: d.Inner}
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, lines, func() {
		e0, step := x.lineStart(d.Lines, i, false)
		o0, ostep := x.lineStart(outLines, i, false)
		prev, prevAt, havePrev := f.reg(k.class()), x.imm(0), f.reg(cPred)
		zero(prev)
		f.op("setp.ne.%s %s, %s, %s", x.t(), havePrev, i, i) // false
		f.count(x, d.K, func(r string) {
			best, bestAt, haveBest := f.reg(k.class()), x.imm(0), f.reg(cPred)
			zero(best)
			f.op("setp.ne.%s %s, %s, %s", x.t(), haveBest, i, i)
			e := x.reg()
			f.op("mov.%s %s, %s", x.t(), e, e0)
			f.count(x, d.Size, func(j string) {
				v := f.load(d.DType, x.addr(xp, e, es))
				// take: after the previous pick and before the best so far.
				after, ahead := before(prev, prevAt, v, j), before(v, j, best, bestAt)
				none := f.reg(cPred)
				f.op("not.pred %s, %s", none, havePrev)
				f.op("or.pred %s, %s, %s", after, after, none)
				f.op("not.pred %s, %s", none, haveBest)
				f.op("or.pred %s, %s, %s", ahead, ahead, none)
				f.op("and.pred %s, %s, %s", after, after, ahead)
				f.op("selp.%s %s, %s, %s, %s", t, best, v, best, after)
				f.op("selp.b%d %s, %s, %s, %s", bits(x), bestAt, j, bestAt, after)
				f.op("or.pred %s, %s, %s", haveBest, haveBest, after)
				f.op("add.%s %s, %s, %d", x.t(), e, e, step)
			})
			oe := x.mad(r, ostep, o0)
			if d.Indices {
				at := bestAt
				if !x.wide {
					at = f.reg(cB64)
					f.op("cvt.u64.u32 %s, %s", at, bestAt)
				}
				f.op("st.global.s64 [%s], %s", x.addr(out, oe, 8), at)
			} else {
				f.store(d.DType, x.addr(out, oe, es), best)
			}
			f.op("mov.%s %s, %s", t, prev, best)
			f.op("mov.%s %s, %s", x.t(), prevAt, bestAt)
			f.op("or.pred %s, %s, %s", havePrev, havePrev, haveBest)
		})
	})
	return f.kernel(GridStride(lines, blockOr(d.Block), maxGridStrideBlocks)), nil
}
