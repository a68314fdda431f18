package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Quantize is a kdesc.Quantize with the kernel's block.
type Quantize struct {
	kdesc.Quantize
	Block int // threads per block (0: 256)
}

// maxRangeBlocks bounds the blocks of a DynamicQuantizeLinear q kernel:
// each block finds x's whole range itself (one launch has no grid-wide
// barrier), so more blocks read x more times.
const maxRangeBlocks = 16

// EmitQuantize writes QuantizeLinear, DequantizeLinear or one output of
// DynamicQuantizeLinear, exact as ops' reference kernels:
//
//   - QuantizeLinear: the quotient x/scale in x's precision (f32 for
//     F32, F16 and BF16, as the CPU widens them; f64 for F64; div.rn, so
//     correctly rounded), rounded half to even and saturated by
//     quantizeInt. Parameters: out, x, scale, zero.
//   - DequantizeLinear: (q - zero)·scale, one rounding to the result's
//     dtype: in f32 for 8-bit q and a non-F64 scale (the product of a
//     9-bit difference and a scale of at most 24 bits is exact there or
//     rounds once, for F32), else in f64 as the CPU computes it, then to
//     the result (F16 and BF16 through round-to-odd f32, so once).
//     Parameters: out, q, scale, zero.
//   - DynamicQuantizeLinear: every block finds x's range [min(x, 0),
//     max(x, 0)] (min and max skip NaN, as the CPU's comparisons) and
//     from it the scale and zero point by ONNX's float32 formulas, then
//     writes its share of q, or thread 0 the scale or the zero point.
//     Parameters: out, x.
func EmitQuantize(q *Quantize) (*Kernel, error) {
	switch q.Op {
	case graph.OpQuantizeLinear:
		return emitQuantizeLinear(q)
	case graph.OpDequantizeLinear:
		return emitDequantizeLinear(q)
	case graph.OpDynamicQuantizeLinear:
		return emitDynamicQuantize(q)
	}
	return nil, fmt.Errorf("ptx: %s: %v is not a quantization", q.Name, q.Op)
}

// quantFloat checks a float operand of the quantization kernels: F32,
// F16, BF16 or F64.
func quantFloat(name string, dt tensor.DType) error {
	if dt == tensor.F64 {
		return nil
	}
	if err := floatOnly(dt); err != nil {
		return fmt.Errorf("ptx: %s: %w", name, err)
	}
	return nil
}

// quant8 checks an 8-bit quantized operand.
func quant8(name string, dt tensor.DType) error {
	if dt != tensor.I8 && dt != tensor.U8 {
		return fmt.Errorf("ptx: %s: dtype %v, want i8 or u8", name, dt)
	}
	return nil
}

// quantBounds is the saturation range of an 8-bit quantized dtype.
func quantBounds(dt tensor.DType) (lo, hi int) {
	if dt == tensor.I8 {
		return math.MinInt8, math.MaxInt8
	}
	return 0, math.MaxUint8
}

// channel emits the per-axis channel of element i, (i / inner) % ch, or
// "" for one scale per tensor.
func (q *Quantize) channel(x ix, i string) string {
	if q.Ch <= 1 {
		return ""
	}
	c := i
	if q.Inner > 1 {
		c, _ = x.divmod(i, q.Inner)
	}
	_, c = x.divmod(c, q.Ch)
	return c
}

// loadWide reads a float element of dt at addr into an f32 register, or
// an f64 one for F64 (wide reports which).
func (f *fn) loadWide(dt tensor.DType, addr string) (v string, wide bool) {
	if dt != tensor.F64 {
		return f.load(dt, addr), false
	}
	r := f.reg(cF64)
	f.op("ld.global.f64 %s, [%s]", r, addr)
	return r, true
}

// quantizeInt is ONNX's saturate(round(quot) + zero) for an f32 (or,
// wide, f64) quotient and an s32 zero point: cvt.rni rounds half to even
// and gives 0 for NaN (the CPU's quantizeOne maps NaN to 0 too), and the
// rounded value is clamped to ±512 before the zero point is added, so
// the sum cannot wrap (past ±512 it saturates either way).
func (f *fn) quantizeInt(quot string, wide bool, zero string, lo, hi int) string {
	r := f.reg(cB32)
	src := "f32"
	if wide {
		src = "f64"
	}
	f.op("cvt.rni.s32.%s %s, %s", src, r, quot)
	f.op("min.s32 %s, %s, 512", r, r)
	f.op("max.s32 %s, %s, -512", r, r)
	if zero != "" {
		f.op("add.s32 %s, %s, %s", r, r, zero)
	}
	f.op("min.s32 %s, %s, %d", r, r, hi)
	f.op("max.s32 %s, %s, %d", r, r, lo)
	return r
}

func emitQuantizeLinear(q *Quantize) (*Kernel, error) {
	if err := quantFloat(q.Name, q.In); err != nil {
		return nil, err
	}
	if err := quant8(q.Name, q.Out); err != nil {
		return nil, err
	}
	if q.ScaleDT != q.In || q.ZeroDT != q.Out {
		return nil, fmt.Errorf("ptx: %s: scale %v and zero point %v for x %v and result %v", q.Name, q.ScaleDT, q.ZeroDT, q.In, q.Out)
	}
	n := q.Outer * q.Ch * q.Inner
	f := newFn(q.Name)
	out, xp, sp, zp := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("scale"), f.ptrParam("zero")
	x := ix{f: f, wide: n > math.MaxInt32/2}
	lo, hi := quantBounds(q.Out)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		c := q.channel(x, i)
		if c == "" {
			c = x.imm(0)
		}
		v, wide := f.loadWide(q.In, x.addr(xp, i, q.In.Size()))
		s, _ := f.loadWide(q.ScaleDT, x.addr(sp, c, q.ScaleDT.Size()))
		z := f.load(q.ZeroDT, x.addr(zp, c, 1))
		quot := f.reg(cF32)
		if wide {
			quot = f.reg(cF64)
			f.op("div.rn.f64 %s, %s, %s", quot, v, s)
		} else {
			f.op("div.rn.f32 %s, %s, %s", quot, v, s)
		}
		f.store(q.Out, x.addr(out, i, 1), f.quantizeInt(quot, wide, z, lo, hi))
	})
	return f.kernel(GridStride(n, blockOr(q.Block), maxGridStrideBlocks)), nil
}

func emitDequantizeLinear(q *Quantize) (*Kernel, error) {
	if q.In != tensor.I32 {
		if err := quant8(q.Name, q.In); err != nil {
			return nil, err
		}
	}
	if err := quantFloat(q.Name, q.Out); err != nil {
		return nil, err
	}
	if q.ScaleDT != q.Out || q.ZeroDT != q.In {
		return nil, fmt.Errorf("ptx: %s: scale %v and zero point %v for q %v and result %v", q.Name, q.ScaleDT, q.ZeroDT, q.In, q.Out)
	}
	n := q.Outer * q.Ch * q.Inner
	f := newFn(q.Name)
	out, qp, sp, zp := f.ptrParam("out"), f.ptrParam("q"), f.ptrParam("scale"), f.ptrParam("zero")
	x := ix{f: f, wide: n > math.MaxInt32/4}
	exact := q.In != tensor.I32 && q.Out != tensor.F64
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		c := q.channel(x, i)
		if c == "" {
			c = x.imm(0)
		}
		v := f.load(q.In, x.addr(qp, i, q.In.Size()))
		z := f.load(q.ZeroDT, x.addr(zp, c, q.ZeroDT.Size()))
		s, wideS := f.loadWide(q.ScaleDT, x.addr(sp, c, q.ScaleDT.Size()))
		if exact {
			d, r := f.reg(cB32), f.reg(cF32)
			f.op("sub.s32 %s, %s, %s", d, v, z)
			f.op("cvt.rn.f32.s32 %s, %s", r, d)
			f.op("mul.rn.f32 %s, %s, %s", r, r, s)
			f.store(q.Out, x.addr(out, i, q.Out.Size()), r)
			return
		}
		// An I32 difference needs 33 bits: subtract in s64, multiply in
		// f64 as the CPU does.
		a, b, r := f.reg(cB64), f.reg(cB64), f.reg(cF64)
		f.op("cvt.s64.s32 %s, %s", a, v)
		f.op("cvt.s64.s32 %s, %s", b, z)
		f.op("sub.s64 %s, %s, %s", a, a, b)
		f.op("cvt.rn.f64.s64 %s, %s", r, a)
		sd := s
		if !wideS {
			sd = f.reg(cF64)
			f.op("cvt.f64.f32 %s, %s", sd, s)
		}
		f.op("mul.rn.f64 %s, %s, %s", r, r, sd)
		f.storeFromF64(q.Out, x.addr(out, i, q.Out.Size()), r)
	})
	return f.kernel(GridStride(n, blockOr(q.Block), maxGridStrideBlocks)), nil
}

// storeFromF64 rounds an f64 register once to dt and stores it. F16 and
// BF16 go through f32 rounded to odd (truncate, then set the last bit
// when that was inexact), which keeps the one rounding to the 11 or 8
// bits exact (cvt.rn.bf16.f64 needs sm_90).
func (f *fn) storeFromF64(dt tensor.DType, addr, v string) {
	switch dt {
	case tensor.F64:
		f.op("st.global.f64 [%s], %s", addr, v)
		return
	case tensor.F32:
		r := f.reg(cF32)
		f.op("cvt.rn.f32.f64 %s, %s", r, v)
		f.store(dt, addr, r)
		return
	}
	r, back, bits := f.reg(cF32), f.reg(cF64), f.reg(cB32)
	inexact := f.reg(cPred)
	f.op("cvt.rz.f32.f64 %s, %s", r, v)
	f.op("cvt.f64.f32 %s, %s", back, r)
	f.op("setp.neu.f64 %s, %s, %s", inexact, back, v) // NaN stays NaN either way
	f.op("mov.b32 %s, %s", bits, r)
	f.op("@%s or.b32 %s, %s, 1", inexact, bits, bits)
	f.op("mov.b32 %s, %s", r, bits)
	f.store(dt, addr, r)
}

// xRange emits the block-wide range [min(x, 0), max(x, 0)] of n F32
// elements at xp, every thread of the block reading a strided share;
// min and max skip NaN elements (as the CPU's comparisons do), and a -0
// extreme becomes +0 (the CPU's range starts at +0 and never holds -0).
// Every thread ends with both.
func (f *fn) xRange(x ix, xp string, n int, tid string, block int) (lo, hi string) {
	lo, hi = f.f32(0), f.f32(0)
	i, step := x.ext(tid), x.imm(block)
	if x.wide {
		j := x.reg()
		f.op("mov.u64 %s, %s", j, i)
		i = j
	} else {
		j := x.reg()
		f.op("mov.u32 %s, %s", j, i)
		i = j
	}
	f.gridLoop(x, i, step, n, func() {
		v := f.load(tensor.F32, x.addr(xp, i, 4))
		f.op("min.f32 %s, %s, %s", lo, lo, v)
		f.op("max.f32 %s, %s, %s", hi, hi, v)
	})
	scratch := f.shared("range", ".f32", 32, 4)
	lo = f.blockReduce(lo, "min.f32", tid, scratch, block, 0)
	hi = f.blockReduce(hi, "max.f32", tid, scratch, block, 0)
	zero := fimm(0)
	f.op("add.rn.f32 %s, %s, %s", lo, lo, zero)
	f.op("add.rn.f32 %s, %s, %s", hi, hi, zero)
	return lo, hi
}

// dynParams is DynamicQuantizeLinear's scale and zero point from the
// range [lo, hi], by ONNX's float32 formulas as the CPU computes them:
// scale = (hi - lo)/255 (1/255 for an empty range), zero =
// saturate(round(0 - lo/scale)) to [0, 255] (an s32 register).
func (f *fn) dynParams(lo, hi string) (scale, zero string) {
	span, empty := f.reg(cF32), f.reg(cPred)
	f.op("sub.rn.f32 %s, %s, %s", span, hi, lo)
	f.op("setp.eq.f32 %s, %s, %s", empty, hi, lo)
	f.op("@%s mov.f32 %s, %s", empty, span, fimm(1))
	scale = f.reg(cF32)
	f.op("div.rn.f32 %s, %s, %s", scale, span, fimm(255))
	t := f.reg(cF32)
	f.op("div.rn.f32 %s, %s, %s", t, lo, scale)
	f.op("sub.rn.f32 %s, %s, %s", t, fimm(0), t)
	return scale, f.quantizeInt(t, false, "", 0, 255)
}

func emitDynamicQuantize(q *Quantize) (*Kernel, error) {
	if q.In != tensor.F32 {
		return nil, fmt.Errorf("ptx: %s: x is %v, want f32", q.Name, q.In)
	}
	n := q.Outer * q.Ch * q.Inner
	block := blockOr(q.Block)
	if block%32 != 0 || block > MaxThreads {
		return nil, fmt.Errorf("ptx: %s: block of %d threads: want a multiple of 32 up to %d", q.Name, block, MaxThreads)
	}
	f := newFn(q.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: n > math.MaxInt32/2}
	tid := f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	lo, hi := f.xRange(x, xp, n, tid, block)
	scale, zero := f.dynParams(lo, hi)
	if q.Output != 0 { // the scale or the zero point: one block, thread 0
		done, p := f.label("done"), f.reg(cPred)
		f.op("setp.ne.u32 %s, %s, 0", p, tid)
		f.op("@%s bra %s", p, done)
		if q.Output == 1 {
			f.store(tensor.F32, out, scale)
		} else {
			f.store(tensor.U8, out, zero)
		}
		f.place(done)
		return f.kernel(Launch{Grid: [3]int{1, 1, 1}, Block: [3]int{block, 1, 1}}), nil
	}
	l := GridStride(n, block, maxRangeBlocks)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		v := f.load(tensor.F32, x.addr(xp, i, 4))
		quot := f.reg(cF32)
		f.op("div.rn.f32 %s, %s, %s", quot, v, scale)
		f.store(tensor.U8, x.addr(out, i, 1), f.quantizeInt(quot, false, zero, 0, 255))
	})
	return f.kernel(l), nil
}
