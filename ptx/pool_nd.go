package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// PoolND is a kdesc.PoolND (MaxPoolND, AvgPoolND: 1 to 3 spatial axes,
// dilations, MaxPool's flat indices) with the kernel's block.
type PoolND struct {
	kdesc.PoolND
	Block int // threads per block (0: 256)
}

// EmitPoolND writes an N-D pool with one output per thread, walking its
// window in row-major order over the real cells (padding skipped), as
// the CPU's reference: the max keeps the first maximum and the first NaN
// (a NaN beats every number), a window of padding only gives the dtype's
// lowest value and index -1; with Indices the output is the I64 flat
// position (plane·size + the cell's row- or column-major offset) of that
// maximum. The mean sums in f64 in window order and divides by the real
// cells (or the whole window with CountPad), rounding once to the dtype,
// as the CPU; a window of padding only gives NaN. F64 runs in f64, F16
// and BF16 widened to f32 (exact for max), integers in s32 or s64.
// Parameters: out, x.
func EmitPoolND(p *PoolND) (*Kernel, error) {
	sp := len(p.In) - 2
	if sp < 1 || sp > 3 || len(p.Out) != len(p.In) || len(p.Kernel) != sp || len(p.Strides) != sp ||
		len(p.Dilations) != sp || len(p.Pads) != 2*sp {
		return nil, fmt.Errorf("ptx: %s: input %v, output %v, kernel %v, strides %v, dilations %v, pads %v do not form an N-D pool",
			p.Name, p.In, p.Out, p.Kernel, p.Strides, p.Dilations, p.Pads)
	}
	if p.DType != tensor.F64 {
		if err := checkMove(p.DType); err != nil {
			return nil, err
		}
	}
	if p.DType == tensor.Bool || (!p.Max && !p.DType.IsFloat()) {
		return nil, fmt.Errorf("ptx: %s: a %v pool of %v", p.Name, map[bool]string{true: "max", false: "mean"}[p.Max], p.DType)
	}
	n, size := product(p.Out), product(p.In[2:])
	f := newFn(p.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: max(n, product(p.In)) > math.MaxInt32/2}
	st := "s" + x.t()[1:]
	v := newPoolValue(p.DType)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		c := x.coords(i, p.Out)
		plane := x.mad(c[0], p.In[1], c[1])
		base := x.mad(plane, size, x.imm(0))
		var best, sum, cells, at, found string
		if p.Max {
			best, at, found = v.lowest(f), f.reg(cB64), f.reg(cB32)
			f.op("mov.s64 %s, -1", at)
			f.op("mov.u32 %s, 0", found)
		} else {
			sum, cells = f.reg(cF64), f.reg(cB32)
			f.op("mov.f64 %s, %s", sum, d64(0))
			f.op("mov.u32 %s, 0", cells)
		}
		var walk func(a int, off, colOff string)
		walk = func(a int, off, colOff string) {
			if a == sp {
				e := x.mad(off, 1, base)
				val := v.load(f, x.addr(xp, e, p.DType.Size()))
				if !p.Max {
					d := v.toF64(f, val)
					f.op("add.rn.f64 %s, %s, %s", sum, sum, d)
					f.op("add.u32 %s, %s, 1", cells, cells)
					return
				}
				take := v.beats(f, val, best)
				first := f.reg(cPred)
				f.op("setp.eq.u32 %s, %s, 0", first, found)
				f.op("or.pred %s, %s, %s", take, take, first)
				f.op("@%s mov.%s %s, %s", take, v.t, best, val)
				f.op("@%s mov.u32 %s, 1", take, found)
				if p.Indices {
					pos := off
					if p.ColMajor {
						pos = colOff
					}
					e64 := x.mad(plane, size, pos)
					if !x.wide {
						w := f.reg(cB64)
						f.op("cvt.u64.u32 %s, %s", w, e64)
						e64 = w
					}
					f.op("@%s mov.b64 %s, %s", take, at, e64)
				}
				return
			}
			f.count(x, p.Kernel[a], func(k string) {
				ca := x.origin(c[2+a], p.Strides[a], p.Pads[a])
				f.op("mad.lo.%s %s, %s, %d, %s", st, ca, k, p.Dilations[a], ca)
				skip := f.label("pad")
				f.outside(x, ca, p.In[2+a], skip)
				// Row-major: off·In[a] + c; column-major: the first
				// spatial axis fastest.
				colStride := product(p.In[2 : 2+a])
				walk(a+1, x.mad(off, p.In[2+a], ca), x.mad(ca, colStride, colOff))
				f.place(skip)
			})
		}
		walk(0, x.imm(0), x.imm(0))
		dst := x.addr(out, i, map[bool]int{true: 8, false: p.DType.Size()}[p.Indices])
		switch {
		case p.Indices:
			f.op("st.global.s64 [%s], %s", dst, at)
		case p.Max:
			v.store(f, p.DType, dst, best)
		default:
			d := f.reg(cF64)
			if p.CountPad {
				f.op("mov.f64 %s, %s", d, d64(float64(product(p.Kernel))))
			} else {
				f.op("cvt.rn.f64.u32 %s, %s", d, cells)
			}
			f.op("div.rn.f64 %s, %s, %s", sum, sum, d)
			f.storeFromF64(p.DType, dst, sum)
		}
	})
	return f.kernel(GridStride(n, blockOr(p.Block), maxGridStrideBlocks)), nil
}

// poolValue is how a pool holds values of one dtype in registers: f32
// (F32, F16, BF16), f64, s32 (I8, U8, I32) or s64.
type poolValue struct {
	dt tensor.DType
	c  class
	t  string // the register's PTX type
}

func newPoolValue(dt tensor.DType) poolValue {
	switch dt {
	case tensor.F64:
		return poolValue{dt, cF64, "f64"}
	case tensor.I64:
		return poolValue{dt, cB64, "s64"}
	case tensor.I8, tensor.U8, tensor.I32:
		return poolValue{dt, cB32, "s32"}
	}
	return poolValue{dt, cF32, "f32"}
}

func (v poolValue) load(f *fn, addr string) string {
	if v.dt == tensor.F64 {
		r, _ := f.loadWide(v.dt, addr)
		return r
	}
	return f.load(v.dt, addr)
}

func (v poolValue) store(f *fn, dt tensor.DType, addr, r string) {
	if dt == tensor.F64 {
		f.op("st.global.f64 [%s], %s", addr, r)
		return
	}
	f.store(dt, addr, r)
}

// lowest is a register holding the dtype's lowest value, max's identity
// (-Inf for floats).
func (v poolValue) lowest(f *fn) string {
	r := f.reg(v.c)
	switch v.dt {
	case tensor.F64:
		f.op("mov.f64 %s, %s", r, d64(math.Inf(-1)))
	case tensor.I64:
		f.op("mov.s64 %s, %d", r, math.MinInt64)
	case tensor.I8:
		f.op("mov.s32 %s, %d", r, math.MinInt8)
	case tensor.U8:
		f.op("mov.s32 %s, 0", r)
	case tensor.I32:
		f.op("mov.s32 %s, %d", r, math.MinInt32)
	default:
		f.op("mov.f32 %s, %s", r, fimm(float32(math.Inf(-1))))
	}
	return r
}

// beats is a predicate set when val replaces best as the maximum: val >
// best, or val is NaN and best is not.
func (v poolValue) beats(f *fn, val, best string) string {
	p := f.reg(cPred)
	f.op("setp.gt.%s %s, %s, %s", v.t, p, val, best)
	if v.c == cF32 || v.c == cF64 {
		q := f.reg(cPred)
		f.op("setp.nan.%s %s, %s, %s", v.t, q, val, val)
		f.op("@%s setp.num.%s %s, %s, %s", q, v.t, q, best, best)
		f.op("or.pred %s, %s, %s", p, p, q)
	}
	return p
}

// toF64 widens a float value to f64 (exactly).
func (v poolValue) toF64(f *fn, r string) string {
	if v.c == cF64 {
		return r
	}
	d := f.reg(cF64)
	f.op("cvt.f64.f32 %s, %s", d, r)
	return d
}
