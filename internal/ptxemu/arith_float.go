package ptxemu

import (
	"fmt"
	"math"
)

// Floating-point arithmetic with the ISA's rounding modifiers. f32 and
// f16/bf16 results round once from an exact-or-odd float64 (see
// float.go); f64 results use error-free transformations for the
// directed modes.

var floatTypes = []typ{tF16, tBF16, tF32, tF64}

// floatIn reads a float operand of type t as float64, flushing f32
// subnormals for .ftz.
func floatIn(th *thread, o *operand, t typ, ftz bool) float64 {
	v := th.v(o)
	if t == tF32 {
		x := f32(v)
		if ftz {
			x = ftz32(x)
		}
		return float64(x)
	}
	return fval(v, t)
}

// floatOut rounds x (exact or odd; for f64 already rounded) to type t
// with mode r, applies .sat and .ftz, and encodes it.
func floatOut(x float64, t typ, r rounding, satF, ftz bool) uint64 {
	switch {
	case t == tF32 && (r == rRN || r == rNone):
		x = float64(toF32(x))
	case t != tF64:
		x = roundTo(x, fmtOf(t), r)
	}
	if satF {
		x = sat(x)
	}
	if ftz && t == tF32 {
		x = float64(ftz32(float32(x)))
	}
	switch t {
	case tF64:
		return f64bits(x)
	case tF16, tBF16:
		return halfBits(x, t)
	}
	return f32bits(float32(x))
}

// decFloatArith: add, sub, mul, mad and fma on floats.
func decFloatArith(d *dec) error {
	t, err := d.typ1(floatTypes...)
	if err != nil {
		return err
	}
	in := d.in
	in.t = t
	in.rnd = d.rounding()
	in.ftz, in.sat = d.has("ftz"), d.has("sat")
	relu := d.has("relu")
	fused := d.base == "fma" || d.base == "mad"
	switch {
	case fused && in.rnd == rNone:
		return fmt.Errorf("%s on floats needs a rounding modifier", d.base)
	case (in.ftz || in.sat) && t == tF64:
		return fmt.Errorf(".ftz and .sat do not apply to .f64")
	case (t == tF16 || t == tBF16) && in.rnd != rNone && in.rnd != rRN:
		return fmt.Errorf("%v arithmetic rounds to nearest only", t)
	case relu && (!fused || (t != tF16 && t != tBF16)):
		return fmt.Errorf(".relu applies to fma.rn.f16/.bf16 only")
	case fused && t == tF64 && in.rnd != rRN:
		return fmt.Errorf("fma.f64 supports .rn only")
	}
	n := 2
	if fused {
		n = 3
	}
	st := make([]typ, n)
	for i := range st {
		st[i] = t
	}
	if err := d.operands(t, st...); err != nil {
		return err
	}
	base := d.base
	if t == tF32 && in.rnd != rRZ && in.rnd != rRM && in.rnd != rRP && !in.sat && !in.ftz && !fused {
		// The common case: native float32 arithmetic rounds to nearest.
		switch base {
		case "add":
			in.fn = func(th *thread, in *inst) {
				th.put(&in.op[0], f32bits(float32(f32(th.v(&in.op[1]))+f32(th.v(&in.op[2])))))
			}
		case "sub":
			in.fn = func(th *thread, in *inst) {
				th.put(&in.op[0], f32bits(float32(f32(th.v(&in.op[1]))-f32(th.v(&in.op[2])))))
			}
		default:
			in.fn = func(th *thread, in *inst) {
				th.put(&in.op[0], f32bits(float32(f32(th.v(&in.op[1]))*f32(th.v(&in.op[2])))))
			}
		}
		return nil
	}
	if t == tF32 && fused && in.rnd == rRN && !in.sat && !in.ftz {
		// fma.rn.f32, the GEMM inner loop: the product is exact in f64,
		// the sum rounded to odd, then to f32 once.
		in.fn = func(th *thread, in *inst) {
			a, b, c := float64(f32(th.v(&in.op[1]))), float64(f32(th.v(&in.op[2]))), float64(f32(th.v(&in.op[3])))
			th.put(&in.op[0], f32bits(toF32(odd(twoSum(a*b, c)))))
		}
		return nil
	}
	in.fn = func(th *thread, in *inst) {
		a := floatIn(th, &in.op[1], in.t, in.ftz)
		b := floatIn(th, &in.op[2], in.t, in.ftz)
		var x float64
		switch {
		case in.t == tF64:
			x = f64Arith(base, a, b, th, in)
		case base == "add":
			x = oddAdd(a, b)
		case base == "sub":
			x = oddAdd(a, -b)
		case base == "mul":
			x = oddMul(a, b)
		default:
			x = oddFma(a, b, floatIn(th, &in.op[3], in.t, in.ftz))
		}
		if relu && x < 0 {
			x = 0 // .relu clamps negatives; NaN stays (canonical)
		}
		th.put(&in.op[0], floatOut(x, in.t, in.rnd, in.sat, in.ftz))
	}
	return nil
}

// f64Arith computes an f64 add/sub/mul/fma with the instruction's mode.
func f64Arith(base string, a, b float64, th *thread, in *inst) float64 {
	switch base {
	case "add":
		s, e := twoSum(a, b)
		return directed64(s, e, in.rnd)
	case "sub":
		s, e := twoSum(a, -b)
		return directed64(s, e, in.rnd)
	case "mul":
		p := a * b
		return directed64(p, math.FMA(a, b, -p), in.rnd)
	}
	return math.FMA(a, b, fval(th.v(&in.op[3]), tF64))
}

// decFloatDiv: div.rn/rz/rm/rp (IEEE), div.full (2 ulp) and div.approx.
func decFloatDiv(d *dec) error {
	t, err := d.typ1(tF32, tF64)
	if err != nil {
		return err
	}
	in := d.in
	in.t = t
	in.rnd = d.rounding()
	kind := d.oneOf("approx", "full")
	in.ftz = d.has("ftz")
	switch {
	case kind != "" && t != tF32:
		return fmt.Errorf("div.%s takes .f32", kind)
	case kind == "" && in.rnd == rNone:
		return fmt.Errorf("div on floats needs .approx, .full or a rounding modifier")
	case kind != "" && in.rnd != rNone:
		return fmt.Errorf("div.%s takes no rounding modifier", kind)
	case in.ftz && t == tF64:
		return fmt.Errorf(".ftz does not apply to .f64")
	}
	if err := d.operands(t, t, t); err != nil {
		return err
	}
	if t == tF64 {
		in.fn = func(th *thread, in *inst) {
			a, b := fval(th.v(&in.op[1]), tF64), fval(th.v(&in.op[2]), tF64)
			q := a / b
			if q != 0 && q == q && !math.IsInf(q, 0) {
				q = directed64(q, math.FMA(-q, b, a)/b, in.rnd)
			}
			th.put(&in.op[0], f64bits(q))
		}
		return nil
	}
	switch kind {
	case "":
		in.fn = func(th *thread, in *inst) {
			a, b := floatIn(th, &in.op[1], tF32, in.ftz), floatIn(th, &in.op[2], tF32, in.ftz)
			th.put(&in.op[0], floatOut(oddDiv(a, b), tF32, in.rnd, false, in.ftz))
		}
	case "full":
		in.fn = func(th *thread, in *inst) {
			a, b := floatIn(th, &in.op[1], tF32, in.ftz), floatIn(th, &in.op[2], tF32, in.ftz)
			th.put(&in.op[0], th.approx(float32(roundTo(oddDiv(a, b), f32Fmt, rRN)), ulps(2), a, b, in.ftz))
		}
	default:
		// div.approx computes a·(1/b); for 2^126 < |b| < 2^128 the ISA
		// gives 0 for finite a (the reciprocal underflows).
		in.fn = func(th *thread, in *inst) {
			a, b := floatIn(th, &in.op[1], tF32, in.ftz), floatIn(th, &in.op[2], tF32, in.ftz)
			var y float32
			if ab := math.Abs(b); ab > 0x1p126 && !math.IsInf(ab, 0) && !math.IsInf(a, 0) && a == a {
				y = float32(math.Copysign(0, a*b))
			} else {
				y = float32(roundTo(oddDiv(a, b), f32Fmt, rRN))
			}
			th.put(&in.op[0], th.approx(y, ulps(2), a, b, in.ftz))
		}
	}
	return nil
}

// decFloatAbsNeg: abs/neg change the sign bit only (.ftz flushes f32
// subnormals first).
func decFloatAbsNeg(d *dec) error {
	t, err := d.typ1(floatTypes...)
	if err != nil {
		return err
	}
	d.in.ftz = d.has("ftz")
	if err := d.operands(t, t); err != nil {
		return err
	}
	sign := uint64(1) << uint(t.bits()-1)
	abs := d.base == "abs"
	d.in.fn = func(th *thread, in *inst) {
		v := th.v(&in.op[1])
		if in.ftz && t == tF32 {
			v = uint64(math.Float32bits(ftz32(f32(v))))
		}
		if abs {
			v &^= sign
		} else {
			v ^= sign
		}
		th.put(&in.op[0], v)
	}
	return nil
}

// fminmax is PTX min/max: a NaN operand is ignored (both NaN: NaN)
// unless .NaN, which propagates it; -0 is below +0.
func fminmax(a, b float64, isMax, nanProp bool) float64 {
	an, bn := a != a, b != b
	switch {
	case an && bn, nanProp && (an || bn):
		return math.NaN()
	case an:
		return b
	case bn:
		return a
	case a == b:
		if math.Signbit(a) != math.Signbit(b) {
			return math.Copysign(0, map[bool]float64{true: 1, false: -1}[isMax])
		}
		return a
	case (a < b) == isMax:
		return b
	}
	return a
}

// decFloatMinMax: min/max{.ftz}{.NaN} on floats.
func decFloatMinMax(d *dec) error {
	t, err := d.typ1(floatTypes...)
	if err != nil {
		return err
	}
	in := d.in
	in.t = t
	in.ftz, in.nan = d.has("ftz"), d.has("NaN")
	if in.nan && t == tF64 {
		return fmt.Errorf(".NaN does not apply to .f64")
	}
	if err := d.operands(t, t, t); err != nil {
		return err
	}
	isMax := d.base == "max"
	in.fn = func(th *thread, in *inst) {
		a, b := floatIn(th, &in.op[1], in.t, in.ftz), floatIn(th, &in.op[2], in.t, in.ftz)
		th.put(&in.op[0], floatOut(fminmax(a, b, isMax, in.nan), in.t, rRN, false, false))
	}
	return nil
}

// decCopysign: copysign d, a, b is b with a's sign.
func decCopysign(d *dec) error {
	t, err := d.typ1(tF32, tF64)
	if err != nil {
		return err
	}
	if err := d.operands(t, t, t); err != nil {
		return err
	}
	sign := uint64(1) << uint(t.bits()-1)
	d.in.fn = func(th *thread, in *inst) {
		th.put(&in.op[0], th.v(&in.op[2])&^sign|th.v(&in.op[1])&sign)
	}
	return nil
}

// decTestp: testp.op.type p, a.
func decTestp(d *dec) error {
	t, err := d.typ1(tF32, tF64)
	if err != nil {
		return err
	}
	op := d.oneOf("finite", "infinite", "number", "notanumber", "normal", "subnormal")
	if op == "" {
		return fmt.Errorf("testp needs an operation")
	}
	if err := d.operands(tPred, t); err != nil {
		return err
	}
	minNormal := 0x1p-126
	if t == tF64 {
		minNormal = 0x1p-1022
	}
	d.in.fn = func(th *thread, in *inst) {
		x := fval(th.v(&in.op[1]), t)
		ax := math.Abs(x)
		var r bool
		switch op {
		case "finite":
			r = !math.IsInf(x, 0) && x == x
		case "infinite":
			r = math.IsInf(x, 0)
		case "number":
			r = x == x
		case "notanumber":
			r = x != x
		case "normal":
			r = ax >= minNormal && !math.IsInf(x, 0)
		default:
			r = ax > 0 && ax < minNormal
		}
		th.put(&in.op[0], b2u(r))
	}
	return nil
}
