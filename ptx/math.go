package ptx

import (
	"math"
	"sync"
)

// Accurate f32 functions built from PTX's approximate hardware ops. The
// hardware ex2/lg2/tanh are too coarse for kiln's tolerances (2e-6
// relative), so each function reduces its argument and evaluates a short
// polynomial; mirror_test.go runs the same algorithms in Go float32
// against math's float64 results.

// Constants of the reductions.
const (
	log2e = 1.4426950408889634
	ln2Hi = 0.693145751953125 // 15 significant bits: n·ln2Hi is exact for |n| < 512
	ln2Lo = 1.4286068203094173e-06
)

// logCoeffs: log(m) = f·P(f²), f = (m-1)/(m+1), P(s) = Σ 2s^k/(2k+1).
var logCoeffs = []float32{2, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11}

// tanhCoeffs: tanh(x) = x·P(x²) for |x| < tanhSmall (Taylor series).
var tanhCoeffs = []float32{1, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925, 21844.0 / 6081075}

const tanhSmall = 0.3

// erfCoeffs: erf(x) = x·P(x²) for |x| < 1 (Taylor series,
// 2/√π·(-1)^k/(k!(2k+1))).
var erfCoeffs = func() []float32 {
	c := make([]float32, 13)
	fact := 1.0
	for k := range c {
		if k > 0 {
			fact *= float64(k)
		}
		c[k] = float32(2 / math.SqrtPi * math.Pow(-1, float64(k)) / (fact * float64(2*k+1)))
	}
	return c
}()

// erfcxCoeffs returns the monomial coefficients, in v = 2u-1 with u = 1/a,
// of h(u) = erfc(a)·exp(a²)·a for a ≥ 1: a degree-12 Chebyshev
// interpolant (h is smooth on u ∈ [0, 1], h(0) = 1/√π). Then
// erfc(a) = exp(-a²)·h/a.
var erfcxCoeffs = sync.OnceValue(func() []float32 {
	h := func(v float64) float64 {
		u := (v + 1) / 2
		if u == 0 {
			return 1 / math.Sqrt(math.Pi)
		}
		a := 1 / u
		if a > 20 { // exp(a²) overflows long before: asymptotic series
			z := 1 / (a * a)
			return (1 - z/2 + 3*z*z/4 - 15*z*z*z/8 + 105*z*z*z*z/16) / math.Sqrt(math.Pi)
		}
		return math.Exp(a*a) * math.Erfc(a) * a
	}
	m := chebyshevMonomials(h, 12)
	out := make([]float32, len(m))
	for i, c := range m {
		out[i] = float32(c)
	}
	return out
})

// chebyshevMonomials interpolates f on [-1, 1] at the d+1 Chebyshev nodes
// and returns the interpolant's monomial coefficients, lowest first.
func chebyshevMonomials(f func(float64) float64, d int) []float64 {
	n := d + 1
	c := make([]float64, n)
	for j := range n {
		s := 0.0
		for k := range n {
			t := math.Pi * (float64(k) + 0.5) / float64(n)
			s += f(math.Cos(t)) * math.Cos(float64(j)*t)
		}
		c[j] = 2 * s / float64(n)
	}
	c[0] /= 2
	// T_j in monomials by T_j = 2x·T_{j-1} - T_{j-2}.
	prev, cur := []float64{1}, []float64{0, 1}
	m := make([]float64, n)
	m[0] = c[0]
	for j := 1; j < n; j++ {
		if j > 1 {
			next := make([]float64, j+1)
			for i, a := range cur {
				next[i+1] += 2 * a
			}
			for i, a := range prev {
				next[i] -= a
			}
			prev, cur = cur, next
		}
		for i, a := range cur {
			m[i] += c[j] * a
		}
	}
	return m
}

// horner evaluates Σ c[i]·x^i with fma.
func (f *fn) horner(c []float32, x string) string {
	r := f.f32(c[len(c)-1])
	for i := len(c) - 2; i >= 0; i-- {
		n := f.reg(cF32)
		f.op("fma.rn.f32 %s, %s, %s, %s", n, r, x, fimm(c[i]))
		r = n
	}
	return r
}

// exp: n = round(x·log2e), r = x - n·ln2 (two-part ln2, exact products),
// exp(x) = 2^(r·log2e)·2^n with the hardware ex2 on |r·log2e| ≤ 0.5 and
// 2^n built from exponent bits in two halves (so n up to ±150 works).
func (f *fn) exp(x string) string {
	c := f.reg(cF32)
	f.op("max.f32 %s, %s, 0fC2D20000", c, x) // -105: exp underflows to 0 below
	f.op("min.f32 %s, %s, 0f42B30000", c, c) // 89.5: exp overflows to +Inf above
	t, n := f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", t, c, fimm(log2e))
	f.op("cvt.rni.f32.f32 %s, %s", n, t)
	r := f.reg(cF32)
	f.op("fma.rn.f32 %s, %s, %s, %s", r, n, fimm(-ln2Hi), c)
	f.op("fma.rn.f32 %s, %s, %s, %s", r, n, fimm(-ln2Lo), r)
	f.op("mul.f32 %s, %s, %s", r, r, fimm(log2e))
	e := f.reg(cF32)
	f.op("ex2.approx.ftz.f32 %s, %s", e, r)
	ni, n1, n2 := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("cvt.rzi.s32.f32 %s, %s", ni, n)
	f.op("shr.s32 %s, %s, 1", n1, ni)
	f.op("sub.s32 %s, %s, %s", n2, ni, n1)
	for _, k := range []string{n1, n2} {
		f.op("add.s32 %s, %s, 127", k, k)
		f.op("shl.b32 %s, %s, 23", k, k)
	}
	s1, s2 := f.reg(cF32), f.reg(cF32)
	f.op("mov.b32 %s, %s", s1, n1)
	f.op("mov.b32 %s, %s", s2, n2)
	y := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", y, e, s1)
	f.op("mul.f32 %s, %s, %s", y, y, s2)
	return f.keepNaN(x, y)
}

// keepNaN returns x where x is NaN, else y (the clamps above drop NaN).
func (f *fn) keepNaN(x, y string) string {
	p := f.reg(cPred)
	f.op("setp.nan.f32 %s, %s, %s", p, x, x)
	r := f.reg(cF32)
	f.op("selp.f32 %s, %s, %s, %s", r, x, y, p)
	return r
}

// logSplit writes a positive x as 2^e·m with m ∈ [√½, √2) and returns
// m and e (as f32); 0, Inf and NaN give garbage the callers replace.
func (f *fn) logSplit(x string) (m, ef string) {
	// Denormals: scale by 2^23 first.
	p := f.reg(cPred)
	f.op("setp.lt.f32 %s, %s, 0f00800000", p, x)
	xs := f.reg(cF32)
	f.op("mul.f32 %s, %s, 0f4B000000", xs, x)
	f.op("selp.f32 %s, %s, %s, %s", xs, xs, x, p)
	adj := f.reg(cB32)
	f.op("selp.s32 %s, -23, 0, %s", adj, p)
	bits, e, mb := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.b32 %s, %s", bits, xs)
	f.op("shr.u32 %s, %s, 23", e, bits)
	f.op("sub.s32 %s, %s, 127", e, e)
	f.op("add.s32 %s, %s, %s", e, e, adj)
	f.op("and.b32 %s, %s, 8388607", mb, bits)
	f.op("or.b32 %s, %s, 1065353216", mb, mb)
	m = f.reg(cF32)
	f.op("mov.b32 %s, %s", m, mb)
	big := f.reg(cPred)
	f.op("setp.gt.f32 %s, %s, 0f3FB504F3", big, m) // √2
	mh := f.reg(cF32)
	f.op("mul.f32 %s, %s, 0f3F000000", mh, m)
	f.op("selp.f32 %s, %s, %s, %s", m, mh, m, big)
	e1 := f.reg(cB32)
	f.op("selp.s32 %s, 1, 0, %s", e1, big)
	f.op("add.s32 %s, %s, %s", e, e, e1)
	ef = f.reg(cF32)
	f.op("cvt.rn.f32.s32 %s, %s", ef, e)
	return m, ef
}

// log: x = 2^e·m with m ∈ [√½, √2), log(x) = e·ln2 + f·P(f²).
func (f *fn) log(x string) string {
	m, ef := f.logSplit(x)
	num, den, fr := f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("sub.f32 %s, %s, 0f3F800000", num, m)
	f.op("add.f32 %s, %s, 0f3F800000", den, m)
	f.op("div.rn.f32 %s, %s, %s", fr, num, den)
	s := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", s, fr, fr)
	poly := f.horner(logCoeffs, s)
	lm := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", lm, fr, poly)
	f.op("fma.rn.f32 %s, %s, %s, %s", lm, ef, fimm(ln2Lo), lm)
	y := f.reg(cF32)
	f.op("fma.rn.f32 %s, %s, %s, %s", y, ef, fimm(ln2Hi), lm)
	// Specials: log(+Inf) = +Inf, log(0) = -Inf, log(x<0) = NaN, NaN stays.
	q := f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, 0f7F800000", q, x)
	f.op("selp.f32 %s, 0f7F800000, %s, %s", y, y, q)
	f.op("setp.eq.f32 %s, %s, 0f00000000", q, x)
	f.op("selp.f32 %s, 0fFF800000, %s, %s", y, y, q)
	f.op("setp.lt.f32 %s, %s, 0f00000000", q, x)
	f.op("selp.f32 %s, 0f7FC00000, %s, %s", y, y, q)
	return f.keepNaN(x, y)
}

// tanh: Taylor polynomial below 0.3, else 1 - 2/(exp(2|x|)+1), with the
// sign of x restored.
func (f *fn) tanh(x string) string {
	a := f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	s := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", s, x, x)
	small := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", small, x, f.horner(tanhCoeffs, s))
	a2 := f.reg(cF32)
	f.op("add.f32 %s, %s, %s", a2, a, a)
	e := f.exp(a2)
	d, big := f.reg(cF32), f.reg(cF32)
	f.op("add.f32 %s, %s, 0f3F800000", d, e)
	f.op("div.rn.f32 %s, 0f40000000, %s", d, d)
	f.op("sub.f32 %s, 0f3F800000, %s", big, d)
	f.op("copysign.f32 %s, %s, %s", big, x, big)
	p := f.reg(cPred)
	f.op("setp.lt.f32 %s, %s, %s", p, a, fimm(tanhSmall))
	y := f.reg(cF32)
	f.op("selp.f32 %s, %s, %s, %s", y, small, big, p)
	return f.keepNaN(x, y)
}

// erfcLarge is erfc(a) for a ≥ 1 (smaller a give a finite but
// meaningless value): exp(-a²)·h(1/a)/a. a² comes split in two, hi + lo,
// so the exponent keeps its low bits; sq computes them from a, and Gelu
// from x (x²/2 is exact where (x/√2)² is not).
func (f *fn) erfcLarge(a, hi, lo string) string {
	u, v := f.reg(cF32), f.reg(cF32)
	f.op("rcp.rn.f32 %s, %s", u, a)
	f.op("fma.rn.f32 %s, %s, 0f40000000, 0fBF800000", v, u)
	h := f.horner(erfcxCoeffs(), v)
	nhi := f.reg(cF32)
	f.op("neg.f32 %s, %s", nhi, hi)
	e := f.exp(nhi)
	// exp(-hi-lo) ≈ exp(-hi)·(1-lo), |lo| ≤ ulp(hi)/2.
	nlo, c := f.reg(cF32), f.reg(cF32)
	f.op("neg.f32 %s, %s", nlo, lo)
	f.op("fma.rn.f32 %s, %s, %s, %s", c, e, nlo, e)
	y := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", y, c, h)
	f.op("mul.f32 %s, %s, %s", y, y, u)
	return y
}

// sq clamps a to [1, 10.5] (past 10.5 erfc is below the smallest
// denormal; the clamp also keeps Inf out of a² - a², a NaN) and returns
// it with a² as hi + lo.
func (f *fn) sq(a string) (ac, hi, lo string) {
	ac, hi, lo = f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("max.f32 %s, %s, 0f3F800000", ac, a)
	f.op("min.f32 %s, %s, 0f41280000", ac, ac)
	f.op("mul.f32 %s, %s, %s", hi, ac, ac)
	nhi := f.reg(cF32)
	f.op("neg.f32 %s, %s", nhi, hi)
	f.op("fma.rn.f32 %s, %s, %s, %s", lo, ac, ac, nhi)
	return ac, hi, lo
}

// erfSmall is erf(x) for |x| < 1.
func (f *fn) erfSmall(x string) string {
	s := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", s, x, x)
	y := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", y, x, f.horner(erfCoeffs, s))
	return y
}

// erf: the series below 1, 1 - erfc(|x|) above, sign restored.
func (f *fn) erf(x string) string {
	a := f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	big := f.reg(cF32)
	f.op("sub.f32 %s, 0f3F800000, %s", big, f.erfcLarge(f.sq(a)))
	f.op("copysign.f32 %s, %s, %s", big, x, big)
	p := f.reg(cPred)
	f.op("setp.lt.f32 %s, %s, 0f3F800000", p, a)
	y := f.reg(cF32)
	f.op("selp.f32 %s, %s, %s, %s", y, f.erfSmall(x), big, p)
	return f.keepNaN(x, y)
}

// gelu is x/2·(1 + erf(x/√2)), written as x/2·erfc(-z) where 1+erf(z)
// cancels (z ≤ -1), and NaN at -Inf.
func (f *fn) gelu(x string) string {
	z := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", z, x, fimm(float32(1/math.Sqrt2)))
	onePlus := f.reg(cF32)
	f.op("add.f32 %s, %s, 0f3F800000", onePlus, f.erf(z))
	// The tail: a = -z in [1, 10.5] (x in [-14.85, -1.41]), a² = x²/2.
	xc := f.reg(cF32)
	f.op("min.f32 %s, %s, 0fBFB504F3", xc, x)  // -√2
	f.op("max.f32 %s, %s, 0fC16DA12F", xc, xc) // -10.5·√2
	a, x2, hi, lo := f.reg(cF32), f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", a, xc, fimm(float32(-1/math.Sqrt2)))
	f.op("mul.f32 %s, %s, %s", x2, xc, xc)
	f.op("mul.f32 %s, %s, 0f3F000000", hi, x2)
	f.op("neg.f32 %s, %s", x2, x2)
	f.op("fma.rn.f32 %s, %s, %s, %s", lo, xc, xc, x2)
	f.op("mul.f32 %s, %s, 0f3F000000", lo, lo)
	tail := f.erfcLarge(a, hi, lo)
	p := f.reg(cPred)
	f.op("setp.le.f32 %s, %s, 0fBF800000", p, z)
	g := f.reg(cF32)
	f.op("selp.f32 %s, %s, %s, %s", g, tail, onePlus, p)
	y := f.reg(cF32)
	f.op("mul.f32 %s, %s, 0f3F000000", y, x)
	f.op("mul.f32 %s, %s, %s", y, y, g)
	return f.nanAtMinusInf(x, y)
}

// sigmoid is 1/(1+exp(-x)).
func (f *fn) sigmoid(x string) string {
	n := f.reg(cF32)
	f.op("neg.f32 %s, %s", n, x)
	d := f.reg(cF32)
	f.op("add.f32 %s, %s, 0f3F800000", d, f.exp(n))
	y := f.reg(cF32)
	f.op("rcp.rn.f32 %s, %s", y, d)
	return y
}

// geluTanh is x/2·(1+tanh(u)), u = √(2/π)(x+0.044715x³), computed as
// x·sigmoid(2u), which equals it without the cancellation of 1+tanh.
func (f *fn) geluTanh(x string) string {
	x3 := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", x3, x, x)
	f.op("mul.f32 %s, %s, %s", x3, x3, x)
	u := f.reg(cF32)
	f.op("fma.rn.f32 %s, %s, %s, %s", u, x3, fimm(0.044715), x)
	f.op("mul.f32 %s, %s, %s", u, u, fimm(float32(2*math.Sqrt(2/math.Pi))))
	y := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", y, x, f.sigmoid(u))
	return f.nanAtMinusInf(x, y)
}

// silu is x/(1+exp(-x)).
func (f *fn) silu(x string) string {
	n := f.reg(cF32)
	f.op("neg.f32 %s, %s", n, x)
	d := f.reg(cF32)
	f.op("add.f32 %s, %s, 0f3F800000", d, f.exp(n))
	y := f.reg(cF32)
	f.op("div.rn.f32 %s, %s, %s", y, x, d)
	return f.nanAtMinusInf(x, y)
}

// nanAtMinusInf makes the x·gate(x) activations NaN at -Inf, as their
// formulas are in IEEE arithmetic (-Inf·0; see graph.Silu) and as the
// CPU kernels compute, whatever the clamped arithmetic above gives there.
func (f *fn) nanAtMinusInf(x, y string) string {
	p := f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, 0fFF800000", p, x)
	r := f.reg(cF32)
	f.op("selp.f32 %s, 0f7FC00000, %s, %s", r, y, p)
	return r
}
