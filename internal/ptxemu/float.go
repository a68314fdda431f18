package ptxemu

import (
	"math"

	"github.com/kilnml/kiln/tensor"
)

// Correct rounding to the PTX float formats. Results are first computed
// as a float64 that is either exact or the exact value rounded to odd
// (truncated to 53 bits with the last bit set when anything was
// dropped); rounding that once more to a format of at most 51 bits, in
// any mode, equals rounding the exact value directly (Boldo and
// Melquiond). f32 fma, f16/bf16 arithmetic and directed roundings all go
// through it.

// ffmt is a binary floating-point format: p significand bits (with the
// hidden one), emin the exponent of the smallest normal, emax the largest.
type ffmt struct{ p, emin, emax int }

var (
	f16Fmt  = ffmt{11, -14, 15}
	bf16Fmt = ffmt{8, -126, 127}
	tf32Fmt = ffmt{11, -126, 127}
	f32Fmt  = ffmt{24, -126, 127}
)

// maxFinite is the format's largest finite value.
func (f ffmt) maxFinite() float64 {
	return (2 - math.Ldexp(1, 1-f.p)) * math.Ldexp(1, f.emax)
}

// roundTo rounds x to format f with mode r (rNone is rRN). x must be exact
// or rounded to odd.
func roundTo(x float64, f ffmt, r rounding) float64 {
	if x != x || x == 0 || math.IsInf(x, 0) {
		return x
	}
	_, e := math.Frexp(x) // |x| = m·2^e, m in [0.5, 1)
	q := max(e-1, f.emin) - (f.p - 1)
	n := math.Ldexp(x, -q)
	switch r {
	case rRZ:
		n = math.Trunc(n)
	case rRM:
		n = math.Floor(n)
	case rRP:
		n = math.Ceil(n)
	case rRNA:
		n = math.Round(n)
	default:
		n = math.RoundToEven(n)
	}
	y := math.Ldexp(n, q)
	if m := f.maxFinite(); math.Abs(y) > m {
		pos := x > 0
		switch {
		case r == rRZ, r == rRM && pos, r == rRP && !pos:
			y = math.Copysign(m, x)
		default:
			y = math.Copysign(math.Inf(1), x)
		}
	}
	return y
}

// toF32 rounds x (exact or odd) to the nearest f32, ties to even, with
// overflow to ±Inf spelled out (Go leaves out-of-range conversions to
// the platform).
func toF32(x float64) float32 {
	if math.Abs(x) <= math.MaxFloat32 || x != x {
		return float32(x)
	}
	return float32(roundTo(x, f32Fmt, rRN))
}

// odd turns an exact result hi+lo (hi = hi+lo rounded to nearest) into
// its round-to-odd float64.
func odd(hi, lo float64) float64 {
	if lo == 0 || lo != lo || math.IsInf(hi, 0) {
		return hi
	}
	b := math.Float64bits(hi)
	if b&1 == 1 {
		return hi
	}
	if (lo > 0) == (hi > 0) {
		b++ // the exact value is farther from zero
	} else {
		b--
	}
	return math.Float64frombits(b)
}

// twoSum returns s = a+b rounded and the exact error.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// Exact-or-odd float64 forms of the basic operations on narrower inputs.
func oddAdd(a, b float64) float64    { return odd(twoSum(a, b)) }
func oddMul(a, b float64) float64    { return odd(a*b, math.FMA(a, b, -(a*b))) }
func oddFma(a, b, c float64) float64 { return odd(twoSum(a*b, c)) } // a·b exact for ≤26-bit inputs

func oddDiv(a, b float64) float64 {
	q := a / b
	if q == 0 || q != q || math.IsInf(q, 0) {
		return q
	}
	r := math.FMA(-q, b, a) // exact remainder
	return odd(q, r/b)
}

func oddSqrt(a float64) float64 {
	s := math.Sqrt(a)
	if s == 0 || s != s || math.IsInf(s, 0) {
		return s
	}
	return odd(s, math.FMA(-s, s, a))
}

// directed64 rounds an exact hi+lo to float64 with mode r.
func directed64(hi, lo float64, r rounding) float64 {
	if lo == 0 || lo != lo || r == rRN || r == rNone {
		return hi
	}
	switch r {
	case rRZ:
		if (lo > 0) != (hi > 0) {
			return math.Nextafter(hi, 0)
		}
	case rRM:
		if lo < 0 {
			return math.Nextafter(hi, math.Inf(-1))
		}
	case rRP:
		if lo > 0 {
			return math.Nextafter(hi, math.Inf(1))
		}
	}
	return hi
}

// Canonical NaNs of PTX results.
const (
	nanF32 = 0x7FFFFFFF
	nanF16 = 0x7FFF
	nanF64 = 0x7FFFFFFFFFFFFFFF
)

// f32 helpers: bits in, bits out.
func f32(v uint64) float32 { return math.Float32frombits(uint32(v)) }

// f32bits encodes a result, canonicalising NaN.
func f32bits(x float32) uint64 {
	if x != x {
		return nanF32
	}
	return uint64(math.Float32bits(x))
}

func f64bits(x float64) uint64 {
	if x != x {
		return nanF64
	}
	return math.Float64bits(x)
}

// ftz32 flushes an f32 subnormal to zero, keeping the sign.
func ftz32(x float32) float32 {
	if x != 0 && math.Abs(float64(x)) < 0x1p-126 {
		return float32(math.Copysign(0, float64(x)))
	}
	return x
}

// sat clamps to [0, 1]; NaN gives +0.
func sat(x float64) float64 {
	switch {
	case x != x || x <= 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}

// half decodes an f16 or bf16 value exactly.
func half(v uint64, t typ) float64 {
	if t == tBF16 {
		return float64(tensor.BF16ToF32(uint16(v)))
	}
	return float64(tensor.F16ToF32(uint16(v)))
}

// halfBits encodes an exactly representable f16/bf16 value (NaN
// canonical).
func halfBits(x float64, t typ) uint64 {
	if x != x {
		return nanF16
	}
	if t == tBF16 {
		return uint64(math.Float32bits(float32(x)) >> 16)
	}
	return uint64(tensor.F32ToF16(float32(x)))
}

// fmtOf is the format of a float type narrower than f64.
func fmtOf(t typ) ffmt {
	switch t {
	case tF16:
		return f16Fmt
	case tBF16:
		return bf16Fmt
	case tTF32:
		return tf32Fmt
	}
	return f32Fmt
}

// fval decodes float bits of type t into float64 (exactly).
func fval(v uint64, t typ) float64 {
	switch t {
	case tF16, tBF16:
		return half(v, t)
	case tF32, tTF32:
		return float64(f32(v))
	}
	return math.Float64frombits(v)
}

// fbits rounds x (exact or odd) to type t with mode r and encodes it.
func fbits(x float64, t typ, r rounding) uint64 {
	switch t {
	case tF64:
		return f64bits(x)
	case tF16, tBF16:
		return halfBits(roundTo(x, fmtOf(t), r), t)
	}
	return f32bits(float32(roundTo(x, fmtOf(t), r)))
}
