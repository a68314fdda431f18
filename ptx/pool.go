package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
)

// Pool is a kdesc.Pool (MaxPool2D or AvgPool2D) with the kernel's block.
type Pool struct {
	kdesc.Pool
	Block int // threads per block (0: 256)
}

// EmitPool writes a 2-D pool, one output per thread: the max (NaN
// propagating, -Inf for a window of padding only) or the mean of the
// window's real cells. Parameters: out, x.
func EmitPool(p *Pool) (*Kernel, error) {
	if err := floatOnly(p.DType); err != nil {
		return nil, err
	}
	if min(p.KH, p.KW, p.SH, p.SW) < 1 || min(p.PT, p.PL) < 0 || p.DH > 1 || p.DW > 1 {
		return nil, fmt.Errorf("ptx: %s: window %dx%d, strides %d,%d, pads %d,%d, dilations %d,%d",
			p.Name, p.KH, p.KW, p.SH, p.SW, p.PT, p.PL, p.DH, p.DW)
	}
	n := p.N * p.C * p.OH * p.OW
	f := newFn(p.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: max(n, p.N*p.C*p.H*p.W) > math.MaxInt32/2}
	es := p.DType.Size()
	st := "s" + x.t()[1:]
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		r, ox := x.divmod(i, p.OW)
		plane, oy := x.divmod(r, p.OH)
		// The window clipped to the input: rows [y0, y1), columns [x0, x1).
		clip := func(o string, s, pad, k, lim int) (lo, hi string) {
			lo, hi = x.origin(o, s, pad), x.reg()
			f.op("add.%s %s, %s, %d", st, hi, lo, k)
			f.op("max.%s %s, %s, 0", st, lo, lo)
			f.op("min.%s %s, %s, %d", st, hi, hi, lim)
			return lo, hi
		}
		y0, y1 := clip(oy, p.SH, p.PT, p.KH, p.H)
		x0, x1 := clip(ox, p.SW, p.PL, p.KW, p.W)
		base := x.mad(plane, p.H*p.W, x.imm(0))
		acc, fold := f.f32(0), "add.f32"
		if p.Max {
			acc, fold = f.f32(float32(math.Inf(-1))), "max.NaN.f32"
		}
		f.span(x, y0, y1, func(iy string) {
			row := x.mad(iy, p.W, base)
			f.span(x, x0, x1, func(ixx string) {
				v := f.load(p.DType, x.addr(xp, x.mad(ixx, 1, row), es))
				f.op("%s %s, %s, %s", fold, acc, acc, v)
			})
		})
		if !p.Max {
			div := fimm(float32(p.KH * p.KW))
			if !p.CountPad {
				// (y1-y0)·(x1-x0) cells, both ≥ 1 unless the input is empty.
				h, w := x.reg(), x.reg()
				f.op("sub.%s %s, %s, %s", st, h, y1, y0)
				f.op("sub.%s %s, %s, %s", st, w, x1, x0)
				f.op("max.%s %s, %s, 0", st, h, h)
				f.op("max.%s %s, %s, 0", st, w, w)
				f.op("mul.lo.%s %s, %s, %s", st, h, h, w)
				div = f.reg(cF32)
				f.op("cvt.rn.f32.%s %s, %s", st, div, h)
			}
			f.op("div.rn.f32 %s, %s, %s", acc, acc, div)
		}
		f.store(p.DType, x.addr(out, i, es), acc)
	})
	return f.kernel(GridStride(n, blockOr(p.Block), maxGridStrideBlocks)), nil
}

// span emits `for v := lo; v < hi; v++ { body(v) }` over signed
// registers lo and hi of x's width.
func (f *fn) span(x ix, lo, hi string, body func(v string)) {
	st := "s" + x.t()[1:]
	v := x.reg()
	f.op("mov.%s %s, %s", x.t(), v, lo)
	top, end := f.label("span"), f.label("spanend")
	p := f.reg(cPred)
	f.place(top)
	f.op("setp.ge.%s %s, %s, %s", st, p, v, hi)
	f.op("@%s bra %s", p, end)
	body(v)
	f.op("add.%s %s, %s, 1", x.t(), v, v)
	f.op("bra.uni %s", top)
	f.place(end)
}
