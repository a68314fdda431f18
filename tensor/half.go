package tensor

import (
	"math"
	"math/bits"
)

// Bit layouts, sign | exponent | mantissa:
//
//	f32  1 | 8 (bias 127) | 23
//	f16  1 | 5 (bias 15)  | 10
//	bf16 1 | 8 (bias 127) | 7   (the top half of an f32)
//
// Narrowing rounds to nearest, ties to even. NaN stays NaN: the sign and the
// top payload bits are kept and the quiet bit is set, so a NaN whose payload
// lives only in dropped bits cannot turn into Inf. Widening is exact, except
// that a signalling NaN comes back quiet (as IEEE 754 conversions do).

// F32ToF16 rounds f to the nearest IEEE binary16 value (ties to even) and
// returns its bits. Values of magnitude 65520 and above become ±Inf.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	if h, ok := f32ToF16Normal(b); ok {
		return h
	}
	return f32ToF16Rare(b)
}

// f32ToF16Normal is the inlinable fast path of F32ToF16 for |f| in
// [2^-14, 2^16), where the result is a normal f16 or, after rounding up,
// Inf. It adds just under half an ulp of the 13 dropped bits plus the kept
// lsb (ties to even), shifts, and rebiases the exponent (127 -> 15). A
// carry out of the mantissa bumps the exponent; from the largest binade it
// gives exactly 0x7c00 (Inf), as IEEE requires for values >= 65520.
func f32ToF16Normal(b uint32) (uint16, bool) {
	abs := b & 0x7fffffff
	// One unsigned compare tests 2^-14 (0x38800000) <= |f| < 2^16
	// (0x47800000): below the range the subtraction wraps to a huge value.
	if abs-0x38800000 >= 0x47800000-0x38800000 {
		return 0, false
	}
	h := (abs + 0xfff + (abs>>13)&1) >> 13
	return uint16(b>>16)&0x8000 | uint16(h-(127-15)<<10), true
}

// f32ToF16Rare is F32ToF16 for the values f32ToF16Normal rejects (|f| below
// 2^-14 or at least 2^16, NaN, Inf): f16 subnormals, zeros and overflow.
func f32ToF16Rare(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	e := exp - 127 // unbiased exponent; f32 subnormals and zero give -127
	switch {
	case exp == 0xff && mant != 0:
		// NaN: keep the top 10 payload bits and force the quiet bit, which
		// also keeps the mantissa non-zero (else it would read as Inf).
		return sign | 0x7e00 | uint16(mant>>13)
	case e >= 16:
		// ±Inf, or |f| >= 2^16: beyond the largest finite f16 (65504) and
		// the rounding threshold (65520), so overflow to Inf.
		return sign | 0x7c00
	case e >= -25:
		// Subnormal f16 result: the value is (2^23 + mant) * 2^(e-23) and an
		// f16 subnormal is m * 2^-24, so m = full >> (-e-1). Rounding up from
		// 1023 gives 0x400, the smallest normal, which is also correct. At
		// e = -25 the value lies in [2^-25, 2^-24): exactly 2^-25 is a tie
		// that goes to even (zero), anything above rounds up to 2^-24.
		full := mant | 0x800000
		shift := uint(-e - 1) // 14..24
		m := full >> shift
		return sign | uint16(m+roundBit(full, shift, m))
	default:
		// |f| < 2^-25 (including f32 subnormals and zero): below half the
		// smallest f16 subnormal, so it rounds to a zero of the same sign.
		return sign
	}
}

// roundBit returns 1 if the value whose low `shift` bits (of x) are being
// dropped must round up onto the kept part `kept`: when the dropped bits are
// more than half, or exactly half and kept is odd (ties to even).
func roundBit(x uint32, shift uint, kept uint32) uint32 {
	half := uint32(1) << (shift - 1)
	rest := x & (half<<1 - 1)
	if rest > half || (rest == half && kept&1 != 0) {
		return 1
	}
	return 0
}

// F16ToF32 widens IEEE binary16 bits to float32. Every f16 value, subnormals
// included, is exactly representable; a signalling NaN is returned quiet.
func F16ToF32(h uint16) float32 {
	if exp := h & 0x7c00; exp != 0 && exp != 0x7c00 {
		return f16ToF32Normal(h)
	}
	return f16ToF32Rare(h)
}

// f16ToF32Normal widens a normal f16: the mantissa moves up 13 bits and
// the exponent is rebiased (15 -> 127) in one add.
func f16ToF32Normal(h uint16) float32 {
	return math.Float32frombits(uint32(h&0x8000)<<16 | (uint32(h&0x7fff)<<13 + (127-15)<<23))
}

// f16ToF32Rare is F16ToF32 for the non-normal patterns (exponent field all
// zeros or all ones): zeros, subnormals, Inf and NaN.
func f16ToF32Rare(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0:
		return math.Float32frombits(sign | 0x7f800000) // ±Inf
	case exp == 0x1f:
		// NaN: move the payload to the top of the f32 mantissa, set quiet.
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign) // ±0
	default:
		// Subnormal m * 2^-24 is a normal f32: with n = bit length of m the
		// value is 1.xxx * 2^(n-25). Shift the bits below the leading one to
		// the top of the 23-bit mantissa and drop the leading one.
		n := uint32(bits.Len32(mant))
		return math.Float32frombits(sign | (n+102)<<23 | (mant<<(24-n))&0x7fffff)
	}
}

// F32ToBF16 rounds f to the nearest bfloat16 value (ties to even) and returns
// its bits. bf16 shares f32's exponent range, so f32 subnormals round to bf16
// subnormals and only values near math.MaxFloat32 overflow to Inf.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		// NaN: plain rounding could carry a low-bits-only payload into
		// Inf (or wrap), so truncate and force the quiet bit instead.
		return uint16(b>>16) | 0x0040
	}
	// Everything else, ±Inf included, rounds by adding just under half an
	// ulp plus the kept lsb (ties to even) and truncating. A carry out of
	// the mantissa bumps the exponent, which handles both subnormal ->
	// normal and largest finite -> Inf correctly; Inf itself (low half 0)
	// is unchanged.
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 widens bfloat16 bits to float32 (exact; a signalling NaN is
// returned quiet).
func BF16ToF32(b uint16) float32 {
	if b&0x7fff > 0x7f80 {
		b |= 0x0040 // NaN: set the quiet bit
	}
	return math.Float32frombits(uint32(b) << 16)
}

// F32ToF16Slice converts src into dst element by element with F32ToF16.
// dst must be at least as long as src; it panics otherwise.
func F32ToF16Slice(dst []uint16, src []float32) {
	dst = dstFor(dst, len(src))
	for i, f := range src {
		b := math.Float32bits(f)
		h, ok := f32ToF16Normal(b) // inlined; F32ToF16 itself is not
		if !ok {
			h = f32ToF16Rare(b)
		}
		dst[i] = h
	}
}

// F16ToF32Slice converts src into dst element by element with F16ToF32.
// dst must be at least as long as src; it panics otherwise.
func F16ToF32Slice(dst []float32, src []uint16) {
	dst = dstFor(dst, len(src))
	for i, h := range src {
		if exp := h & 0x7c00; exp != 0 && exp != 0x7c00 {
			dst[i] = f16ToF32Normal(h) // inlined; F16ToF32 itself is not
		} else {
			dst[i] = f16ToF32Rare(h)
		}
	}
}

// F32ToBF16Slice converts src into dst element by element with F32ToBF16.
// dst must be at least as long as src; it panics otherwise.
func F32ToBF16Slice(dst []uint16, src []float32) {
	dst = dstFor(dst, len(src))
	for i, f := range src {
		dst[i] = F32ToBF16(f)
	}
}

// BF16ToF32Slice converts src into dst element by element with BF16ToF32.
// dst must be at least as long as src; it panics otherwise.
func BF16ToF32Slice(dst []float32, src []uint16) {
	dst = dstFor(dst, len(src))
	for i, b := range src {
		dst[i] = BF16ToF32(b)
	}
}

// dstFor returns dst[:n], panicking if dst is shorter than n (slicing alone
// would silently reach into dst's spare capacity).
func dstFor[T any](dst []T, n int) []T {
	if len(dst) < n {
		panic("tensor: destination slice shorter than source")
	}
	return dst[:n]
}
