package ptxemu

import (
	"fmt"
	"math"
	"math/bits"
)

// cvt: every conversion between integer and float types, with the ISA's
// rules: float-to-integer needs an integer rounding (.rni/.rzi/.rmi/.rpi)
// and saturates (NaN gives 0); integer-to-float and narrowing
// float-to-float need a float rounding; widening is exact; .sat clamps a
// float result to [0, 1] and an integer one to the destination range;
// .relu clamps negative f16/bf16 results to 0.
func decCvt(d *dec) error {
	if len(d.types) != 2 {
		return fmt.Errorf("cvt needs a destination and a source type")
	}
	dt, st := d.types[0], d.types[1]
	in := d.in
	in.t, in.t2 = dt, st
	in.ftz, in.sat = d.has("ftz"), d.has("sat")
	relu := d.has("relu")
	irnd := d.oneOf("rni", "rzi", "rmi", "rpi")
	frnd := d.rounding()
	if d.has("rna") {
		frnd = rRNA
	}
	rnd := map[string]rounding{"rni": rRN, "rzi": rRZ, "rmi": rRM, "rpi": rRP}[irnd]
	if irnd == "" {
		rnd = frnd
	}
	in.rnd = rnd
	if dt == tPred || st == tPred || st == tF16x2 || st == tBF16x2 || st == tTF32 {
		return fmt.Errorf("cvt%v%v is not supported", dt, st)
	}
	if dt == tF16x2 || dt == tBF16x2 {
		return decCvtPack(d, frnd, relu)
	}
	if relu && dt != tF16 && dt != tBF16 {
		return fmt.Errorf(".relu applies to f16 and bf16 destinations")
	}
	if err := d.operands(dt, st); err != nil {
		return err
	}
	switch {
	case dt.isInt() && st.isInt():
		if irnd != "" || frnd != rNone || in.ftz {
			return fmt.Errorf("integer conversions take no rounding")
		}
		in.fn = cvtIntInt
	case dt.isInt():
		if irnd == "" {
			return fmt.Errorf("float-to-integer cvt needs .rni, .rzi, .rmi or .rpi")
		}
		in.fn = cvtFloatInt
	case st.isInt():
		if frnd == rNone || irnd != "" {
			return fmt.Errorf("integer-to-float cvt needs .rn, .rz, .rm or .rp")
		}
		in.fn = cvtIntFloat
	default:
		narrow := dt.bits() < st.bits() || (dt == tBF16 && st == tF16) || (dt == tF16 && st == tBF16) || dt == tTF32
		switch {
		case narrow && frnd == rNone:
			return fmt.Errorf("narrowing cvt%v%v needs .rn, .rz, .rm or .rp", dt, st)
		case !narrow && frnd != rNone:
			return fmt.Errorf("widening cvt%v%v takes no float rounding", dt, st)
		case irnd != "" && dt != st:
			return fmt.Errorf("integer rounding .%s needs equal float types", irnd)
		case dt == tTF32 && frnd != rRNA:
			return fmt.Errorf("cvt.tf32.f32 needs .rna")
		}
		in.fn = func(th *thread, in *inst) { cvtFloatFloat(th, in, irnd != "", relu) }
	}
	return nil
}

// cvtIntInt sign- or zero-extends the source, then truncates (or with
// .sat clamps) to the destination.
func cvtIntInt(th *thread, in *inst) {
	v := extend(th.v(&in.op[1]), in.t2)
	if in.sat {
		v = satInt(v, in.t2.signed(), in.t)
	}
	th.put(&in.op[0], extend(v, in.t)) // a wider register gets the value extended by the destination type
}

// satInt clamps v (signed or unsigned 64-bit) to the range of type t.
func satInt(v uint64, signed bool, t typ) uint64 {
	w := t.bits()
	if signed {
		x := int64(v)
		if t.signed() {
			return uint64(clampI(x, sext(1<<uint(w-1), w), int64(mask(w-1))))
		}
		if x < 0 {
			return 0
		}
	}
	if t.signed() {
		return min(v, mask(w-1))
	}
	return min(v, mask(w))
}

// cvtFloatInt rounds to an integer and saturates; NaN gives 0.
func cvtFloatInt(th *thread, in *inst) {
	x := floatIn(th, &in.op[1], in.t2, in.ftz)
	w := in.t.bits()
	var r uint64
	if x == x {
		switch in.rnd {
		case rRZ:
			x = math.Trunc(x)
		case rRM:
			x = math.Floor(x)
		case rRP:
			x = math.Ceil(x)
		default:
			x = math.RoundToEven(x)
		}
		if in.t.signed() {
			lo, hi := -math.Ldexp(1, w-1), math.Ldexp(1, w-1) // hi is excluded
			switch {
			case x <= lo:
				r = uint64(sext(1<<uint(w-1), w))
			case x >= hi:
				r = mask(w - 1)
			default:
				r = uint64(int64(x))
			}
		} else {
			hi := math.Ldexp(1, w)
			switch {
			case x <= 0:
				r = 0
			case x >= hi:
				r = mask(w)
			case x >= 0x1p63:
				r = uint64(x-0x1p63) + 1<<63
			default:
				r = uint64(x)
			}
		}
	}
	th.put(&in.op[0], extend(r, in.t))
}

// cvtIntFloat rounds an integer to a float once.
func cvtIntFloat(th *thread, in *inst) {
	v := extend(th.v(&in.op[1]), in.t2)
	neg := in.t2.signed() && int64(v) < 0
	u := v
	if neg {
		u = -v
	}
	// u as float64: exact below 2^53, else rounded to odd.
	var x float64
	if u < 1<<53 {
		x = float64(u)
	} else {
		shift := bits.Len64(u) - 53
		kept := u >> uint(shift)
		if u&(1<<uint(shift)-1) != 0 {
			kept |= 1
		}
		x = math.Ldexp(float64(kept), shift)
	}
	if neg {
		x = -x
	}
	var out uint64
	if in.t == tF64 {
		if u >= 1<<53 {
			x = roundU64(u, neg, in.rnd)
		}
		if in.sat {
			x = sat(x)
		}
		out = f64bits(x)
	} else {
		out = floatOut(x, in.t, in.rnd, in.sat, false)
	}
	th.put(&in.op[0], out)
}

// roundU64 rounds the magnitude u (≥ 2^53) of an integer to float64 with
// mode r and applies the sign.
func roundU64(u uint64, neg bool, r rounding) float64 {
	shift := bits.Len64(u) - 53
	kept, rem := u>>uint(shift), u&(1<<uint(shift)-1)
	half := uint64(1) << uint(shift-1)
	up := false
	switch r {
	case rRZ:
	case rRM:
		up = neg && rem != 0
	case rRP:
		up = !neg && rem != 0
	default:
		up = rem > half || (rem == half && kept&1 == 1)
	}
	if up {
		kept++
	}
	x := math.Ldexp(float64(kept), shift)
	if neg {
		x = -x
	}
	return x
}

// cvtFloatFloat widens exactly, narrows with the rounding mode, or with
// an integer rounding rounds to an integral value of the same type.
func cvtFloatFloat(th *thread, in *inst, integral, relu bool) {
	x := floatIn(th, &in.op[1], in.t2, in.ftz)
	if integral {
		switch in.rnd {
		case rRZ:
			x = math.Trunc(x)
		case rRM:
			x = math.Floor(x)
		case rRP:
			x = math.Ceil(x)
		default:
			x = math.RoundToEven(x)
		}
	}
	if relu && x < 0 {
		x = 0
	}
	if in.t == tF64 {
		if in.sat {
			x = sat(x)
		}
		th.put(&in.op[0], f64bits(x))
		return
	}
	r := in.rnd
	if integral {
		r = rRN // already an integer: exact unless it overflows the format
	}
	th.put(&in.op[0], floatOut(x, in.t, r, in.sat, in.ftz))
}

// decCvtPack: cvt.rn{.relu}.f16x2.f32 / .bf16x2.f32 d, a, b puts a's
// conversion in the upper half and b's in the lower.
func decCvtPack(d *dec, r rounding, relu bool) error {
	in := d.in
	if in.t2 != tF32 || r == rNone || r == rRNA {
		return fmt.Errorf("cvt%v needs .f32 sources and .rn, .rz, .rm or .rp", in.t)
	}
	if err := d.operands(tB32, tF32, tF32); err != nil {
		return err
	}
	half := tF16
	if in.t == tBF16x2 {
		half = tBF16
	}
	in.fn = func(th *thread, in *inst) {
		conv := func(o *operand) uint64 {
			x := floatIn(th, o, tF32, false)
			if relu && x < 0 {
				x = 0
			}
			return floatOut(x, half, r, in.sat, false)
		}
		th.put(&in.op[0], conv(&in.op[1])<<16|conv(&in.op[2]))
	}
	return nil
}
