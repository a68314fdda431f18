package ptxemu

import (
	"fmt"
	"math"
	"math/bits"
)

// Integer arithmetic. Values live in registers as their low bits; each
// instruction reads its operands at the instruction type's width and
// writes a result of that width (twice it for .wide).

var intTypes = []typ{tU16, tU32, tU64, tS16, tS32, tS64}

// decAddSub: add/sub for integers and floats.
func decAddSub(d *dec) error {
	if len(d.types) == 1 && d.types[0].isFloat() {
		return decFloatArith(d)
	}
	t, err := d.typ1(intTypes...)
	if err != nil {
		return err
	}
	satS32 := d.has("sat")
	if satS32 && t != tS32 {
		return fmt.Errorf(".sat applies to .s32 only")
	}
	if err := d.operands(t, t, t); err != nil {
		return err
	}
	m := mask(t.bits())
	neg := d.base == "sub"
	switch {
	case satS32:
		d.in.fn = func(th *thread, in *inst) {
			a, b := int64(int32(th.v(&in.op[1]))), int64(int32(th.v(&in.op[2])))
			if neg {
				b = -b
			}
			th.put(&in.op[0], uint64(clampI(a+b, math.MinInt32, math.MaxInt32))&m)
		}
	case neg:
		d.in.fn = func(th *thread, in *inst) { th.put(&in.op[0], (th.v(&in.op[1])-th.v(&in.op[2]))&m) }
	default:
		d.in.fn = func(th *thread, in *inst) { th.put(&in.op[0], (th.v(&in.op[1])+th.v(&in.op[2]))&m) }
	}
	return nil
}

func clampI(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// mulParts returns the 2w-bit product of a and b (w-bit values of
// signedness s) as hi, lo 64-bit halves of a 128-bit two's-complement
// number.
func mulParts(a, b uint64, w int, s bool) (hi, lo uint64) {
	if s {
		x, y := sext(a, w), sext(b, w)
		hi, lo = bits.Mul64(uint64(x), uint64(y))
		// Signed correction of the unsigned 128-bit product.
		if x < 0 {
			hi -= uint64(y)
		}
		if y < 0 {
			hi -= uint64(x)
		}
		return hi, lo
	}
	return bits.Mul64(a&mask(w), b&mask(w))
}

// mulSel picks the .lo, .hi or .wide part of a w-bit product.
func mulSel(a, b uint64, w int, s bool, mode string) uint64 {
	hi, lo := mulParts(a, b, w, s)
	switch mode {
	case "hi":
		if w == 64 {
			return hi
		}
		return (lo >> uint(w)) & mask(w)
	case "wide":
		return lo & mask(2*w)
	}
	return lo & mask(w)
}

// decMulMad: mul and mad for integers and floats.
func decMulMad(d *dec) error {
	if len(d.types) == 1 && d.types[0].isFloat() {
		return decFloatArith(d)
	}
	t, err := d.typ1(intTypes...)
	if err != nil {
		return err
	}
	mode := d.oneOf("lo", "hi", "wide")
	if mode == "" {
		mode = "lo"
	}
	wt := t
	if mode == "wide" {
		if t.bits() == 64 {
			return fmt.Errorf(".wide needs a 16- or 32-bit type")
		}
		wt = map[typ]typ{tU16: tU32, tU32: tU64, tS16: tS32, tS32: tS64}[t]
	}
	w, s := t.bits(), t.signed()
	m := mask(wt.bits())
	if d.base == "mul" {
		if err := d.operands(wt, t, t); err != nil {
			return err
		}
		d.in.fn = func(th *thread, in *inst) {
			th.put(&in.op[0], mulSel(th.v(&in.op[1]), th.v(&in.op[2]), w, s, mode))
		}
		return nil
	}
	if d.has("sat") {
		return fmt.Errorf("mad.sat is not supported")
	}
	if err := d.operands(wt, t, t, wt); err != nil {
		return err
	}
	d.in.fn = func(th *thread, in *inst) {
		p := mulSel(th.v(&in.op[1]), th.v(&in.op[2]), w, s, mode)
		th.put(&in.op[0], (p+th.v(&in.op[3]))&m)
	}
	return nil
}

// decDivRem: integer division truncates toward zero. Division by zero is
// unspecified in the ISA; the emulator returns all ones for div and the
// dividend for rem.
func decDivRem(d *dec) error {
	if len(d.types) == 1 && d.types[0].isFloat() {
		if d.base == "rem" {
			return fmt.Errorf("rem takes integer types")
		}
		return decFloatDiv(d)
	}
	t, err := d.typ1(intTypes...)
	if err != nil {
		return err
	}
	if err := d.operands(t, t, t); err != nil {
		return err
	}
	w, s, m := t.bits(), t.signed(), mask(t.bits())
	rem := d.base == "rem"
	d.in.fn = func(th *thread, in *inst) {
		a, b := th.v(&in.op[1])&m, th.v(&in.op[2])&m
		var r uint64
		switch {
		case b == 0 && rem:
			r = a
		case b == 0:
			r = m
		case s:
			x, y := sext(a, w), sext(b, w)
			if rem {
				r = uint64(x % y)
			} else {
				r = uint64(x / y)
			}
		case rem:
			r = a % b
		default:
			r = a / b
		}
		th.put(&in.op[0], r&m)
	}
	return nil
}

// decAbsNeg: integer abs/neg wrap (abs of the minimum is itself).
func decAbsNeg(d *dec) error {
	if len(d.types) == 1 && d.types[0].isFloat() {
		return decFloatAbsNeg(d)
	}
	t, err := d.typ1(tS16, tS32, tS64)
	if err != nil {
		return err
	}
	if err := d.operands(t, t); err != nil {
		return err
	}
	w, m := t.bits(), mask(t.bits())
	abs := d.base == "abs"
	d.in.fn = func(th *thread, in *inst) {
		x := sext(th.v(&in.op[1]), w)
		if !abs || x < 0 {
			x = -x
		}
		th.put(&in.op[0], uint64(x)&m)
	}
	return nil
}

// decMinMax: integer min/max (signed or unsigned by type; .relu clamps a
// signed result at zero).
func decMinMax(d *dec) error {
	if len(d.types) == 1 && d.types[0].isFloat() {
		return decFloatMinMax(d)
	}
	t, err := d.typ1(intTypes...)
	if err != nil {
		return err
	}
	relu := d.has("relu")
	if relu && t != tS32 {
		return fmt.Errorf(".relu applies to .s32 only")
	}
	if err := d.operands(t, t, t); err != nil {
		return err
	}
	w, s, m := t.bits(), t.signed(), mask(t.bits())
	isMax := d.base == "max"
	d.in.fn = func(th *thread, in *inst) {
		a, b := th.v(&in.op[1])&m, th.v(&in.op[2])&m
		var less bool // a < b
		if s {
			less = sext(a, w) < sext(b, w)
		} else {
			less = a < b
		}
		r := a
		if less == isMax {
			r = b
		}
		if relu && sext(r, w) < 0 {
			r = 0
		}
		th.put(&in.op[0], r)
	}
	return nil
}

// decShift: shl/shr. Amounts past the width clamp to it: shl and
// unsigned shr give 0, shr.s fills with the sign.
func decShift(d *dec) error {
	t, err := d.typ1(tB16, tB32, tB64, tU16, tU32, tU64, tS16, tS32, tS64)
	if err != nil {
		return err
	}
	if d.base == "shl" && t.signed() {
		return fmt.Errorf("shl takes .b types")
	}
	if err := d.operands(t, t, tU32); err != nil {
		return err
	}
	w, m := t.bits(), mask(t.bits())
	switch {
	case d.base == "shl":
		d.in.fn = func(th *thread, in *inst) {
			n := uint32(th.v(&in.op[2]))
			th.put(&in.op[0], (th.v(&in.op[1])<<min(n, 64))&m)
		}
	case t.signed():
		d.in.fn = func(th *thread, in *inst) {
			n := min(uint32(th.v(&in.op[2])), uint32(w-1))
			th.put(&in.op[0], uint64(sext(th.v(&in.op[1]), w)>>n)&m)
		}
	default:
		d.in.fn = func(th *thread, in *inst) {
			n := uint32(th.v(&in.op[2]))
			th.put(&in.op[0], ((th.v(&in.op[1])&m)>>min(n, 64))&m)
		}
	}
	return nil
}

// decLogic: and/or/xor/not/cnot on bit types and predicates.
func decLogic(d *dec) error {
	t, err := d.typ1(tB16, tB32, tB64, tPred)
	if err != nil {
		return err
	}
	unary := d.base == "not" || d.base == "cnot"
	if unary {
		err = d.operands(t, t)
	} else {
		err = d.operands(t, t, t)
	}
	if err != nil {
		return err
	}
	m := mask(t.bits())
	if t == tPred {
		if d.base == "cnot" {
			return fmt.Errorf("cnot takes .b types")
		}
		op := d.base
		d.in.fn = func(th *thread, in *inst) {
			a := th.p(&in.op[1])
			var r bool
			switch op {
			case "not":
				r = !a
			case "and":
				r = a && th.p(&in.op[2])
			case "or":
				r = a || th.p(&in.op[2])
			default:
				r = a != th.p(&in.op[2])
			}
			th.put(&in.op[0], b2u(r))
		}
		return nil
	}
	switch d.base {
	case "not":
		d.in.fn = func(th *thread, in *inst) { th.put(&in.op[0], ^th.v(&in.op[1])&m) }
	case "cnot":
		d.in.fn = func(th *thread, in *inst) { th.put(&in.op[0], b2u(th.v(&in.op[1])&m == 0)) }
	case "and":
		d.in.fn = func(th *thread, in *inst) { th.put(&in.op[0], th.v(&in.op[1])&th.v(&in.op[2])&m) }
	case "or":
		d.in.fn = func(th *thread, in *inst) { th.put(&in.op[0], (th.v(&in.op[1])|th.v(&in.op[2]))&m) }
	case "xor":
		d.in.fn = func(th *thread, in *inst) { th.put(&in.op[0], (th.v(&in.op[1])^th.v(&in.op[2]))&m) }
	}
	return nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// decBitCount: popc and clz (u32 result), brev (same type).
func decBitCount(d *dec) error {
	t, err := d.typ1(tB32, tB64)
	if err != nil {
		return err
	}
	w := t.bits()
	if d.base == "brev" {
		if err := d.operands(t, t); err != nil {
			return err
		}
		d.in.fn = func(th *thread, in *inst) {
			th.put(&in.op[0], bits.Reverse64(th.v(&in.op[1]))>>uint(64-w))
		}
		return nil
	}
	if err := d.operands(tU32, t); err != nil {
		return err
	}
	clz := d.base == "clz"
	d.in.fn = func(th *thread, in *inst) {
		v := th.v(&in.op[1]) & mask(w)
		if clz {
			th.put(&in.op[0], uint64(bits.LeadingZeros64(v)-(64-w)))
		} else {
			th.put(&in.op[0], uint64(bits.OnesCount64(v)))
		}
	}
	return nil
}
