package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// RoiAlign is a kdesc.RoiAlign with the kernel's block.
type RoiAlign struct {
	kdesc.RoiAlign
	Block int // threads per block (0: 256)
}

// EmitRoiAlign writes one thread per output bin (roi, channel, row,
// column). It follows the CPU's reference (ops/detect.go) operation by
// operation in f64: the scaled roi, its bins, the sampling grid (the
// ratio, or ceil(extent/bins) per roi: run-time loop bounds), each
// sample's clamped bilinear neighbours, and the bin's mean or maximum of
// the weighted samples (Max: the largest weighted neighbour per sample,
// NaN propagating, as the CPU's math.Max), rounded once to the dtype. A
// batch index outside the input (the CPU's run-time error) gives zeros.
// Parameters: out, x, rois, batch indices (I64).
func EmitRoiAlign(r *RoiAlign) (*Kernel, error) {
	if r.DType != tensor.F64 {
		if err := floatOnly(r.DType); err != nil {
			return nil, err
		}
	}
	s := r.Spec
	if len(r.X) != 4 || s.OutH < 1 || s.OutW < 1 || s.SamplingRatio < 0 {
		return nil, fmt.Errorf("ptx: %s: input %v with %d×%d bins and sampling ratio %d", r.Name, r.X, s.OutH, s.OutW, s.SamplingRatio)
	}
	nb, c, h, w := r.X[0], r.X[1], r.X[2], r.X[3]
	oh, ow := s.OutH, s.OutW
	n := r.Rois * c * oh * ow
	f := newFn(r.Name)
	out, xp, rp, bp := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("rois"), f.ptrParam("batch")
	x := ix{f: f, wide: max(n, product(r.X)) > math.MaxInt32/2}
	es := r.DType.Size()
	v := newPoolValue(r.DType)
	wreg := func(format string, a ...any) string {
		d := f.reg(cF64)
		f.op(format, append([]any{d}, a...)...)
		return d
	}
	offset := 0.0
	if s.HalfPixel {
		offset = 0.5
	}
	scale := d64(float64(s.SpatialScale))
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		rest, pw := x.divmod(i, ow)
		rest, ph := x.divmod(rest, oh)
		roi, ch := x.divmod(rest, c)
		acc := wreg("mov.f64 %s, %s", d64(0))
		done := f.label("store")
		b, bad := f.reg(cB64), f.reg(cPred)
		f.op("ld.global.s64 %s, [%s]", b, x.addr(bp, roi, 8))
		f.op("setp.ge.u64 %s, %s, %d", bad, b, nb) // negative too
		f.op("@%s bra %s", bad, done)
		bx := b
		if !x.wide {
			bx = f.reg(cB32)
			f.op("cvt.u32.u64 %s, %s", bx, b)
		}
		plane := x.mad(x.mad(bx, c, ch), h*w, x.imm(0))
		box := make([]string, 4)
		for k := range box {
			box[k] = v.toF64(f, v.load(f, x.addr(rp, x.mad(roi, 4, x.imm(k)), es)))
			f.op("mul.rn.f64 %s, %s, %s", box[k], box[k], scale)
			f.op("sub.rn.f64 %s, %s, %s", box[k], box[k], d64(offset))
		}
		x0, y0 := box[0], box[1]
		rw, rh := wreg("sub.rn.f64 %s, %s, %s", box[2], x0), wreg("sub.rn.f64 %s, %s, %s", box[3], y0)
		if !s.HalfPixel {
			f.op("max.f64 %s, %s, %s", rw, rw, d64(1))
			f.op("max.f64 %s, %s, %s", rh, rh, d64(1))
		}
		binH, binW := wreg("div.rn.f64 %s, %s, %s", rh, d64(float64(oh))), wreg("div.rn.f64 %s, %s, %s", rw, d64(float64(ow)))
		gh, gw := f.reg(cB32), f.reg(cB32)
		if s.SamplingRatio > 0 {
			f.op("mov.s32 %s, %d", gh, s.SamplingRatio)
			f.op("mov.s32 %s, %d", gw, s.SamplingRatio)
		} else {
			f.op("cvt.rpi.s32.f64 %s, %s", gh, binH)
			f.op("cvt.rpi.s32.f64 %s, %s", gw, binW)
		}
		count := f.reg(cB32)
		f.op("mul.lo.s32 %s, %s, %s", count, gh, gw)
		f.op("max.s32 %s, %s, 1", count, count)
		ghF, gwF := wreg("cvt.rn.f64.s32 %s, %s", gh), wreg("cvt.rn.f64.s32 %s, %s", gw)
		// The bin's origin: y0 + ph·binH, x0 + pw·binW.
		by := wreg("cvt.rn.f64."+x.t()+" %s, %s", ph)
		f.op("mul.rn.f64 %s, %s, %s", by, by, binH)
		f.op("add.rn.f64 %s, %s, %s", by, y0, by)
		bxo := wreg("cvt.rn.f64."+x.t()+" %s, %s", pw)
		f.op("mul.rn.f64 %s, %s, %s", bxo, bxo, binW)
		f.op("add.rn.f64 %s, %s, %s", bxo, x0, bxo)
		found := f.reg(cB32)
		f.op("mov.u32 %s, 0", found)
		// sub is origin + ((k + 0.5)·bin)/g for sample k of g.
		sub := func(origin, k, bin, g string) string {
			d := wreg("cvt.rn.f64.s32 %s, %s", k)
			f.op("add.rn.f64 %s, %s, %s", d, d, d64(0.5))
			f.op("mul.rn.f64 %s, %s, %s", d, d, bin)
			f.op("div.rn.f64 %s, %s, %s", d, d, g)
			f.op("add.rn.f64 %s, %s, %s", d, origin, d)
			return d
		}
		f.countTo(gh, func(iy string) {
			sy := sub(by, iy, binH, ghF)
			f.countTo(gw, func(ixr string) {
				sx := sub(bxo, ixr, binW, gwF)
				val := roiSample(f, x, v, xp, plane, h, w, sy, sx, s.Max)
				if !s.Max {
					f.op("add.rn.f64 %s, %s, %s", acc, acc, val)
					return
				}
				take, first := f.reg(cPred), f.reg(cPred)
				f.op("setp.gt.f64 %s, %s, %s", take, val, acc)
				f.op("setp.eq.u32 %s, %s, 0", first, found)
				f.op("or.pred %s, %s, %s", take, take, first)
				f.op("@%s mov.f64 %s, %s", take, acc, val)
				f.op("mov.u32 %s, 1", found)
			})
		})
		if !s.Max {
			f.op("div.rn.f64 %s, %s, %s", acc, acc, wreg("cvt.rn.f64.s32 %s, %s", count))
		}
		f.place(done)
		f.storeFromF64(r.DType, x.addr(out, i, es), acc)
	})
	return f.kernel(GridStride(n, blockOr(r.Block), maxGridStrideBlocks)), nil
}

// countTo emits `for k := 0; k < n; k++ { body(k) }` for a run-time
// bound n (an s32 register; none when n <= 0).
func (f *fn) countTo(n string, body func(k string)) {
	k := f.reg(cB32)
	f.op("mov.s32 %s, 0", k)
	loop, done := f.label("count"), f.label("counted")
	p := f.reg(cPred)
	f.place(loop)
	f.op("setp.ge.s32 %s, %s, %s", p, k, n)
	f.op("@%s bra %s", p, done)
	body(k)
	f.op("add.s32 %s, %s, 1", k, k)
	f.op("bra.uni %s", loop)
	f.place(done)
}

// roiSample is the CPU's roiSample in f64: 0 for a point more than a
// cell outside the plane (or NaN), else its four neighbours clamped into
// the plane, weighted bilinearly, summed in order or (max) the largest,
// NaN propagating.
func roiSample(f *fn, x ix, v poolValue, xp, plane string, h, w int, y, xc string, isMax bool) string {
	r := f.reg(cF64)
	f.op("mov.f64 %s, %s", r, d64(0))
	skip := f.label("far")
	out, p := f.reg(cPred), f.reg(cPred)
	f.op("setp.lt.f64 %s, %s, %s", out, y, d64(-1))
	for _, c := range []struct {
		cmp, reg string
		lim      float64
	}{{"gt", y, float64(h)}, {"lt", xc, -1}, {"gt", xc, float64(w)}} {
		f.op("setp.%s.f64 %s, %s, %s", c.cmp, p, c.reg, d64(c.lim))
		f.op("or.pred %s, %s, %s", out, out, p)
	}
	f.op("setp.nan.f64 %s, %s, %s", p, y, xc)
	f.op("or.pred %s, %s, %s", out, out, p)
	f.op("@%s bra %s", out, skip)
	// Per axis: the low neighbour (clamped to the last cell, the point
	// with it), the high one, and the fraction.
	axis := func(c string, size int) (lo, hi, frac string) {
		cc := f.reg(cF64)
		f.op("max.f64 %s, %s, %s", cc, c, d64(0))
		lo, hi = f.reg(cB32), f.reg(cB32)
		f.op("cvt.rzi.s32.f64 %s, %s", lo, cc)
		f.op("add.s32 %s, %s, 1", hi, lo)
		last := f.reg(cPred)
		f.op("setp.ge.s32 %s, %s, %d", last, lo, size-1)
		f.op("@%s mov.s32 %s, %d", last, lo, size-1)
		f.op("@%s mov.s32 %s, %d", last, hi, size-1)
		f.op("@%s mov.f64 %s, %s", last, cc, d64(float64(size-1)))
		frac = f.reg(cF64)
		f.op("cvt.rn.f64.s32 %s, %s", frac, lo)
		f.op("sub.rn.f64 %s, %s, %s", frac, cc, frac)
		return lo, hi, frac
	}
	yl, yh, ly := axis(y, h)
	xl, xh, lx := axis(xc, w)
	hy, hx := f.reg(cF64), f.reg(cF64)
	f.op("sub.rn.f64 %s, %s, %s", hy, d64(1), ly)
	f.op("sub.rn.f64 %s, %s, %s", hx, d64(1), lx)
	es := v.dt.Size()
	term := func(wy, wx, yi, xi string) string {
		cell := f.reg(cB32)
		f.op("mad.lo.s32 %s, %s, %d, %s", cell, yi, w, xi)
		val := v.toF64(f, v.load(f, x.addr(xp, x.mad(x.ext(cell), 1, plane), es)))
		t := f.reg(cF64)
		f.op("mul.rn.f64 %s, %s, %s", t, wy, wx)
		f.op("mul.rn.f64 %s, %s, %s", t, t, val)
		return t
	}
	t := []string{term(hy, hx, yl, xl), term(hy, lx, yl, xh), term(ly, hx, yh, xl), term(ly, lx, yh, xh)}
	if !isMax {
		f.op("add.rn.f64 %s, %s, %s", r, t[0], t[1])
		f.op("add.rn.f64 %s, %s, %s", r, r, t[2])
		f.op("add.rn.f64 %s, %s, %s", r, r, t[3])
	} else {
		f.op("mov.f64 %s, %s", r, f.maxNaN64(f.maxNaN64(t[0], t[1]), f.maxNaN64(t[2], t[3])))
	}
	f.place(skip)
	return r
}

// maxNaN64 is math.Max of two f64 registers: NaN when either is (max.f64
// would return the other).
func (f *fn) maxNaN64(a, b string) string {
	r, p := f.reg(cF64), f.reg(cPred)
	f.op("max.f64 %s, %s, %s", r, a, b)
	f.op("setp.nan.f64 %s, %s, %s", p, a, b)
	f.op("@%s add.rn.f64 %s, %s, %s", p, r, a, b)
	return r
}
