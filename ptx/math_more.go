package ptx

import (
	"fmt"
	"math"
	"sync"

	"github.com/kilnml/kiln/graph"
)

// The activations with attributes, the hyperbolic functions and the
// inverse trigonometric ones, from the accurate exp, log and trig
// reductions of math.go and trig.go. Each keeps NaN (the clamps of exp
// and the comparisons here would drop it) and gives the IEEE result at
// ±Inf, as the float64 reference kernels do.

// sinhCoeffs: sinh(x) = x·P(x²) for |x| < 1 (Taylor, 1/(2k+1)!), where
// (e^x - e^-x)/2 cancels.
var sinhCoeffs = []float32{1, 1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800, 1.0 / 6227020800}

// expm1Coeffs: e^x - 1 = x·P(x) for |x| < 1/2 (Taylor, 1/(k+1)!).
var expm1Coeffs = []float32{1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880}

// atanSpan is tan²(π/8): atan's polynomial runs on u² ∈ [0, atanSpan].
const atanSpan = 0.17157287525380990

// atanCoeffs returns the monomial coefficients, in v = 2s/atanSpan - 1,
// of atan(√s)/√s on s ∈ [0, atanSpan]: a degree-8 Chebyshev interpolant.
var atanCoeffs = sync.OnceValue(func() []float32 {
	m := chebyshevMonomials(func(v float64) float64 {
		s := (v + 1) / 2 * atanSpan
		if s == 0 {
			return 1
		}
		return math.Atan(math.Sqrt(s)) / math.Sqrt(s)
	}, 8)
	out := make([]float32, len(m))
	for i, c := range m {
		out[i] = float32(c)
	}
	return out
})

// π/2 and π/4 as f32 high parts plus the f32 rounding of the rest.
var (
	pio2Hi = float32(math.Pi / 2)
	pio2Lo = float32(math.Pi/2 - float64(pio2Hi))
	pio4Hi = float32(math.Pi / 4)
	pio4Lo = float32(math.Pi/4 - float64(pio4Hi))
)

// floatAct emits the float activations with attributes and the
// functions of this file; ok is false for any other op.
func (f *fn) floatAct(op graph.Op, at graph.Attrs, x string) (string, bool) {
	switch op {
	case graph.OpElu:
		return f.expSide(x, "gt", 1, at.Alpha, 1), true
	case graph.OpSelu:
		return f.expSide(x, "gt", at.Beta, at.Alpha*at.Beta, 1), true
	case graph.OpCelu:
		// max(0,x) + min(0, α(e^(x/α)-1)) is x for x >= 0 and the
		// exponential side below, for either sign of α.
		return f.expSide(x, "ge", 1, at.Alpha, 1/at.Alpha), true
	case graph.OpThresholdedRelu:
		p, y := f.reg(cPred), f.reg(cF32)
		f.op("setp.gt.f32 %s, %s, %s", p, x, fimm(at.Alpha)) // false for NaN: 0
		f.op("selp.f32 %s, %s, 0f00000000, %s", y, x, p)
		return y, true
	case graph.OpShrink:
		lo, hi, p, y := f.reg(cF32), f.reg(cF32), f.reg(cPred), f.reg(cF32)
		f.op("add.f32 %s, %s, %s", lo, x, fimm(at.Beta))
		f.op("sub.f32 %s, %s, %s", hi, x, fimm(at.Beta))
		f.op("setp.gt.f32 %s, %s, %s", p, x, fimm(at.Alpha))
		f.op("selp.f32 %s, %s, 0f00000000, %s", y, hi, p)
		f.op("setp.lt.f32 %s, %s, %s", p, x, fimm(-at.Alpha))
		f.op("selp.f32 %s, %s, %s, %s", y, lo, y, p)
		return y, true
	case graph.OpSoftplus:
		return f.softplus(x), true
	case graph.OpSoftsign:
		a, y := f.reg(cF32), f.reg(cF32)
		f.op("abs.f32 %s, %s", a, x)
		f.op("add.f32 %s, %s, 0f3F800000", a, a)
		f.op("div.rn.f32 %s, %s, %s", y, x, a)
		return y, true
	case graph.OpTan:
		return f.tan(x), true
	case graph.OpSinh, graph.OpCosh:
		return f.sinhCosh(x, op == graph.OpCosh), true
	case graph.OpAtan:
		return f.atan(x), true
	case graph.OpAsin:
		return f.asin(x), true
	case graph.OpAcos:
		return f.acos(x), true
	case graph.OpAsinh:
		return f.asinh(x), true
	case graph.OpAcosh:
		return f.acosh(x), true
	case graph.OpAtanh:
		return f.atanh(x), true
	case graph.OpSign:
		// ±1 by the comparisons, else x itself (±0 and NaN).
		p, y := f.reg(cPred), f.reg(cF32)
		f.op("setp.gt.f32 %s, %s, 0f00000000", p, x)
		f.op("selp.f32 %s, 0f3F800000, %s, %s", y, x, p)
		f.op("setp.lt.f32 %s, %s, 0f00000000", p, x)
		f.op("selp.f32 %s, 0fBF800000, %s, %s", y, y, p)
		return y, true
	}
	return "", false
}

// expSide is x·pos where x cmp 0, else neg·(e^(x·scale) - 1): Elu, Selu
// and Celu. A NaN x fails the comparison and the exponential keeps it.
func (f *fn) expSide(x, cmp string, pos, neg, scale float32) string {
	xs := x
	if scale != 1 {
		xs = f.reg(cF32)
		f.op("mul.f32 %s, %s, %s", xs, x, fimm(scale))
	}
	e := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", e, f.expm1(xs), fimm(neg))
	px := x
	if pos != 1 {
		px = f.reg(cF32)
		f.op("mul.f32 %s, %s, %s", px, x, fimm(pos))
	}
	p, y := f.reg(cPred), f.reg(cF32)
	f.op("setp.%s.f32 %s, %s, 0f00000000", cmp, p, x)
	f.op("selp.f32 %s, %s, %s, %s", y, px, e, p)
	return y
}

// expm1 is e^x - 1: x·P(x) (Taylor, 1/(k+1)!) for |x| < 1/2, where
// the subtraction would cancel, e^x - 1 elsewhere.
func (f *fn) expm1(x string) string {
	y := f.reg(cF32)
	f.op("sub.f32 %s, %s, 0f3F800000", y, f.exp(x))
	t := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", t, x, f.horner(expm1Coeffs, x))
	a, p := f.reg(cF32), f.reg(cPred)
	f.op("abs.f32 %s, %s", a, x)
	f.op("setp.lt.f32 %s, %s, 0f3F000000", p, a) // false for NaN: exp keeps it
	f.op("selp.f32 %s, %s, %s, %s", y, t, y, p)
	return y
}

// softplus is max(x, 0) + log1p(e^-|x|): x where e^x would overflow, and
// e^x, not 0, far below 0.
func (f *fn) softplus(x string) string {
	a := f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	f.op("neg.f32 %s, %s", a, a)
	m, y := f.reg(cF32), f.reg(cF32)
	f.op("max.f32 %s, %s, 0f00000000", m, x)
	f.op("add.f32 %s, %s, %s", y, m, f.log1p(f.exp(a))) // NaN through exp and log1p
	return y
}

// sinhCosh: with h = e^(|x|/2), (h/2)·h ± (1/(2h))/h, which stays finite
// up to |x| = 89.4 where e^|x| itself overflows; sinh takes the Taylor
// polynomial below 1 and x's sign.
func (f *fn) sinhCosh(x string, cosh bool) string {
	a := f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	half := f.reg(cF32)
	f.op("mul.f32 %s, %s, 0f3F000000", half, a)
	h := f.exp(half)
	big, small := f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, 0f3F000000", big, h)
	f.op("mul.f32 %s, %s, %s", big, big, h)
	f.op("rcp.rn.f32 %s, %s", small, h)
	f.op("mul.f32 %s, %s, 0f3F000000", small, small)
	f.op("div.rn.f32 %s, %s, %s", small, small, h)
	y := f.reg(cF32)
	if cosh {
		f.op("add.f32 %s, %s, %s", y, big, small)
		return y
	}
	f.op("sub.f32 %s, %s, %s", y, big, small)
	f.op("copysign.f32 %s, %s, %s", y, x, y)
	s, t := f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", s, x, x)
	f.op("mul.f32 %s, %s, %s", t, x, f.horner(sinhCoeffs, s))
	p := f.reg(cPred)
	f.op("setp.lt.f32 %s, %s, 0f3F800000", p, a) // false for NaN: the exp side keeps it
	f.op("selp.f32 %s, %s, %s, %s", y, t, y, p)
	return y
}

// atan: |x| > 1 as π/2 - atan(1/|x|), then t > tan(π/8) as
// π/4 + atan((t-1)/(t+1)), leaving |u| ≤ tan(π/8) for the polynomial;
// x's sign restored. ±Inf gives ±π/2 (1/Inf = 0), NaN stays NaN.
func (f *fn) atan(x string) string {
	a := f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	inv, t := f.reg(cPred), f.reg(cF32)
	f.op("setp.gt.f32 %s, %s, 0f3F800000", inv, a)
	f.op("rcp.rn.f32 %s, %s", t, a)
	f.op("selp.f32 %s, %s, %s, %s", t, t, a, inv)
	mid, num, den, u := f.reg(cPred), f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("setp.gt.f32 %s, %s, %s", mid, t, fimm(float32(math.Sqrt2-1)))
	f.op("sub.f32 %s, %s, 0f3F800000", num, t)
	f.op("add.f32 %s, %s, 0f3F800000", den, t)
	f.op("div.rn.f32 %s, %s, %s", u, num, den)
	f.op("selp.f32 %s, %s, %s, %s", u, u, t, mid)
	s, v := f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", s, u, u)
	f.op("fma.rn.f32 %s, %s, %s, 0fBF800000", v, s, fimm(float32(2/atanSpan)))
	r := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", r, u, f.horner(atanCoeffs(), v))
	// + π/4 where mid, then π/2 - r where inv, each constant in two parts.
	lo, hi := f.reg(cF32), f.reg(cF32)
	f.op("selp.f32 %s, %s, 0f00000000, %s", lo, fimm(pio4Lo), mid)
	f.op("selp.f32 %s, %s, 0f00000000, %s", hi, fimm(pio4Hi), mid)
	f.op("add.f32 %s, %s, %s", r, r, lo)
	f.op("add.f32 %s, %s, %s", r, r, hi)
	c := f.reg(cF32)
	f.op("sub.f32 %s, %s, %s", c, fimm(pio2Lo), r)
	f.op("add.f32 %s, %s, %s", c, c, fimm(pio2Hi))
	f.op("selp.f32 %s, %s, %s, %s", r, c, r, inv)
	f.op("copysign.f32 %s, %s, %s", r, x, r)
	return f.keepNaN(x, r)
}

// asin is atan(x / √((1-x)(1+x))): ±π/2 at ±1 (x/0), NaN past them
// (the square root of a negative).
func (f *fn) asin(x string) string {
	a, b := f.reg(cF32), f.reg(cF32)
	f.op("sub.f32 %s, 0f3F800000, %s", a, x)
	f.op("add.f32 %s, %s, 0f3F800000", b, x)
	f.op("mul.f32 %s, %s, %s", a, a, b)
	f.op("sqrt.rn.f32 %s, %s", a, a)
	f.op("div.rn.f32 %s, %s, %s", a, x, a)
	return f.atan(a)
}

// acos is 2·atan(√((1-x)/(1+x))): π at -1 (a quotient of +Inf), 0 at 1,
// NaN past them and at ±Inf (Inf/Inf).
func (f *fn) acos(x string) string {
	a, b := f.reg(cF32), f.reg(cF32)
	f.op("sub.f32 %s, 0f3F800000, %s", a, x)
	f.op("add.f32 %s, %s, 0f3F800000", b, x)
	f.op("div.rn.f32 %s, %s, %s", a, a, b)
	f.op("sqrt.rn.f32 %s, %s", a, a)
	r, y := f.atan(a), f.reg(cF32)
	f.op("add.f32 %s, %s, %s", y, r, r)
	return y
}

// log1p is log(1 + u) as log(w)·u/(w - 1), w = 1 + u (w - 1 is exact, and
// the quotient corrects w's rounding); u itself where w rounds to 1, and
// log(w) past 2^23, where the quotient is 1 but Inf/Inf would be NaN.
func (f *fn) log1p(u string) string {
	w, d := f.reg(cF32), f.reg(cF32)
	f.op("add.f32 %s, %s, 0f3F800000", w, u)
	f.op("sub.f32 %s, %s, 0f3F800000", d, w)
	l := f.log(w)
	y := f.reg(cF32)
	f.op("div.rn.f32 %s, %s, %s", y, u, d)
	f.op("mul.f32 %s, %s, %s", y, y, l)
	p := f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, 0f00000000", p, d)
	f.op("selp.f32 %s, %s, %s, %s", y, u, y, p)
	f.op("setp.ge.f32 %s, %s, 0f4B000000", p, u)
	f.op("selp.f32 %s, %s, %s, %s", y, l, y, p)
	return y
}

// bigLog is log(a) + ln2: asinh(a) and acosh(a) past 2^12, where a² + 1
// rounds to a² (and overflows from 2^64).
func (f *fn) bigLog(a string) string {
	y := f.reg(cF32)
	f.op("add.f32 %s, %s, %s", y, f.log(a), fimm(float32(math.Ln2)))
	return y
}

// asinh is log1p(a + a²/(1 + √(1 + a²))) for a = |x| ≤ 2^12, else
// log(2a), with x's sign.
func (f *fn) asinh(x string) string {
	a := f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	t, r := f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", t, a, a)
	f.op("add.f32 %s, %s, 0f3F800000", r, t)
	f.op("sqrt.rn.f32 %s, %s", r, r)
	f.op("add.f32 %s, %s, 0f3F800000", r, r)
	f.op("div.rn.f32 %s, %s, %s", t, t, r)
	f.op("add.f32 %s, %s, %s", t, t, a)
	small := f.log1p(t)
	p, y := f.reg(cPred), f.reg(cF32)
	f.op("setp.gt.f32 %s, %s, 0f45800000", p, a) // 2^12; false for NaN
	f.op("selp.f32 %s, %s, %s, %s", y, f.bigLog(a), small, p)
	f.op("copysign.f32 %s, %s, %s", y, x, y)
	return f.keepNaN(x, y)
}

// acosh is log1p(t + √(t(2 + t))), t = x - 1, for x ≤ 2^12, else
// log(2x); NaN below 1.
func (f *fn) acosh(x string) string {
	t, r := f.reg(cF32), f.reg(cF32)
	f.op("sub.f32 %s, %s, 0f3F800000", t, x)
	f.op("add.f32 %s, %s, 0f40000000", r, t)
	f.op("mul.f32 %s, %s, %s", r, r, t)
	f.op("sqrt.rn.f32 %s, %s", r, r)
	f.op("add.f32 %s, %s, %s", r, r, t)
	small := f.log1p(r)
	p, y := f.reg(cPred), f.reg(cF32)
	f.op("setp.gt.f32 %s, %s, 0f45800000", p, x)
	f.op("selp.f32 %s, %s, %s, %s", y, f.bigLog(x), small, p)
	f.op("setp.lt.f32 %s, %s, 0f3F800000", p, x)
	f.op("selp.f32 %s, 0f7FC00000, %s, %s", y, y, p)
	return f.keepNaN(x, y)
}

// atanh is log1p(2a/(1 - a))/2 for a = |x|, with x's sign: ±Inf at ±1
// (2/0), NaN past them.
func (f *fn) atanh(x string) string {
	a, d := f.reg(cF32), f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	f.op("sub.f32 %s, 0f3F800000, %s", d, a)
	u := f.reg(cF32)
	f.op("add.f32 %s, %s, %s", u, a, a)
	f.op("div.rn.f32 %s, %s, %s", u, u, d)
	y := f.reg(cF32)
	f.op("mul.f32 %s, %s, 0f3F000000", y, f.log1p(u))
	p := f.reg(cPred)
	f.op("setp.gt.f32 %s, %s, 0f3F800000", p, a)
	f.op("selp.f32 %s, 0f7FC00000, %s, %s", y, y, p)
	f.op("copysign.f32 %s, %s, %s", y, x, y)
	return f.keepNaN(x, y)
}

// intOnly emits the remainders (the float ones through fmod) and the U8
// shifts. ok is false for other ops.
// fmod is C's fmod of f32 x and y, exact: PTX has no float remainder,
// and x - trunc(x/y)·y rounds. In f64 (where every f32, denormals too,
// is normal) |x| is reduced by |y|·2^k, k chosen so that the multiple is
// at most |x| and more than |x|/2: the subtraction is then exact
// (Sterbenz) and lowers |x|'s exponent, so the loop runs at most about
// 280 times (the f32 exponent span). The result has x's sign. floor
// (Mod) then adds y where the signs differ, and gives a zero y's sign.
// y = 0, x = ±Inf or a NaN give NaN; y = ±Inf gives x.
func (f *fn) fmod(x, y string, floor bool) string {
	ax, ay := f.reg(cF32), f.reg(cF32)
	f.op("abs.f32 %s, %s", ax, x)
	f.op("abs.f32 %s, %s", ay, y)
	bad, p := f.reg(cPred), f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, 0f00000000", bad, ay)
	f.op("setp.equ.f32 %s, %s, 0f7F800000", p, ax) // Inf or NaN
	f.op("or.pred %s, %s, %s", bad, bad, p)
	f.op("setp.nan.f32 %s, %s, %s", p, ay, ay)
	f.op("or.pred %s, %s, %s", bad, bad, p)
	a, b := f.reg(cF64), f.reg(cF64)
	f.op("cvt.f64.f32 %s, %s", a, ax)
	f.op("cvt.f64.f32 %s, %s", b, ay)
	f.op("selp.f64 %s, 0d0000000000000000, %s, %s", a, a, bad) // the loop ends at once
	f.op("selp.f64 %s, 0d3FF0000000000000, %s, %s", b, b, bad)
	loop, done := f.label("fmod"), f.label("fmod_done")
	f.place(loop)
	f.op("setp.lt.f64 %s, %s, %s", p, a, b)
	f.op("@%s bra %s", p, done)
	ai, bi, k := f.reg(cB64), f.reg(cB64), f.reg(cB64)
	f.op("mov.b64 %s, %s", ai, a)
	f.op("mov.b64 %s, %s", bi, b)
	f.op("shr.u64 %s, %s, 52", ai, ai) // exponents: both positive and normal
	f.op("shr.u64 %s, %s, 52", k, bi)
	f.op("sub.s64 %s, %s, %s", k, ai, k)
	f.op("shl.b64 %s, %s, 52", k, k)
	f.op("add.s64 %s, %s, %s", bi, bi, k)
	t := f.reg(cF64)
	f.op("mov.b64 %s, %s", t, bi) // |y|·2^k with |x|'s exponent
	f.op("setp.gt.f64 %s, %s, %s", p, t, a)
	f.op("@%s mul.f64 %s, %s, 0d3FE0000000000000", p, t, t)
	f.op("sub.f64 %s, %s, %s", a, a, t)
	f.op("bra %s", loop)
	f.place(done)
	r := f.reg(cF32)
	f.op("cvt.rn.f32.f64 %s, %s", r, a) // exact: the remainder is an f32
	f.op("copysign.f32 %s, %s, %s", r, x, r)
	if floor {
		nz, q := f.reg(cPred), f.reg(cPred)
		f.op("setp.ne.f32 %s, %s, 0f00000000", nz, r)
		rb, yb := f.reg(cB32), f.reg(cB32)
		f.op("mov.b32 %s, %s", rb, r)
		f.op("mov.b32 %s, %s", yb, y)
		f.op("xor.b32 %s, %s, %s", rb, rb, yb) // the sign bit differs
		f.op("setp.lt.s32 %s, %s, 0", q, rb)
		f.op("and.pred %s, %s, %s", q, q, nz)
		sum := f.reg(cF32)
		f.op("add.f32 %s, %s, %s", sum, r, y)
		f.op("selp.f32 %s, %s, %s, %s", r, sum, r, q)
		z := f.f32(0)
		f.op("copysign.f32 %s, %s, %s", z, y, z)
		f.op("selp.f32 %s, %s, %s, %s", r, r, z, nz)
	}
	f.op("selp.f32 %s, 0f7FC00000, %s, %s", r, r, bad)
	return r
}

func (f *fn) intOnly(in Instr, a, b val) (val, bool, error) {
	switch in.Op {
	case graph.OpMod, graph.OpFmod, graph.OpShiftLeft, graph.OpShiftRight:
	default:
		return val{}, false, nil
	}
	if a.k == kF32 {
		if in.Op == graph.OpShiftLeft || in.Op == graph.OpShiftRight {
			return val{}, true, fmt.Errorf("no GPU kernel for %v on %v", in.Op, a.dt)
		}
		return val{f.fmod(a.r, b.r, in.Op == graph.OpMod), kF32, in.DType}, true, nil
	}
	t, w := selType(a.k), "b32"
	if a.k == kS64 {
		w = "b64"
	}
	r := f.reg(a.k.class())
	switch in.Op {
	case graph.OpShiftLeft: // U8 in an s32: amounts past 32 clamp to 32
		f.op("shl.b32 %s, %s, %s", r, a.r, b.r)
		f.op("and.b32 %s, %s, 255", r, r)
	case graph.OpShiftRight:
		f.op("shr.u32 %s, %s, %s", r, a.r, b.r)
	default:
		// rem truncates (C's %); MinInt % -1 is 0, as Go's.
		p := f.reg(cPred)
		f.op("rem.%s %s, %s, %s", t, r, a.r, b.r)
		f.op("setp.eq.%s %s, %s, -1", t, p, b.r)
		f.op("selp.%s %s, 0, %s, %s", t, r, r, p)
		if in.Op == graph.OpMod { // add b where r ≠ 0 and the signs differ
			x, q, s := f.reg(a.k.class()), f.reg(cPred), f.reg(a.k.class())
			f.op("xor.%s %s, %s, %s", w, x, r, b.r)
			f.op("setp.lt.%s %s, %s, 0", t, q, x)
			f.op("setp.ne.%s %s, %s, 0", t, p, r)
			f.op("and.pred %s, %s, %s", p, p, q)
			f.op("add.%s %s, %s, %s", t, s, r, b.r)
			f.op("selp.%s %s, %s, %s, %s", t, r, s, r, p)
		}
	}
	return val{r, a.k, in.DType}, true, nil
}
