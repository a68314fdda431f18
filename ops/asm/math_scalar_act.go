package asm

import "math"

// Tanh and the sigmoid-gated activations (see math_scalar.go for the
// rules these reference loops follow).

const (
	// Below ewTanhSmall, tanh(x) = x + x³·P(x²); above, (1-e)/(1+e) with
	// e = exp(-2|x|), whose rounding errors shrink as e does.
	ewTanhSmall = float32(0.625)
	// (tanh(x) - x)/x³ ≈ c0 + c1·s + ... + c4·s⁴, s = x², on [0, 0.625],
	// error 4.4e-9 relative to tanh (0.07 ulp).
	ewTanhC0 = float32(-0.33333281942120496)
	ewTanhC1 = float32(0.13331442200207141)
	ewTanhC2 = float32(-0.05373971521388805)
	ewTanhC3 = float32(0.02063908758828819)
	ewTanhC4 = float32(-0.005704987327803601)

	// ewSiluMin: silu(x) is -0 below about -109; clamping keeps
	// x·exp(x) finite (and from being -Inf·0 at -Inf, which
	// ewNaNAtMinusInf sets afterwards).
	ewSiluMin = float32(-120)
	// ewGeluTanhMax: beyond ±20 GELU-tanh is x or -0, and clamping keeps
	// x³ finite.
	ewGeluTanhMax = float32(20)
)

// 0.044715 and 2·√(2/π) as float32 pairs (hi + lo).
var (
	ewGTK     = float32(0.044715)
	ewGTKLo   = float32(0.044715 - float64(ewGTK))
	ewGT2C    = float32(2 * math.Sqrt(2/math.Pi))
	ewGT2CLo  = float32(2*math.Sqrt(2/math.Pi) - float64(ewGT2C))
	ewSignBit = uint32(1 << 31)
)

// ewNaNAtMinusInf is y, or NaN where x is -Inf. The x·gate(x)
// activations are NaN there (-Inf·0 in IEEE arithmetic, see graph.Silu),
// where their clamped cores compute the limit -0; the assembly does the
// same with a compare and a blend (AVX-512: one VFIXUPIMMPS) after the
// core.
func ewNaNAtMinusInf(x, y float32) float32 {
	if x == float32(math.Inf(-1)) {
		return float32(math.NaN())
	}
	return y
}

// ewTanh is the hyperbolic tangent; tiny x give x, ±Inf give ±1.
func ewTanh(x float32) float32 {
	ax := float32(math.Abs(float64(x)))
	if ax < ewTanhSmall {
		s := float32(x * x)
		q := float32(ewTanhC4*s) + ewTanhC3
		q = float32(q*s) + ewTanhC2
		q = float32(q*s) + ewTanhC1
		q = float32(q*s) + ewTanhC0
		// tanh has x's sign; setting it keeps tanh(-0) = -0, which
		// -0 + (+0) would lose.
		t := x + float32(float32(x*s)*q)
		return math.Float32frombits(math.Float32bits(t) | math.Float32bits(x)&ewSignBit)
	}
	p, n := ewExpCore(-2*ax, 0)
	e := ewScale(p, n)
	t := (1 - e) / (1 + e)
	return math.Float32frombits(math.Float32bits(t) | math.Float32bits(x)&ewSignBit)
}

// ewGated is m·sigmoid(h + l) for the gate v = h + l (l an error term):
// with a = -|v| and e^a = p·2^n, it is m/(1 + e^a) for v >= 0 and
// (m·p·2^n)/(1 + e^a) for v < 0, where scaling the product last keeps
// full precision down to the subnormals. mNeg is the multiplier of the
// v < 0 branch (m clamped so that -Inf·0 cannot occur).
func ewGated(m, mNeg, h, l float32) float32 {
	// a = -|v|: set h's sign bit, and flip l's sign where h's was clear.
	hb := math.Float32bits(h)
	ah := math.Float32frombits(hb | ewSignBit)
	al := math.Float32frombits(math.Float32bits(l) ^ (hb&ewSignBit ^ ewSignBit))
	p, n := ewExpCore(ah, al)
	e := ewScale(p, n)
	if h < 0 {
		return ewScale(float32(mNeg*p), n) / (1 + e)
	}
	return m / (1 + e)
}

// ewSigmoid is 1/(1+e^-x).
func ewSigmoid(x float32) float32 { return ewGated(1, 1, x, 0) }

// ewSilu is x·sigmoid(x); NaN at -Inf.
func ewSilu(x float32) float32 {
	xc := max(x, ewSiluMin)
	return ewNaNAtMinusInf(x, ewGated(xc, xc, xc, 0))
}

// ewGeluTanh is x/2·(1 + tanh(u)), u = √(2/π)·(x + 0.044715x³), computed
// as x·sigmoid(2u) with 2u carried as hi + lo: for negative x the result
// is about x·e^(2u), so an absolute error in 2u is a relative error in
// the result, and 2u reaches -100 before the result underflows. NaN at
// -Inf.
func ewGeluTanh(x float32) float32 {
	xc := min(max(x, -ewGeluTanhMax), ewGeluTanhMax)
	// x³ = x3h + x3l
	x2h := float32(xc * xc)
	x2l := ewFMAExact(xc, xc, -x2h)
	x3h := float32(x2h * xc)
	x3l := ewFMAExact(x2h, xc, -x3h) + float32(x2l*xc)
	// k·x³ = kh + kl
	kh := float32(ewGTK * x3h)
	kl := ewFMAExact(ewGTK, x3h, -kh) + float32(float32(ewGTK*x3l)+float32(ewGTKLo*x3h))
	// w = xc + k·x³ = wh + wl (two-sum)
	wh := xc + kh
	bb := wh - xc
	wl := float32(xc-(wh-bb)) + (kh - bb) + kl
	// v = 2√(2/π)·w = vh + vl
	vh := float32(ewGT2C * wh)
	vl := ewFMAExact(ewGT2C, wh, -vh) + float32(float32(ewGT2C*wl)+float32(ewGT2CLo*wh))
	return ewNaNAtMinusInf(x, ewGated(x, xc, vh, vl))
}
