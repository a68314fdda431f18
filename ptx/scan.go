package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Line kernels give each [Outer, Size, Inner] line (kdesc.Lines) to one
// thread, which walks it in order: neighbouring threads take
// neighbouring inner positions, so their loads coalesce when Inner > 1.

// Arg is a kdesc.Arg (ArgMax or ArgMin) with the kernel's block.
type Arg struct {
	kdesc.Arg
	Block int  // threads per block (0: 256; the block-per-line kernel: from the line length)
	Row   bool // force the block-per-line kernel (argRow)
}

// lineKind checks a line kernel's dtype: floats and integers, not Bool.
func lineKind(name string, dt tensor.DType) (kind, error) {
	k, err := kindOf(dt)
	if err == nil && k == kPred {
		err = fmt.Errorf("ptx: %s: dtype %v", name, dt)
	}
	return k, err
}

// lineStart is line i's first element (its last when reverse) and the
// step between its elements, in elements.
func (x ix) lineStart(l kdesc.Lines, i string, reverse bool) (e string, step int) {
	o, in := x.divmod(i, max(l.Inner, 1))
	e = x.mad(o, l.Size*l.Inner, in)
	if reverse && l.Size > 1 {
		x.f.op("add.%s %s, %s, %d", x.t(), e, e, (l.Size-1)*l.Inner)
		return e, -l.Inner
	}
	return e, l.Inner
}

// EmitArg writes ArgMax/ArgMin: the first index of the extreme, where
// the first NaN beats everything and nothing replaces it. Parameters:
// out (I64, one per line), x.
func EmitArg(a *Arg) (*Kernel, error) {
	k, err := lineKind(a.Name, a.DType)
	if err != nil {
		return nil, err
	}
	if a.argRow(k) {
		return emitArgRow(a, k)
	}
	lines := a.Count()
	f := newFn(a.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: lines*a.Size > math.MaxInt32/2}
	es := a.DType.Size()
	cmp := "lt"
	if a.Max {
		cmp = "gt"
	}
	t := selType(k)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, lines, func() {
		e, step := x.lineStart(a.Lines, i, false)
		best, at := f.load(a.DType, x.addr(xp, e, es)), x.imm(0)
		f.count(x, a.Size-1, func(j string) {
			f.op("add.%s %s, %s, %d", x.t(), e, e, step)
			v := f.load(a.DType, x.addr(xp, e, es))
			p := f.reg(cPred)
			f.op("setp.%s.%s %s, %s, %s", cmp, t, p, v, best)
			if k == kF32 {
				// A NaN wins unless the best is already NaN.
				q := f.reg(cPred)
				f.op("setp.nan.f32 %s, %s, %s", q, v, v)
				f.op("or.pred %s, %s, %s", p, p, q)
				f.op("setp.num.f32 %s, %s, %s", q, best, best)
				f.op("and.pred %s, %s, %s", p, p, q)
			}
			f.op("selp.%s %s, %s, %s, %s", t, best, v, best, p)
			nj := x.reg()
			f.op("add.%s %s, %s, 1", x.t(), nj, j)
			f.op("selp.b%d %s, %s, %s, %s", bits(x), at, nj, at, p)
		})
		if !x.wide {
			w := f.reg(cB64)
			f.op("cvt.u64.u32 %s, %s", w, at)
			at = w
		}
		f.op("st.global.s64 [%s], %s", x.addr(out, i, 8), at)
	})
	return f.kernel(GridStride(lines, blockOr(a.Block), maxGridStrideBlocks)), nil
}

// CumSum is a kdesc.CumSum with the kernel's block.
type CumSum struct {
	kdesc.CumSum
	Block int // threads per block (0: 256)
}

// EmitCumSum writes the running sum: floats accumulate in f32, small
// integers in s32 and I64 in s64 (wrapping, which stores the same bits
// as the reference's int64 sum). Each element is read before its output
// is written, so out may alias x. Parameters: out, x.
func EmitCumSum(c *CumSum) (*Kernel, error) {
	k, err := lineKind(c.Name, c.DType)
	if err != nil {
		return nil, err
	}
	lines := c.Count()
	f := newFn(c.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: lines*c.Size > math.MaxInt32/2}
	es := c.DType.Size()
	t := selType(k)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, lines, func() {
		e, step := x.lineStart(c.Lines, i, c.Reverse)
		acc := f.reg(k.class())
		if k == kF32 {
			f.op("mov.f32 %s, 0f00000000", acc)
		} else {
			f.op("mov.%s %s, 0", t, acc)
		}
		f.count(x, c.Size, func(string) {
			v := f.load(c.DType, x.addr(xp, e, es))
			if c.Exclusive {
				f.store(c.DType, x.addr(out, e, es), acc)
			}
			f.op("add.%s %s, %s, %s", t, acc, acc, v)
			if !c.Exclusive {
				f.store(c.DType, x.addr(out, e, es), acc)
			}
			f.op("add.%s %s, %s, %d", "s"+x.t()[1:], e, e, step)
		})
	})
	return f.kernel(GridStride(lines, blockOr(c.Block), maxGridStrideBlocks)), nil
}
