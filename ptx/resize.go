package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// Resize is a kdesc.Resize with the kernel's block.
type Resize struct {
	kdesc.Resize
	Block int // threads per block (0: 256)
}

// maxResizeCombos bounds the tap combinations one output sums (the
// kernel unrolls them): four resized cubic axes.
const maxResizeCombos = 256

// d64 writes an f64 immediate exactly (PTX's 0dXXXXXXXXXXXXXXXX form).
func d64(x float64) string { return fmt.Sprintf("0d%016X", math.Float64bits(x)) }

// EmitResize writes one thread per output element. Each resized axis
// recomputes its taps in float64 with the operations, in the order, of
// kdesc.ResizeTaps (the coordinate transformation, floor, the nearest
// rounding, the linear or Keys cubic weights, exclude_outside's
// renormalisation; every .rn so nothing contracts to an fma), so the
// taps and weights are the CPU's bit for bit. The output is the sum, in
// float64 and in the CPU's order, over every combination of one tap per
// resized axis of the weights' product times the sample, every tap read
// (a zero weight beside an infinity gives NaN, as the CPU), or the
// extrapolation value where a coordinate falls outside the input. Axes
// that copy through (kdesc.ResizeAxis.Identity) read their own sample.
// Parameters: out, x.
func EmitResize(r *Resize) (*Kernel, error) {
	if err := floatOnly(r.DType); err != nil {
		return nil, err
	}
	s := &r.Spec
	if len(r.Axes) != len(r.In) || len(r.Out) != len(r.In) || len(s.Scales) != len(r.In) {
		return nil, fmt.Errorf("ptx: %s: resize of input %v to %v with %d axes of taps", r.Name, r.In, r.Out, len(r.Axes))
	}
	combos := 1
	for _, a := range r.Axes {
		if !a.Identity {
			combos *= a.Taps
		}
	}
	if combos > maxResizeCombos {
		return nil, fmt.Errorf("ptx: %s: %d taps per output exceed the kernel's %d", r.Name, combos, maxResizeCombos)
	}
	n := product(r.Out)
	f := newFn(r.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: max(n, product(r.In)) > math.MaxInt32/2}
	es := r.DType.Size()
	strides := contiguous(r.In)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		c := x.coords(i, r.Out)
		base := x.imm(0)
		outside := ""
		type axisTaps struct {
			ax  int
			idx []string // signed index registers of x's width
			w   []string // f64 weights
		}
		var axes []axisTaps
		for ax, a := range r.Axes {
			if a.Identity {
				base = x.mad(c[ax], strides[ax], base)
				continue
			}
			idx, w, oob := resizeAxisTaps(f, x, s, ax, r.In[ax], c[ax])
			if oob != "" {
				if outside == "" {
					outside = oob
				} else {
					f.op("or.pred %s, %s, %s", outside, outside, oob)
				}
			}
			axes = append(axes, axisTaps{ax, idx, w})
		}
		done := f.label("stored")
		if outside != "" {
			v := f.reg(cF32)
			skip := f.label("inside")
			f.op("@!%s bra %s", outside, skip)
			f.op("mov.f32 %s, %s", v, fimm(float32(s.Extrapolation)))
			f.store(r.DType, x.addr(out, i, es), v)
			f.op("bra.uni %s", done)
			f.place(skip)
		}
		sum := f.reg(cF64)
		f.op("mov.f64 %s, %s", sum, d64(0))
		tap := make([]int, len(axes))
		for {
			wt, off := "", base
			for k, a := range axes {
				off = x.mad(a.idx[tap[k]], strides[a.ax], off)
				if wt == "" {
					wt = a.w[tap[k]]
				} else {
					p := f.reg(cF64)
					f.op("mul.rn.f64 %s, %s, %s", p, wt, a.w[tap[k]])
					wt = p
				}
			}
			v, vd := f.load(r.DType, x.addr(xp, off, es)), f.reg(cF64)
			f.op("cvt.f64.f32 %s, %s", vd, v)
			if wt != "" {
				f.op("mul.rn.f64 %s, %s, %s", vd, wt, vd)
			}
			f.op("add.rn.f64 %s, %s, %s", sum, sum, vd)
			k := len(axes) - 1
			for ; k >= 0; k-- {
				if tap[k]++; tap[k] < len(axes[k].idx) {
					break
				}
				tap[k] = 0
			}
			if k < 0 {
				break
			}
		}
		v := f.reg(cF32)
		f.op("cvt.rn.f32.f64 %s, %s", v, sum)
		f.store(r.DType, x.addr(out, i, es), v)
		f.place(done)
	})
	return f.kernel(GridStride(n, blockOr(r.Block), maxGridStrideBlocks)), nil
}

// resizeAxisTaps emits the taps of output coordinate o (an unsigned
// register of x's width) on axis ax: index registers, f64 weights and,
// under tf_crop_and_resize, a predicate set where the coordinate lies
// outside the input ("" otherwise). It follows kdesc's resizeCoord and
// fillTaps operation by operation.
func resizeAxisTaps(f *fn, x ix, s *graph.ResizeSpec, ax, in int, o string) (idx, w []string, outside string) {
	scale, length, last := s.Scales[ax], kdesc.ResizeLength(s, ax, in), float64(in-1)
	xo, v := f.reg(cF64), f.reg(cF64)
	f.op("cvt.rn.f64.%s %s, %s", x.t(), xo, o)
	halfOver := func(minus bool) { // (x + 0.5) / scale [- 0.5]
		f.op("add.rn.f64 %s, %s, %s", v, xo, d64(0.5))
		f.op("div.rn.f64 %s, %s, %s", v, v, d64(scale))
		if minus {
			f.op("sub.rn.f64 %s, %s, %s", v, v, d64(0.5))
		}
	}
	switch s.Coord {
	case graph.CoordPytorchHalfPixel, graph.CoordAlignCorners:
		if length == 1 {
			f.op("mov.f64 %s, %s", v, d64(0))
		} else if s.Coord == graph.CoordPytorchHalfPixel {
			halfOver(true)
		} else {
			f.op("mul.rn.f64 %s, %s, %s", v, xo, d64(last))
			f.op("div.rn.f64 %s, %s, %s", v, v, d64(length-1))
		}
	case graph.CoordAsymmetric:
		f.op("div.rn.f64 %s, %s, %s", v, xo, d64(scale))
	case graph.CoordTFHalfPixelForNN:
		halfOver(false)
	case graph.CoordTFCropAndResize:
		lo, hi := s.ROI[ax], s.ROI[len(s.Sizes)+ax]
		if length == 1 {
			f.op("mov.f64 %s, %s", v, d64((hi-lo)*last/2))
		} else {
			f.op("mul.rn.f64 %s, %s, %s", v, xo, d64(hi-lo))
			f.op("mul.rn.f64 %s, %s, %s", v, v, d64(last))
			f.op("div.rn.f64 %s, %s, %s", v, v, d64(length-1))
		}
		f.op("add.rn.f64 %s, %s, %s", v, v, d64(lo*last))
		outside = f.reg(cPred)
		q := f.reg(cPred)
		f.op("setp.lt.f64 %s, %s, %s", outside, v, d64(0))
		f.op("setp.gt.f64 %s, %s, %s", q, v, d64(last))
		f.op("or.pred %s, %s, %s", outside, outside, q)
	default: // half_pixel
		halfOver(true)
	}
	// x0 = floor(x), t = x - x0; an integral x is the end of the interval
	// before it (x0 - 1, t = 1).
	x0, t, z := f.reg(cF64), f.reg(cF64), f.reg(cPred)
	f.op("cvt.rmi.f64.f64 %s, %s", x0, v)
	f.op("sub.rn.f64 %s, %s, %s", t, v, x0)
	f.op("setp.eq.f64 %s, %s, %s", z, t, d64(0))
	f.op("@%s sub.rn.f64 %s, %s, %s", z, x0, x0, d64(1))
	f.op("@%s mov.f64 %s, %s", z, t, d64(1))
	at := func(k float64) string { // the clamped index of x0 + k
		d, r := f.reg(cF64), x.reg()
		f.op("add.rn.f64 %s, %s, %s", d, x0, d64(k))
		f.op("min.f64 %s, %s, %s", d, d, d64(last))
		f.op("max.f64 %s, %s, %s", d, d, d64(0))
		f.op("cvt.rzi.s%s.f64 %s, %s", x.t()[1:], r, d)
		return r
	}
	wreg := func(format string, a ...any) string {
		r := f.reg(cF64)
		f.op(format, append([]any{r}, a...)...)
		return r
	}
	switch s.Mode {
	case graph.ResizeNearest:
		up := f.reg(cPred)
		switch s.Nearest {
		case graph.NearestRoundPreferFloor:
			f.op("setp.gt.f64 %s, %s, %s", up, t, d64(0.5))
		case graph.NearestRoundPreferCeil:
			f.op("setp.ge.f64 %s, %s, %s", up, t, d64(0.5))
		case graph.NearestFloor:
			f.op("setp.eq.f64 %s, %s, %s", up, t, d64(1))
		default: // ceil: always x0 + 1 (t is in (0, 1])
			f.op("setp.eq.u32 %s, 0, 0", up)
		}
		f.op("@%s add.rn.f64 %s, %s, %s", up, x0, x0, d64(1))
		return []string{at(0)}, []string{wreg("mov.f64 %s, %s", d64(1))}, outside
	case graph.ResizeLinear:
		return []string{at(0), at(1)}, []string{wreg("sub.rn.f64 %s, %s, %s", d64(1), t), t}, outside
	}
	w = f.cubicWeights(s.CubicA, t)
	idx = []string{at(-1), at(0), at(1), at(2)}
	if s.ExcludeOutside {
		sum := wreg("mov.f64 %s, %s", d64(0))
		for k := range w {
			// i = (x0 - 1) + k; outside the input its weight is 0.
			i, p, q := f.reg(cF64), f.reg(cPred), f.reg(cPred)
			f.op("sub.rn.f64 %s, %s, %s", i, x0, d64(1))
			f.op("add.rn.f64 %s, %s, %s", i, i, d64(float64(k)))
			f.op("setp.lt.f64 %s, %s, %s", p, i, d64(0))
			f.op("setp.gt.f64 %s, %s, %s", q, i, d64(last))
			f.op("or.pred %s, %s, %s", p, p, q)
			f.op("@%s mov.f64 %s, %s", p, w[k], d64(0))
			f.op("add.rn.f64 %s, %s, %s", sum, sum, w[k])
		}
		for k := range w {
			f.op("div.rn.f64 %s, %s, %s", w[k], w[k], sum)
		}
	}
	return idx, w, outside
}

// cubicWeights are the cubic convolution (Keys) weights with parameter a
// of the four neighbours x0-1 … x0+2 at fraction t (an f64 register):
// far(t+1), near(t), near(1-t), far(2-t), each evaluated in the CPU's
// order with every operation rounded on its own (.rn, no fma).
func (f *fn) cubicWeights(a float64, t string) []string {
	wreg := func(format string, args ...any) string {
		r := f.reg(cF64)
		f.op(format, append([]any{r}, args...)...)
		return r
	}
	far := func(d string) string { // ((a·d - 5a)·d + 8a)·d - 4a
		r := wreg("mul.rn.f64 %s, %s, %s", d64(a), d)
		f.op("sub.rn.f64 %s, %s, %s", r, r, d64(5*a))
		f.op("mul.rn.f64 %s, %s, %s", r, r, d)
		f.op("add.rn.f64 %s, %s, %s", r, r, d64(8*a))
		f.op("mul.rn.f64 %s, %s, %s", r, r, d)
		f.op("sub.rn.f64 %s, %s, %s", r, r, d64(4*a))
		return r
	}
	near := func(d string) string { // ((a+2)·d - (a+3))·d·d + 1
		r := wreg("mul.rn.f64 %s, %s, %s", d64(a+2), d)
		f.op("sub.rn.f64 %s, %s, %s", r, r, d64(a+3))
		f.op("mul.rn.f64 %s, %s, %s", r, r, d)
		f.op("mul.rn.f64 %s, %s, %s", r, r, d)
		f.op("add.rn.f64 %s, %s, %s", r, r, d64(1))
		return r
	}
	return []string{
		far(wreg("add.rn.f64 %s, %s, %s", d64(1), t)),
		near(t),
		near(wreg("sub.rn.f64 %s, %s, %s", d64(1), t)),
		far(wreg("sub.rn.f64 %s, %s, %s", d64(2), t)),
	}
}
