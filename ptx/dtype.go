package ptx

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// kind is how a value lives in registers: floats of every width are
// computed in f32, small ints in s32, I64 in s64, Bool in a predicate.
type kind int

const (
	kF32 kind = iota
	kS32
	kS64
	kPred
)

func kindOf(dt tensor.DType) (kind, error) {
	switch dt {
	case tensor.F32, tensor.F16, tensor.BF16:
		return kF32, nil
	case tensor.I8, tensor.U8, tensor.I32:
		return kS32, nil
	case tensor.I64:
		return kS64, nil
	case tensor.Bool:
		return kPred, nil
	}
	return 0, fmt.Errorf("ptx: dtype %v is not supported on the GPU", dt)
}

func (k kind) class() class {
	switch k {
	case kS32:
		return cB32
	case kS64:
		return cB64
	case kPred:
		return cPred
	}
	return cF32
}

// loadFloatIf reads a float element of dt at addr widened to f32 when
// pred holds, else gives 0: a predicated load, no branch, so a run of
// them issues back to back (a warp issues in order: a branch around each
// load, or a store of each value right after it, would wait out one
// memory latency per element).
func (f *fn) loadFloatIf(dt tensor.DType, addr, pred string) string {
	r := f.f32(0)
	switch dt {
	case tensor.F32:
		f.op("@%s ld.global.f32 %s, [%s]", pred, r, addr)
	case tensor.F16:
		h := f.reg(cB16)
		f.op("mov.b16 %s, 0", h)
		f.op("@%s ld.global.b16 %s, [%s]", pred, h, addr)
		f.op("cvt.f32.f16 %s, %s", r, h)
	case tensor.BF16:
		b := f.reg(cB32)
		f.op("mov.u32 %s, 0", b)
		f.op("@%s ld.global.u16 %s, [%s]", pred, b, addr)
		f.op("shl.b32 %s, %s, 16", b, b)
		f.op("mov.b32 %s, %s", r, b)
	default:
		panic("ptx: loadFloatIf of " + dt.String())
	}
	return r
}

// load reads one element of dt at addr into a register of its kind.
func (f *fn) load(dt tensor.DType, addr string) string {
	switch dt {
	case tensor.F32:
		r := f.reg(cF32)
		f.op("ld.global.f32 %s, [%s]", r, addr)
		return r
	case tensor.F16:
		h, r := f.reg(cB16), f.reg(cF32)
		f.op("ld.global.b16 %s, [%s]", h, addr)
		f.op("cvt.f32.f16 %s, %s", r, h)
		return r
	case tensor.BF16:
		// bf16 is the top half of an f32: shift the bits into place
		// (cvt.f32.bf16 needs sm_90).
		b, r := f.reg(cB32), f.reg(cF32)
		f.op("ld.global.u16 %s, [%s]", b, addr)
		f.op("shl.b32 %s, %s, 16", b, b)
		f.op("mov.b32 %s, %s", r, b)
		return r
	case tensor.I8:
		r := f.reg(cB32)
		f.op("ld.global.s8 %s, [%s]", r, addr)
		return r
	case tensor.U8:
		r := f.reg(cB32)
		f.op("ld.global.u8 %s, [%s]", r, addr)
		return r
	case tensor.I32:
		r := f.reg(cB32)
		f.op("ld.global.s32 %s, [%s]", r, addr)
		return r
	case tensor.I64:
		r := f.reg(cB64)
		f.op("ld.global.s64 %s, [%s]", r, addr)
		return r
	case tensor.Bool:
		b, p := f.reg(cB32), f.reg(cPred)
		f.op("ld.global.u8 %s, [%s]", b, addr)
		f.op("setp.ne.u32 %s, %s, 0", p, b)
		return p
	}
	panic("ptx: load of unsupported dtype " + dt.String()) // callers check kindOf first
}

// store writes a register of dt's kind as one element of dt at addr,
// rounding floats to nearest even.
func (f *fn) store(dt tensor.DType, addr, v string) {
	switch dt {
	case tensor.F32:
		f.op("st.global.f32 [%s], %s", addr, v)
	case tensor.F16:
		h := f.reg(cB16)
		f.op("cvt.rn.f16.f32 %s, %s", h, v)
		f.op("st.global.b16 [%s], %s", addr, h)
	case tensor.BF16:
		h := f.reg(cB16)
		f.op("cvt.rn.bf16.f32 %s, %s", h, v)
		f.op("st.global.b16 [%s], %s", addr, h)
	case tensor.I8, tensor.U8:
		f.op("st.global.u8 [%s], %s", addr, v)
	case tensor.I32:
		f.op("st.global.s32 [%s], %s", addr, v)
	case tensor.I64:
		f.op("st.global.s64 [%s], %s", addr, v)
	case tensor.Bool:
		b := f.reg(cB32)
		f.op("selp.u32 %s, 1, 0, %s", b, v)
		f.op("st.global.u8 [%s], %s", addr, b)
	default:
		panic("ptx: store of unsupported dtype " + dt.String())
	}
}

// roundTo rounds an f32 register to dt's precision (a Cast to F16 or
// BF16 inside a fused chain), keeping it in f32.
func (f *fn) roundTo(dt tensor.DType, v string) string {
	switch dt {
	case tensor.F16:
		h, r := f.reg(cB16), f.reg(cF32)
		f.op("cvt.rn.f16.f32 %s, %s", h, v)
		f.op("cvt.f32.f16 %s, %s", r, h)
		return r
	case tensor.BF16:
		h, b, r := f.reg(cB16), f.reg(cB32), f.reg(cF32)
		f.op("cvt.rn.bf16.f32 %s, %s", h, v)
		f.op("cvt.u32.u16 %s, %s", b, h)
		f.op("shl.b32 %s, %s, 16", b, b)
		f.op("mov.b32 %s, %s", r, b)
		return r
	}
	return v
}
