package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// GridSample is a kdesc.GridSample with the kernel's block.
type GridSample struct {
	kdesc.GridSample
	Block int // threads per block (0: 256)
}

// gridFarOut bounds the cell coordinates turned into integers, as the
// CPU's farOut: past it a coordinate is outside any input.
const gridFarOut = 1 << 30

// EmitGridSample writes one thread per output element. It recomputes its
// point's taps in float64 with the operations, in the order, of the
// CPU's reference (ops/gridsample.go: the unnormalisation, the padding
// modes' clip and reflection, round-half-even for nearest, the bilinear
// weights, the 4×4 cubic neighbours with A = -0.75, each neighbour
// padded on its own), every operation rounded on its own (.rn, no fma),
// and sums weight·sample in float64 in the CPU's tap order over the taps
// inside the input; a NaN coordinate gives NaN. The reflection's
// remainder is v - floor(v/span)·span, exact for the integral spans the
// modes use, then moved into [0, span) where the quotient rounded up, so
// it is math.Mod's. Parameters: out, x, grid.
func EmitGridSample(g *GridSample) (*Kernel, error) {
	if g.DType != tensor.F64 {
		if err := floatOnly(g.DType); err != nil {
			return nil, err
		}
	}
	if len(g.X) != 4 || len(g.Out) != 4 || g.Out[0] != g.X[0] || g.Out[1] != g.X[1] {
		return nil, fmt.Errorf("ptx: %s: input %v and output %v do not form a GridSample", g.Name, g.X, g.Out)
	}
	s := g.Spec
	if s.Mode > graph.SampleBicubic || s.Padding > graph.PadReflection {
		return nil, fmt.Errorf("ptx: %s: mode %d, padding %d", g.Name, s.Mode, s.Padding)
	}
	nb, c, h, w, ho, wo := g.X[0], g.X[1], g.X[2], g.X[3], g.Out[2], g.Out[3]
	n := product(g.Out)
	f := newFn(g.Name)
	out, xp, gp := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("grid")
	x := ix{f: f, wide: max(n, product(g.X), nb*ho*wo*2) > math.MaxInt32/2}
	es := g.DType.Size()
	v := newPoolValue(g.DType)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		r, point := x.divmod(i, ho*wo)
		b, _ := x.divmod(r, c)
		plane := x.mad(r, h*w, x.imm(0))
		at := x.mad(x.mad(b, ho*wo, point), 2, x.imm(0))
		gx := v.toF64(f, v.load(f, x.addr(gp, at, es)))
		gy := v.toF64(f, v.load(f, x.addr(gp, x.mad(at, 1, x.imm(1)), es)))
		sum := f.reg(cF64)
		f.op("mov.f64 %s, %s", sum, d64(0))
		done, nan := f.label("store"), f.reg(cPred)
		f.op("setp.nan.f64 %s, %s, %s", nan, gx, gy)
		f.op("@%s mov.f64 %s, %s", nan, sum, d64(math.NaN()))
		f.op("@%s bra %s", nan, done)
		gs := gridSampler{f: f, x: x, spec: s, h: h, w: w}
		ixr, iyr := gs.unnormalise(gx, w), gs.unnormalise(gy, h)
		tap := func(xi, yi, wt string) { // sum += wt·x[plane + yi·w + xi] inside the input
			skip := f.label("out")
			p := f.reg(cPred)
			f.op("setp.ge.u32 %s, %s, %d", p, xi, w)
			f.op("@%s bra %s", p, skip)
			f.op("setp.ge.u32 %s, %s, %d", p, yi, h)
			f.op("@%s bra %s", p, skip)
			cell := f.reg(cB32)
			f.op("mad.lo.s32 %s, %s, %d, %s", cell, yi, w, xi)
			val := v.toF64(f, v.load(f, x.addr(xp, x.mad(x.ext(cell), 1, plane), es)))
			f.op("mul.rn.f64 %s, %s, %s", val, wt, val)
			f.op("add.rn.f64 %s, %s, %s", sum, sum, val)
			f.place(skip)
		}
		far := func(a, b string) string { // |a| > farOut or |b| > farOut
			p, q := f.reg(cPred), f.reg(cPred)
			t := f.reg(cF64)
			f.op("abs.f64 %s, %s", t, a)
			f.op("setp.gt.f64 %s, %s, %s", p, t, d64(gridFarOut))
			f.op("abs.f64 %s, %s", t, b)
			f.op("setp.gt.f64 %s, %s, %s", q, t, d64(gridFarOut))
			f.op("or.pred %s, %s, %s", p, p, q)
			return p
		}
		toInt := func(d, rnd string) string {
			r := f.reg(cB32)
			f.op("cvt.%s.s32.f64 %s, %s", rnd, r, d)
			return r
		}
		wreg := func(format string, a ...any) string {
			r := f.reg(cF64)
			f.op(format, append([]any{r}, a...)...)
			return r
		}
		if s.Mode != graph.SampleBicubic {
			ixr, iyr = gs.pad(ixr, w), gs.pad(iyr, h)
			f.op("@%s bra %s", far(ixr, iyr), done)
			if s.Mode == graph.SampleNearest {
				tap(toInt(ixr, "rni"), toInt(iyr, "rni"), wreg("mov.f64 %s, %s", d64(1)))
			} else {
				x0, y0 := wreg("cvt.rmi.f64.f64 %s, %s", ixr), wreg("cvt.rmi.f64.f64 %s, %s", iyr)
				fx, fy := wreg("sub.rn.f64 %s, %s, %s", ixr, x0), wreg("sub.rn.f64 %s, %s, %s", iyr, y0)
				gx1, gy1 := wreg("sub.rn.f64 %s, %s, %s", d64(1), fx), wreg("sub.rn.f64 %s, %s, %s", d64(1), fy)
				xi, yi := toInt(x0, "rzi"), toInt(y0, "rzi")
				xi1, yi1 := f.reg(cB32), f.reg(cB32)
				f.op("add.s32 %s, %s, 1", xi1, xi)
				f.op("add.s32 %s, %s, 1", yi1, yi)
				tap(xi, yi, wreg("mul.rn.f64 %s, %s, %s", gx1, gy1))
				tap(xi1, yi, wreg("mul.rn.f64 %s, %s, %s", fx, gy1))
				tap(xi, yi1, wreg("mul.rn.f64 %s, %s, %s", gx1, fy))
				tap(xi1, yi1, wreg("mul.rn.f64 %s, %s, %s", fx, fy))
			}
		} else {
			if s.Padding == graph.PadZeros {
				f.op("@%s bra %s", far(ixr, iyr), done)
			}
			for _, r := range []string{ixr, iyr} {
				f.op("min.f64 %s, %s, %s", r, r, d64(gridFarOut))
				f.op("max.f64 %s, %s, %s", r, r, d64(-gridFarOut))
			}
			x0, y0 := wreg("cvt.rmi.f64.f64 %s, %s", ixr), wreg("cvt.rmi.f64.f64 %s, %s", iyr)
			cx := f.cubicWeights(-0.75, wreg("sub.rn.f64 %s, %s, %s", ixr, x0))
			cy := f.cubicWeights(-0.75, wreg("sub.rn.f64 %s, %s, %s", iyr, y0))
			for j := range 4 {
				yy := wreg("sub.rn.f64 %s, %s, %s", y0, d64(1))
				f.op("add.rn.f64 %s, %s, %s", yy, yy, d64(float64(j)))
				yi := toInt(gs.pad(yy, h), "rzi")
				for k := range 4 {
					xx := wreg("sub.rn.f64 %s, %s, %s", x0, d64(1))
					f.op("add.rn.f64 %s, %s, %s", xx, xx, d64(float64(k)))
					tap(toInt(gs.pad(xx, w), "rzi"), yi, wreg("mul.rn.f64 %s, %s, %s", cx[k], cy[j]))
				}
			}
		}
		f.place(done)
		f.storeFromF64(g.DType, x.addr(out, i, es), sum)
	})
	return f.kernel(GridStride(n, blockOr(g.Block), maxGridStrideBlocks)), nil
}

// gridSampler emits GridSample's coordinate maths in f64.
type gridSampler struct {
	f    *fn
	x    ix
	spec graph.GridSampleSpec
	h, w int
}

// unnormalise maps grid coordinate v in [-1, 1] to the cell coordinate
// along an axis of size cells: (v+1)/2·(size-1) with AlignCorners, else
// ((v+1)·size - 1)/2.
func (g gridSampler) unnormalise(v string, size int) string {
	f := g.f
	r := f.reg(cF64)
	f.op("add.rn.f64 %s, %s, %s", r, v, d64(1))
	if g.spec.AlignCorners {
		f.op("div.rn.f64 %s, %s, %s", r, r, d64(2))
		f.op("mul.rn.f64 %s, %s, %s", r, r, d64(float64(size-1)))
		return r
	}
	f.op("mul.rn.f64 %s, %s, %s", r, r, d64(float64(size)))
	f.op("sub.rn.f64 %s, %s, %s", r, r, d64(1))
	f.op("div.rn.f64 %s, %s, %s", r, r, d64(2))
	return r
}

// pad applies the padding mode to cell coordinate v into a new register:
// border clips it to [0, size-1], reflection mirrors it at the corner
// centres (AlignCorners) or the outer edges, then clips; zeros copies it.
func (g gridSampler) pad(v string, size int) string {
	f := g.f
	r := f.reg(cF64)
	f.op("mov.f64 %s, %s", r, v)
	switch g.spec.Padding {
	case graph.PadBorder:
	case graph.PadReflection:
		lo, hi := -0.5, float64(size)-0.5
		if g.spec.AlignCorners {
			lo, hi = 0, float64(size-1)
		}
		g.reflect(r, lo, hi)
	default:
		return r
	}
	f.op("max.f64 %s, %s, %s", r, r, d64(0))
	f.op("min.f64 %s, %s, %s", r, r, d64(float64(size-1)))
	return r
}

// reflect mirrors register r into [lo, hi] in place: with span = hi -
// lo, d = |r - lo|, q = floor(d/span) and e = d - q·span (plus span
// where d/span rounded up to q), r = lo + e for an even q, else hi - e.
// An empty span gives 0.
func (g gridSampler) reflect(r string, lo, hi float64) {
	f := g.f
	span := hi - lo
	if span <= 0 {
		f.op("mov.f64 %s, %s", r, d64(0))
		return
	}
	d, q, e := f.reg(cF64), f.reg(cF64), f.reg(cF64)
	f.op("sub.rn.f64 %s, %s, %s", d, r, d64(lo))
	f.op("abs.f64 %s, %s", d, d)
	f.op("div.rn.f64 %s, %s, %s", q, d, d64(span))
	f.op("cvt.rmi.f64.f64 %s, %s", q, q)
	f.op("mul.rn.f64 %s, %s, %s", e, q, d64(span))
	f.op("sub.rn.f64 %s, %s, %s", e, d, e)
	neg := f.reg(cPred)
	f.op("setp.lt.f64 %s, %s, %s", neg, e, d64(0))
	f.op("@%s add.rn.f64 %s, %s, %s", neg, e, e, d64(span))
	qi, odd := f.reg(cB64), f.reg(cPred)
	f.op("cvt.rzi.s64.f64 %s, %s", qi, q)
	f.op("and.b64 %s, %s, 1", qi, qi)
	f.op("setp.ne.s64 %s, %s, 0", odd, qi)
	f.op("add.rn.f64 %s, %s, %s", r, e, d64(lo))
	f.op("@%s sub.rn.f64 %s, %s, %s", odd, r, d64(hi), e)
}
