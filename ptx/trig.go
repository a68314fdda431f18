package ptx

import "math"

// Sin and Cos, accurate over the whole f32 range (the hardware
// sin/cos.approx are only accurate near 0). |x| is reduced to
// r = |x| - k·π/2 with |r| ≤ π/4: by Cody–Waite below 2^15, by
// Payne–Hanek (integer products with the bits of 2/π) above, where k·π/2
// cancels most of |x|'s bits. Taylor polynomials on |r| ≤ π/4 and the
// quadrant k mod 4 give the result. internal/ptxemu's sweep_pow_trig_test.go
// runs the emitted code against math.Sin/Cos over every f32 exponent and
// next to multiples of π/2 (worst error about 2.3e-7 relative).

// pio2Parts is π/2 as the sum of three f32 (72 bits): k·p1 is exact in
// an fma and |x| - k·p1 then exact for |k| < 2^23, so r keeps its
// relative precision.
var pio2Parts = [3]float32{
	math.Float32frombits(0x3FC90FDB), math.Float32frombits(0xB33BBD2E), math.Float32frombits(0xA6F72CED),
}

// twoOverPiWords are 2/π's binary digits after the point, 32 per word,
// preceded by a zero word (the digits before the point): Payne–Hanek
// needs four words from 0..7 for any f32 exponent.
var twoOverPiWords = [8]uint32{0, 0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB}

// cwLimit is where Payne–Hanek takes over from Cody–Waite (2^15: then
// k·p3 stays far below the smallest |r| an f32 argument can leave).
const cwLimit = 32768

// sinCoeffs: sin(r) = r·P(r²); cosCoeffs: cos(r) = P(r²) (Taylor series,
// truncated below f32 precision on |r| ≤ π/4).
var (
	sinCoeffs = []float32{1, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880}
	cosCoeffs = []float32{1, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800}
)

// sinCos emits sin(x), or cos(x) when cos is set.
func (f *fn) sinCos(x string, cos bool) string {
	a, q, sn, cs := f.trigParts(x)
	// Quadrant k mod 4 of sin: sin r, cos r, -sin r, -cos r; cos(x) is
	// sin(x + π/2), one quadrant on.
	if cos {
		f.op("add.s32 %s, %s, 1", q, q)
	}
	odd, neg := f.reg(cB32), f.reg(cB32)
	f.op("and.b32 %s, %s, 1", odd, q)
	f.op("and.b32 %s, %s, 2", neg, q)
	p := f.reg(cPred)
	f.op("setp.ne.u32 %s, %s, 0", p, odd)
	v := f.reg(cF32)
	f.op("selp.f32 %s, %s, %s, %s", v, cs, sn, p)
	nv := f.reg(cF32)
	f.op("neg.f32 %s, %s", nv, v)
	f.op("setp.ne.u32 %s, %s, 0", p, neg)
	f.op("selp.f32 %s, %s, %s, %s", v, nv, v, p)
	if !cos { // sin is odd: x's sign bit flips the result's
		v = f.xorSign(v, x)
	}
	return f.nanPastFinite(a, v)
}

// tan is sin r / cos r in even quadrants and -cos r / sin r in odd ones
// (both polynomials keep their relative precision next to the poles),
// with x's sign.
func (f *fn) tan(x string) string {
	a, q, sn, cs := f.trigParts(x)
	odd := f.reg(cB32)
	f.op("and.b32 %s, %s, 1", odd, q)
	p := f.reg(cPred)
	f.op("setp.ne.u32 %s, %s, 0", p, odd)
	even, oddV := f.reg(cF32), f.reg(cF32)
	f.op("div.rn.f32 %s, %s, %s", even, sn, cs)
	f.op("div.rn.f32 %s, %s, %s", oddV, cs, sn)
	f.op("neg.f32 %s, %s", oddV, oddV)
	v := f.reg(cF32)
	f.op("selp.f32 %s, %s, %s, %s", v, oddV, even, p)
	return f.nanPastFinite(a, f.xorSign(v, x))
}

// trigParts reduces |x| to r (|r| ≤ π/4) and quadrant k (s32), and
// returns |x|, k, sin r and cos r.
func (f *fn) trigParts(x string) (a, q, sn, cs string) {
	a = f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	q, r := f.reduceCW(a)
	big := f.reg(cPred)
	f.op("setp.ge.f32 %s, %s, %s", big, a, fimm(cwLimit)) // false for NaN
	skip := f.label("trig")
	f.op("@!%s bra %s", big, skip)
	f.reducePH(a, q, r)
	f.place(skip)
	s := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", s, r, r)
	sn = f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", sn, r, f.horner(sinCoeffs, s))
	return a, q, sn, f.horner(cosCoeffs, s)
}

// xorSign flips v's sign where x is negative (for odd functions of |x|).
func (f *fn) xorSign(v, x string) string {
	xb, vb := f.reg(cB32), f.reg(cB32)
	f.op("mov.b32 %s, %s", xb, x)
	f.op("and.b32 %s, %s, -2147483648", xb, xb)
	f.op("mov.b32 %s, %s", vb, v)
	f.op("xor.b32 %s, %s, %s", vb, vb, xb)
	r := f.reg(cF32)
	f.op("mov.b32 %s, %s", r, vb)
	return r
}

// nanPastFinite is NaN where a (|x|) is +Inf or NaN, else v: sin, cos and
// tan of ±Inf and NaN are NaN.
func (f *fn) nanPastFinite(a, v string) string {
	p := f.reg(cPred)
	f.op("setp.geu.f32 %s, %s, 0f7F800000", p, a)
	y := f.reg(cF32)
	f.op("selp.f32 %s, 0f7FC00000, %s, %s", y, v, p)
	return y
}

// reduceCW is Cody–Waite: k = round(a·2/π), r = a - k·π/2 with π/2 in
// three parts. It returns k (s32) and r in registers reducePH may
// overwrite.
func (f *fn) reduceCW(a string) (q, r string) {
	kf := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", kf, a, fimm(float32(2/math.Pi)))
	f.op("cvt.rni.f32.f32 %s, %s", kf, kf)
	r = f.reg(cF32)
	f.op("fma.rn.f32 %s, %s, %s, %s", r, kf, fimm(-pio2Parts[0]), a)
	f.op("fma.rn.f32 %s, %s, %s, %s", r, kf, fimm(-pio2Parts[1]), r)
	f.op("fma.rn.f32 %s, %s, %s, %s", r, kf, fimm(-pio2Parts[2]), r)
	q = f.reg(cB32)
	f.op("cvt.rzi.s32.f32 %s, %s", q, kf)
	return q, r
}

// reducePH is Payne–Hanek for a normal a ≥ 2^-7, writing k mod 4 to q
// and r to r. With a = m·2^s (m the 24-bit significand) and four words
// of 2/π chosen so that the digits left of them only add multiples of 4
// to a·2/π, the low 128 bits of m × words hold a·2/π mod 4 as 2 integer
// and 62+ fraction bits (the dropped digits err by < 2^-71).
func (f *fn) reducePH(a, q, r string) {
	bits, s, m := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.b32 %s, %s", bits, a)
	f.op("shr.u32 %s, %s, 23", s, bits)
	f.op("sub.s32 %s, %s, 120", s, s) // s+30 with s = exponent-23
	f.op("and.b32 %s, %s, 8388607", m, bits)
	f.op("or.b32 %s, %s, 8388608", m, m)
	n0, ls := f.reg(cB32), f.reg(cB32)
	f.op("shr.u32 %s, %s, 5", n0, s)
	f.op("and.b32 %s, %s, 31", ls, s)
	// w[i] = twoOverPiWords[n0+i], most significant first, n0 in 0..4.
	var w [4]string
	for i := range w {
		w[i] = f.reg(cB32)
		f.op("mov.b32 %s, %d", w[i], twoOverPiWords[i])
	}
	p := f.reg(cPred)
	for j := 1; j <= 4; j++ {
		f.op("setp.eq.u32 %s, %s, %d", p, n0, j)
		for i := range w {
			f.op("selp.b32 %s, %d, %s, %s", w[i], twoOverPiWords[j+i], w[i], p)
		}
	}
	// Q = (m × w) >> 32, mod 2^96: ql the low 64 bits, qh the top 32.
	pa, pb, pc := f.reg(cB64), f.reg(cB64), f.reg(cB64)
	f.op("mul.wide.u32 %s, %s, %s", pa, m, w[3])
	f.op("mul.wide.u32 %s, %s, %s", pb, m, w[2])
	f.op("mul.wide.u32 %s, %s, %s", pc, m, w[1])
	qh := f.reg(cB32)
	f.op("mul.lo.u32 %s, %s, %s", qh, m, w[0])
	ql, c32 := f.reg(cB64), f.reg(cB64)
	f.op("shr.u64 %s, %s, 32", ql, pa)
	f.op("add.u64 %s, %s, %s", ql, ql, pb)
	f.op("shl.b64 %s, %s, 32", c32, pc)
	f.op("add.u64 %s, %s, %s", ql, ql, c32)
	cy := f.reg(cPred)
	f.op("setp.lt.u64 %s, %s, %s", cy, ql, c32)
	hc := f.reg(cB64)
	f.op("shr.u64 %s, %s, 32", hc, pc)
	h32 := f.reg(cB32)
	f.op("cvt.u32.u64 %s, %s", h32, hc)
	f.op("add.u32 %s, %s, %s", qh, qh, h32)
	f.op("@%s add.u32 %s, %s, 1", cy, qh, qh)
	// V = Q >> (32 - ls), 64 bits: a·2/π mod 4 with the point after bit 62.
	sh, up := f.reg(cB32), f.reg(cB32)
	f.op("xor.b32 %s, %s, 31", sh, ls)
	f.op("add.u32 %s, %s, 1", sh, sh)
	f.op("add.u32 %s, %s, 32", up, ls)
	v, hi := f.reg(cB64), f.reg(cB64)
	f.op("shr.u64 %s, %s, %s", v, ql, sh)
	f.op("cvt.u64.u32 %s, %s", hi, qh)
	f.op("shl.b64 %s, %s, %s", hi, hi, up)
	f.op("or.b64 %s, %s, %s", v, v, hi)
	// k = round(V / 2^62) mod 4; the fraction V·4 mod 2^64 read as signed
	// is r/(π/2) in [-½, ½) scaled by 2^64.
	kq := f.reg(cB64)
	f.op("add.u64 %s, %s, %d", kq, v, uint64(1)<<61)
	f.op("shr.u64 %s, %s, 62", kq, kq)
	f.op("cvt.u32.u64 %s, %s", q, kq)
	f.op("shl.b64 %s, %s, 2", v, v)
	f.op("cvt.rn.f32.s64 %s, %s", r, v)
	f.op("mul.f32 %s, %s, %s", r, r, fimm(float32(math.Pi/2*0x1p-64)))
}
