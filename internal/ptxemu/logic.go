package ptxemu

import (
	"fmt"
	"strings"
)

var movTypes = []typ{tB16, tB32, tB64, tU16, tU32, tU64, tS16, tS32, tS64, tF32, tF64, tPred}

// decMov: register, immediate, special register or symbol address; a
// vector source packs registers (element 0 lowest), a vector destination
// unpacks.
func decMov(d *dec) error {
	t, err := d.typ1(movTypes...)
	if err != nil {
		return err
	}
	if err := d.nops(2); err != nil {
		return err
	}
	in := d.in
	in.t = t
	dst, err := d.k.parseOperand(d.raw[0])
	if err != nil {
		return err
	}
	src, err := d.k.parseOperand(d.raw[1])
	if err != nil {
		return err
	}
	switch {
	case dst.kind == okVec && src.kind == okVec:
		return fmt.Errorf("mov between two vectors")
	case dst.kind == okVec || src.kind == okVec:
		return d.movPack(dst, src)
	}
	if dst, err = d.dst(0, t); err != nil {
		return err
	}
	if src, err = d.src(1, t); err != nil {
		return err
	}
	in.op = []operand{dst, src}
	m := mask(t.bits())
	in.fn = func(th *thread, in *inst) { th.put(&in.op[0], th.v(&in.op[1])&m) }
	return nil
}

// movPack handles mov.b32 d, {a, b} and mov.b32 {a, b}, s (and b64).
func (d *dec) movPack(dst, src operand) error {
	in := d.in
	vec := dst
	if src.kind == okVec {
		vec = src
	}
	n := len(vec.vec)
	if !(in.t == tB32 || in.t == tB64) || (n != 2 && n != 4) || in.t.bits()/n < 8 {
		return fmt.Errorf("vector mov needs .b32 or .b64 and 2 or 4 elements")
	}
	w := in.t.bits() / n
	for _, r := range vec.vec {
		if r >= 0 {
			if err := d.checkReg(r, map[int]typ{8: tB8, 16: tB16, 32: tB32}[w]); err != nil {
				return err
			}
		}
	}
	if src.kind == okVec {
		o, err := d.dst(0, in.t)
		if err != nil {
			return err
		}
		in.op = []operand{o, src}
		in.fn = func(th *thread, in *inst) {
			var v uint64
			for i, r := range in.op[1].vec {
				if r < 0 {
					th.fail("a sink cannot be a mov source")
				}
				v |= (th.r(r) & mask(w)) << uint(i*w)
			}
			th.put(&in.op[0], v)
		}
		return nil
	}
	s, err := d.src(1, in.t)
	if err != nil {
		return err
	}
	in.op = []operand{dst, s}
	in.fn = func(th *thread, in *inst) {
		v := th.v(&in.op[1])
		for i, r := range in.op[0].vec {
			if r >= 0 {
				th.set(r, (v>>uint(i*w))&mask(w))
			}
		}
	}
	return nil
}

// decSetp: setp.CmpOp{.BoolOp}{.ftz}.type p[|q], a, b{, {!}c}.
func decSetp(d *dec) error {
	t, err := d.typ1(tB16, tB32, tB64, tU16, tU32, tU64, tS16, tS32, tS64, tF16, tBF16, tF32, tF64)
	if err != nil {
		return err
	}
	in := d.in
	in.t = t
	cmpName := ""
	for n := range cmpNames {
		if d.has(n) {
			cmpName = n
			break
		}
	}
	if cmpName == "" {
		return fmt.Errorf("setp needs a comparison")
	}
	in.cmp = cmpNames[cmpName]
	switch d.oneOf("and", "or", "xor") {
	case "and":
		in.bop = 1
	case "or":
		in.bop = 2
	case "xor":
		in.bop = 3
	}
	in.ftz = d.has("ftz")
	isF := t.isFloat()
	switch {
	case !isF && in.cmp >= cEqu:
		return fmt.Errorf("setp.%s needs a float type", cmpName)
	case isF && in.cmp >= cLo && in.cmp <= cHs:
		return fmt.Errorf("setp.%s needs an integer type", cmpName)
	case !isF && in.ftz:
		return fmt.Errorf(".ftz needs a float type")
	}
	want := 3
	if in.bop != 0 {
		want = 4
	}
	if err := d.nops(want); err != nil {
		return err
	}
	// p|q: the second destination gets the complement.
	ps := strings.SplitN(d.raw[0], "|", 2)
	d.raw[0] = strings.TrimSpace(ps[0])
	p, err := d.dst(0, tPred)
	if err != nil {
		return err
	}
	q := operand{kind: okNone, reg: -1}
	if len(ps) == 2 {
		d.raw[0] = strings.TrimSpace(ps[1])
		if q, err = d.dst(0, tPred); err != nil {
			return err
		}
	}
	in.op = []operand{p, q}
	for i, st := range []typ{t, t, tPred}[:want-1] {
		o, err := d.src(i+1, st)
		if err != nil {
			return err
		}
		in.op = append(in.op, o)
	}
	in.fn = execSetp
	return nil
}

func execSetp(th *thread, in *inst) {
	r := compare(th, in, th.v(&in.op[2]), th.v(&in.op[3]))
	p, q := r, !r
	if in.bop != 0 {
		c := th.p(&in.op[4])
		switch in.bop {
		case 1:
			p, q = p && c, q && c
		case 2:
			p, q = p || c, q || c
		default:
			p, q = p != c, q != c
		}
	}
	th.put(&in.op[0], b2u(p))
	th.put(&in.op[1], b2u(q))
}

// compare evaluates a setp comparison of a and b (bits of type in.t).
func compare(th *thread, in *inst, a, b uint64) bool {
	t := in.t
	if t.isFloat() {
		x, y := fval(a, t), fval(b, t)
		if in.ftz && t == tF32 {
			x, y = float64(ftz32(float32(x))), float64(ftz32(float32(y)))
		}
		nan := x != x || y != y
		switch in.cmp {
		case cEq:
			return x == y
		case cNe:
			return !nan && x != y // ordered: false when either is NaN
		case cLt:
			return x < y
		case cLe:
			return x <= y
		case cGt:
			return x > y
		case cGe:
			return x >= y
		case cEqu:
			return nan || x == y
		case cNeu:
			return x != y
		case cLtu:
			return nan || x < y
		case cLeu:
			return nan || x <= y
		case cGtu:
			return nan || x > y
		case cGeu:
			return nan || x >= y
		case cNum:
			return !nan
		}
		return nan // cNan
	}
	w := t.bits()
	if t.signed() && in.cmp <= cGe {
		x, y := sext(a, w), sext(b, w)
		switch in.cmp {
		case cEq:
			return x == y
		case cNe:
			return x != y
		case cLt:
			return x < y
		case cLe:
			return x <= y
		case cGt:
			return x > y
		}
		return x >= y
	}
	x, y := a&mask(w), b&mask(w)
	switch in.cmp {
	case cEq:
		return x == y
	case cNe:
		return x != y
	case cLt, cLo:
		return x < y
	case cLe, cLs:
		return x <= y
	case cGt, cHi:
		return x > y
	}
	return x >= y
}

// decSelp: selp.type d, a, b, c is c ? a : b.
func decSelp(d *dec) error {
	t, err := d.typ1(tB16, tB32, tB64, tU16, tU32, tU64, tS16, tS32, tS64, tF32, tF64)
	if err != nil {
		return err
	}
	if err := d.operands(t, t, t, tPred); err != nil {
		return err
	}
	d.in.fn = func(th *thread, in *inst) {
		if th.p(&in.op[3]) {
			th.put(&in.op[0], th.v(&in.op[1]))
		} else {
			th.put(&in.op[0], th.v(&in.op[2]))
		}
	}
	return nil
}

// arithDecoders are the decoders of computation instructions.
var arithDecoders = map[string]func(*dec) error{
	"add": decAddSub, "sub": decAddSub, "mul": decMulMad, "mad": decMulMad, "fma": decFloatArith,
	"div": decDivRem, "rem": decDivRem, "abs": decAbsNeg, "neg": decAbsNeg,
	"min": decMinMax, "max": decMinMax, "shl": decShift, "shr": decShift,
	"and": decLogic, "or": decLogic, "xor": decLogic, "not": decLogic, "cnot": decLogic,
	"popc": decBitCount, "clz": decBitCount, "brev": decBitCount,
	"ex2": decApprox, "lg2": decApprox, "rsqrt": decApprox, "sqrt": decApprox, "rcp": decApprox,
	"sin": decApprox, "cos": decApprox, "tanh": decApprox,
	"copysign": decCopysign, "testp": decTestp, "cvt": decCvt, "mov": decMov,
	"setp": decSetp, "selp": decSelp,
}
