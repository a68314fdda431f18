package asm

import "math"

// Single-precision transcendental functions, one element at a time: the
// reference loops of the assembly in math_amd64.s, which computes the same
// steps in the same order on 8 lanes, so the two agree bit for bit.
//
// Only three kinds of operation are used, so that Go reproduces the
// assembly exactly on every architecture: plain float32 operations, each
// rounded once (products are written float32(a*b) so that no compiler
// fuses them into an FMA); fused multiply-adds whose exact result is a
// float32 by construction (the error term of a product, the residual of
// a division), which ewFMAExact computes in float64 without a second
// rounding; and fused multiply-adds rounded once (the exponential's
// polynomial and reduction), which ewFMA computes as VFMADD and FMLA do.
//
// Range reductions and the minimax coefficients are kiln's own, fitted
// with the Remez exchange in _math_fit/ (fit.py prints every set, with
// its target function, interval and weight).
// Measured accuracy against float64 over all of float32 is in
// math_accuracy_test.go.

// Constants of the exponential. exp(h + l) = 2^n · e^r with
// n = round(h·log2(e)) and r = h - n·ln2Hi - n·ln2Lo + l; ln2Hi has 16
// significant bits, so n·ln2Hi is exact for |n| < 256 and h - n·ln2Hi is
// exact by Sterbenz's lemma.
const (
	ewLog2e  = float32(1.44269504088896341)
	ewLn2Hi  = float32(0.693145751953125)     // 0xB172p-16
	ewLn2Lo  = float32(1.4286068203094172e-6) // ln 2 - ewLn2Hi
	ewExpMin = float32(-120)                  // below: result 0 (or the subnormal of a scaled product)
	ewExpMax = float32(89)                    // above: +Inf
	// e^r ≈ 1 + r + r²·(c0 + c1·r + c2·r² + c3·r³ + c4·r⁴) on
	// |r| <= 0.3467, relative error 3.1e-9 (0.05 ulp).
	ewExpC0 = float32(0.4999999343740728)
	ewExpC1 = float32(0.1666652047773748)
	ewExpC2 = float32(0.04166838985963146)
	ewExpC3 = float32(0.008368735564420764)
	ewExpC4 = float32(0.0013814559927897156)
)

// ewFMAExact is a·b + c where the exact result needs at most 53 bits (it
// is a float32, or a subnormal's rounding of one): a·b is exact in
// float64 (48 bits) and so is the sum, so the only rounding is the
// conversion, as in VFMADD.
func ewFMAExact(a, b, c float32) float32 {
	return float32(float64(a)*float64(b) + float64(c))
}

// ewFMA is a·b + c rounded once to float32, as VFMADD and FMLA round it.
// a·b is exact in float64 and the sum is rounded to float64 first; the
// conversion to float32 then rounds once more, which gives the
// once-rounded result unless the float64 sum lies exactly halfway
// between two float32s (its 29 bits below float32's precision 1000...0,
// in float32's normal range), where the exact sum may not: ewFMATie
// settles those and the sums outside the normal range.
func ewFMA(a, b, c float32) float32 {
	p, cc := float64(a)*float64(b), float64(c)
	s := p + cc
	bits := math.Float64bits(s)
	if e := bits >> 52 & 0x7ff; bits&(1<<29-1) != 1<<28 && e >= 1023-126 && e < 1023+128 {
		return float32(s)
	}
	return ewFMATie(p, cc, s)
}

// ewFMATie is float32(p + cc) rounded once, for the float64 sum s =
// p + cc: where s lies halfway between two float32s, the sum's error term
// (TwoSum, exact) says on which side the exact sum lies.
func ewFMATie(p, cc, s float64) float32 {
	r := float32(s)
	if float64(r) == s || s != s {
		return r // exact (the error term is below half a float32 ulp), or NaN
	}
	bv := s - p
	e := (p - (s - bv)) + (cc - bv) // p + cc = s + e exactly
	if math.IsInf(float64(r), 0) {  // s at or past the largest float32's rounding boundary
		if edge := math.Copysign(math.MaxFloat32+0x1p103, s); s == edge && e*s < 0 {
			return float32(math.Copysign(math.MaxFloat32, s))
		}
		return r
	}
	toward := float32(math.Inf(1))
	if s < float64(r) {
		toward = -toward
	}
	other := math.Nextafter32(r, toward) // s lies between r and other
	if s != (float64(r)+float64(other))/2 || e == 0 {
		return r // not a tie, or a true one (to even, as the conversion did)
	}
	if e > 0 {
		return max(r, other)
	}
	return min(r, other)
}

// ewRound rounds to the nearest integer, ties to even (VROUNDPS $0).
func ewRound(x float32) float32 { return float32(math.RoundToEven(float64(x))) }

// ewPow2 is 2^k for -126 <= k <= 127, built in the exponent bits.
func ewPow2(k int32) float32 { return math.Float32frombits(uint32(k+127) << 23) }

// ewExpCore returns p and n with e^(h+l) = p·2^n, p in about [0.7, 1.42].
// h is clamped to [ewExpMin, ewExpMax] first (NaN stays NaN, and then p
// is NaN); l is a low-order correction to h (|l| of the order of h's
// ulp), added to the reduced argument.
func ewExpCore(h, l float32) (p, n float32) {
	h = min(max(h, ewExpMin), ewExpMax)
	n = ewRound(float32(h * ewLog2e))
	r := h - float32(n*ewLn2Hi) // exact
	r = ewFMA(-n, ewLn2Lo, r)
	r += l
	q := ewFMA(ewExpC4, r, ewExpC3)
	q = ewFMA(q, r, ewExpC2)
	q = ewFMA(q, r, ewExpC1)
	q = ewFMA(q, r, ewExpC0)
	s := float32(r * r)
	p = ewFMA(s, q, r) + 1
	return p, n
}

// ewScale is v·2^n for an integer n in [-174, 129], as two exact
// power-of-two factors so that only the last product rounds (once, to a
// subnormal or to ±Inf when it must).
func ewScale(v, n float32) float32 {
	k := int32(n) // NaN: v is NaN too, any k will do
	k1 := k >> 1
	return float32(v*ewPow2(k1)) * ewPow2(k-k1)
}

// ewExp is e^x.
func ewExp(x float32) float32 {
	p, n := ewExpCore(x, 0)
	return ewScale(p, n)
}

// Constants of the logarithm. x = 2^k·m with m in [√½, √2) found in the
// bits, f = m-1, log(1+f) = f - f²/2 + f³·P(f).
const (
	ewLogSqrtHalf = 0x3F3504F3        // bits of √½
	ewLogTiny     = float32(0x1p-126) // smallest normal: below, prescale
	ewLogPrescale = float32(0x1p23)   // makes a subnormal normal
	// (log1p(f) - f + f²/2)/f³ ≈ c0 + ... + c7·f⁷ on [√½-1, √2-1],
	// error 5.8e-9 relative to log1p(f) (0.1 ulp).
	ewLogC0 = float32(0.3333333170705679)
	ewLogC1 = float32(-0.2500082104973626)
	ewLogC2 = float32(0.20001226956002094)
	ewLogC3 = float32(-0.16623356814718931)
	ewLogC4 = float32(0.14201755660045565)
	ewLogC5 = float32(-0.13160185549621792)
	ewLogC6 = float32(0.12761596174267123)
	ewLogC7 = float32(-0.07634512248123833)
)

// ewLog is the natural logarithm: -Inf at ±0, NaN below 0 and for NaN,
// +Inf at +Inf.
func ewLog(x float32) float32 {
	switch {
	case x == 0:
		return float32(math.Inf(-1))
	case x < 0:
		return float32(math.NaN())
	case !(x < float32(math.Inf(1))): // +Inf, NaN
		return x
	}
	adj := float32(0)
	if x < ewLogTiny {
		x = float32(x * ewLogPrescale)
		adj = -23
	}
	b := int32(math.Float32bits(x))
	k := (b - ewLogSqrtHalf) >> 23
	m := math.Float32frombits(uint32(b - k<<23))
	e := float32(k) + adj
	f := m - 1 // exact
	q := float32(ewLogC7*f) + ewLogC6
	q = float32(q*f) + ewLogC5
	q = float32(q*f) + ewLogC4
	q = float32(q*f) + ewLogC3
	q = float32(q*f) + ewLogC2
	q = float32(q*f) + ewLogC1
	q = float32(q*f) + ewLogC0
	q = float32(q*f) - 0.5
	lo := float32(float32(f*f) * q)
	r := lo + float32(e*ewLn2Lo)
	r += f
	return float32(e*ewLn2Hi) + r // e·ln2Hi is exact
}
