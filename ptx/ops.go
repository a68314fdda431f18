package ptx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// apply emits one op of a chain.
func (f *fn) apply(in Instr, a []val) (val, error) {
	want := 1
	switch {
	case in.Op.IsBinary():
		want = 2
	case in.Op == graph.OpWhere:
		want = 3
	}
	if len(a) != want {
		return val{}, fmt.Errorf("%v takes %d operands, got %d", in.Op, want, len(a))
	}
	switch {
	case in.Op == graph.OpCast:
		return f.cast(a[0], in.DType)
	case in.Op == graph.OpWhere:
		if a[0].k != kPred || a[1].k != a[2].k {
			return val{}, fmt.Errorf("Where(%v, %v, %v): bad operand dtypes", a[0].dt, a[1].dt, a[2].dt)
		}
		r := f.reg(a[1].k.class())
		f.op("selp.%s %s, %s, %s, %s", selType(a[1].k), r, a[1].r, a[2].r, a[0].r)
		return val{r, a[1].k, in.DType}, nil
	case in.Op.IsBinary():
		if a[0].k != a[1].k {
			return val{}, fmt.Errorf("%v of %v and %v", in.Op, a[0].dt, a[1].dt)
		}
		return f.binary(in, a[0], a[1])
	}
	return f.unary(in, a[0])
}

func selType(k kind) string {
	switch k {
	case kS32:
		return "s32"
	case kS64:
		return "s64"
	}
	return "f32"
}

func (f *fn) unary(in Instr, x val) (val, error) {
	res := func(r string) (val, error) { return val{r, x.k, in.DType}, nil }
	if x.k == kPred {
		if in.Op != graph.OpNot {
			return val{}, fmt.Errorf("%v of Bool", in.Op)
		}
		r := f.reg(cPred)
		f.op("not.pred %s, %s", r, x.r)
		return res(r)
	}
	if x.k != kF32 {
		return f.intUnary(in, x)
	}
	simple := map[graph.Op]string{
		graph.OpNeg: "neg.f32", graph.OpAbs: "abs.f32", graph.OpSqrt: "sqrt.rn.f32",
		graph.OpReciprocal: "rcp.rn.f32", graph.OpFloor: "cvt.rmi.f32.f32",
		graph.OpCeil: "cvt.rpi.f32.f32", graph.OpRound: "cvt.rni.f32.f32",
	}
	if ins, ok := simple[in.Op]; ok {
		r := f.reg(cF32)
		f.op("%s %s, %s", ins, r, x.r)
		return res(r)
	}
	switch in.Op {
	case graph.OpExp:
		return res(f.exp(x.r))
	case graph.OpLog:
		return res(f.log(x.r))
	case graph.OpRsqrt:
		s, r := f.reg(cF32), f.reg(cF32)
		f.op("sqrt.rn.f32 %s, %s", s, x.r)
		f.op("rcp.rn.f32 %s, %s", r, s)
		return res(r)
	case graph.OpTanh:
		return res(f.tanh(x.r))
	case graph.OpSigmoid:
		return res(f.sigmoid(x.r))
	case graph.OpRelu, graph.OpLeakyRelu:
		// x < 0 selects, so NaN stays NaN (max would drop it).
		p, r := f.reg(cPred), f.reg(cF32)
		f.op("setp.lt.f32 %s, %s, 0f00000000", p, x.r)
		neg := "0f00000000"
		if in.Op == graph.OpLeakyRelu {
			neg = f.reg(cF32)
			f.op("mul.f32 %s, %s, %s", neg, x.r, fimm(in.Attrs.Alpha))
		}
		f.op("selp.f32 %s, %s, %s, %s", r, neg, x.r, p)
		return res(r)
	case graph.OpGelu:
		return res(f.gelu(x.r))
	case graph.OpGeluTanh:
		return res(f.geluTanh(x.r))
	case graph.OpSilu:
		return res(f.silu(x.r))
	case graph.OpErf:
		return res(f.erf(x.r))
	case graph.OpSin, graph.OpCos:
		return res(f.sinCos(x.r, in.Op == graph.OpCos))
	case graph.OpClip:
		r := f.reg(cF32)
		f.op("max.NaN.f32 %s, %s, %s", r, x.r, fimm(in.Attrs.Min))
		f.op("min.NaN.f32 %s, %s, %s", r, r, fimm(in.Attrs.Max))
		return res(r)
	}
	if r, ok := f.floatAct(in.Op, in.Attrs, x.r); ok {
		return res(r)
	}
	return val{}, fmt.Errorf("no GPU kernel for %v", in.Op)
}

func (f *fn) intUnary(in Instr, x val) (val, error) {
	t := selType(x.k)
	r := f.reg(x.k.class())
	switch in.Op {
	case graph.OpNeg:
		f.op("neg.%s %s, %s", t, r, x.r)
	case graph.OpAbs:
		f.op("abs.%s %s, %s", t, r, x.r)
	case graph.OpRelu:
		f.op("max.%s %s, %s, 0", t, r, x.r)
	case graph.OpSign: // U8 registers hold 0..255: the max is a no-op there
		f.op("max.%s %s, %s, -1", t, r, x.r)
		f.op("min.%s %s, %s, 1", t, r, r)
	case graph.OpClip:
		lo, hi := clampBounds(in.Attrs.Min, in.Attrs.Max, x.k)
		f.op("max.%s %s, %s, %d", t, r, x.r, lo)
		f.op("min.%s %s, %s, %d", t, r, r, hi)
	default:
		return val{}, fmt.Errorf("no GPU kernel for %v on %v", in.Op, x.dt)
	}
	return val{r, x.k, in.DType}, nil
}

// clampBounds converts float Clip bounds to integers, saturating to the
// register's range (±Inf means no bound).
func clampBounds(lo, hi float32, k kind) (int64, int64) {
	minV, maxV := int64(-1<<31), int64(1<<31-1)
	if k == kS64 {
		minV, maxV = -1<<63, 1<<63-1
	}
	conv := func(v float32, def int64) int64 {
		switch {
		case v != v:
			return def
		case float64(v) <= float64(minV):
			return minV
		case float64(v) >= float64(maxV):
			return maxV
		}
		return int64(v)
	}
	return conv(lo, minV), conv(hi, maxV)
}

func (f *fn) binary(in Instr, a, b val) (val, error) {
	if in.Op.IsCompare() {
		cmp := map[graph.Op]string{graph.OpEqual: "eq", graph.OpLess: "lt", graph.OpLessOrEqual: "le",
			graph.OpGreater: "gt", graph.OpGreaterOrEqual: "ge"}[in.Op]
		p := f.reg(cPred)
		if a.k == kPred { // Bool: only Equal, as not(a xor b)
			if in.Op != graph.OpEqual {
				return val{}, fmt.Errorf("%v of Bool", in.Op)
			}
			f.op("xor.pred %s, %s, %s", p, a.r, b.r)
			f.op("not.pred %s, %s", p, p)
			return val{p, kPred, tensor.Bool}, nil
		}
		f.op("setp.%s.%s %s, %s, %s", cmp, selType(a.k), p, a.r, b.r)
		return val{p, kPred, tensor.Bool}, nil
	}
	if a.k == kPred {
		ins := map[graph.Op]string{graph.OpAnd: "and.pred", graph.OpOr: "or.pred", graph.OpXor: "xor.pred"}[in.Op]
		if ins == "" {
			return val{}, fmt.Errorf("%v of Bool", in.Op)
		}
		p := f.reg(cPred)
		f.op("%s %s, %s, %s", ins, p, a.r, b.r)
		return val{p, kPred, tensor.Bool}, nil
	}
	if in.Op == graph.OpPow {
		return f.pow(in, a, b), nil
	}
	if r, ok, err := f.intOnly(in, a, b); ok || err != nil {
		return r, err
	}
	t := selType(a.k)
	var ins string
	switch in.Op {
	case graph.OpAdd:
		ins = "add." + t
	case graph.OpSub:
		ins = "sub." + t
	case graph.OpMul:
		ins = "mul." + t
		if a.k != kF32 {
			ins = "mul.lo." + t
		}
	case graph.OpDiv:
		ins = "div." + t // ints truncate toward zero; x/0 is not trapped
		if a.k == kF32 {
			ins = "div.rn.f32"
		}
	case graph.OpMax:
		ins = "max." + t
		if a.k == kF32 {
			ins = "max.NaN.f32" // NaN propagates, as numpy.maximum
		}
	case graph.OpMin:
		ins = "min." + t
		if a.k == kF32 {
			ins = "min.NaN.f32"
		}
	default:
		return val{}, fmt.Errorf("no GPU kernel for %v", in.Op)
	}
	r := f.reg(a.k.class())
	f.op("%s %s, %s, %s", ins, r, a.r, b.r)
	return val{r, a.k, in.DType}, nil
}

// cast converts between kinds with tensor.Convert's rules: float to int
// truncates and saturates (NaN gives 0), int to int wraps, anything to
// Bool tests for non-zero.
func (f *fn) cast(x val, to tensor.DType) (val, error) {
	k, err := kindOf(to)
	if err != nil {
		return val{}, err
	}
	r := f.reg(k.class())
	switch {
	case k == kPred:
		switch x.k {
		case kPred:
			return val{x.r, k, to}, nil
		case kF32:
			// neu, not ne: PTX's ne is ordered (false for NaN), and
			// NaN casts to true as Go's x != 0 does.
			f.op("setp.neu.f32 %s, %s, 0f00000000", r, x.r)
		default:
			f.op("setp.ne.%s %s, %s, 0", selType(x.k), r, x.r)
		}
	case x.k == kPred:
		one := map[kind]string{kF32: "0f3F800000", kS32: "1", kS64: "1"}[k]
		zero := map[kind]string{kF32: "0f00000000", kS32: "0", kS64: "0"}[k]
		f.op("selp.%s %s, %s, %s, %s", selType(k), r, one, zero, x.r)
	case k == kF32 && x.k == kF32:
		return val{f.roundTo(to, x.r), k, to}, nil
	case k == kF32:
		f.op("cvt.rn.f32.%s %s, %s", selType(x.k), r, x.r)
		r = f.roundTo(to, r)
	case x.k == kF32:
		f.op("cvt.rzi.%s.f32 %s, %s", selType(k), r, x.r) // saturates, NaN → 0
		r = f.narrowSat(to, r)
	case k == kS32 && x.k == kS64:
		f.op("cvt.u32.u64 %s, %s", r, x.r)
		r = f.narrowWrap(to, r)
	case k == kS64 && x.k == kS64:
		return val{x.r, k, to}, nil
	case k == kS64 && x.k == kS32:
		f.op("cvt.s64.s32 %s, %s", r, x.r)
	default: // s32 to s32 (I8/U8/I32 among themselves)
		f.op("mov.b32 %s, %s", r, x.r)
		r = f.narrowWrap(to, r)
	}
	return val{r, k, to}, nil
}

// narrowSat clamps an s32 to I8's or U8's range (float sources saturate).
func (f *fn) narrowSat(to tensor.DType, r string) string {
	var lo, hi int
	switch to {
	case tensor.I8:
		lo, hi = -128, 127
	case tensor.U8:
		lo, hi = 0, 255
	default:
		return r
	}
	o := f.reg(cB32)
	f.op("max.s32 %s, %s, %d", o, r, lo)
	f.op("min.s32 %s, %s, %d", o, o, hi)
	return o
}

// narrowWrap sign- or zero-extends the low byte for I8/U8 (int sources
// wrap), so later ops see the stored value.
func (f *fn) narrowWrap(to tensor.DType, r string) string {
	switch to {
	case tensor.I8:
		o := f.reg(cB32)
		f.op("cvt.s32.s8 %s, %s", o, r)
		return o
	case tensor.U8:
		o := f.reg(cB32)
		f.op("and.b32 %s, %s, 255", o, r)
		return o
	}
	return r
}
