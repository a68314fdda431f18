package asm

import "math"

// The error function and GELU (erf form); see math_scalar.go for the
// rules these reference loops follow. Both switch from an odd polynomial
// near 0 to a tail form, a Gaussian e^(-x²) or e^(-x²/2) times a
// polynomial in t = 1/(1 + a·|x|), which cancels nothing where the result
// is tiny. x² is carried as hi + lo so that the Gaussian keeps its
// relative accuracy out to the underflow, and the product is scaled by
// 2^n last, so that subnormal results round once.

const (
	// erf(x) = x·P(x²) below ewErfSmall: (erf(x)/x) ≈ c0 + ... + c5·s⁵,
	// s = x², on [0, 0.875], relative error 8.5e-9 (0.14 ulp).
	ewErfSmall = float32(0.875)
	ewErfC0m1  = float32(1.1283791574918294 - 1)
	ewErfC1    = float32(-0.3761255046428125)
	ewErfC2    = float32(0.11282455329843759)
	ewErfC3    = float32(-0.026791463024663308)
	ewErfC4    = float32(0.005032181287624253)
	ewErfC5    = float32(-0.0006203254893277873)
	// erfc(z) = e^(-z²)·t·K(t - t0), t = 1/(1 + z/2), on [0.875, 4]
	// (erf is 1 in float32 beyond 3.92): K fitted with relative error
	// 8.9e-9 (0.15 ulp).
	ewErfMax = float32(4)
	ewErfT0  = float32(0.5144927501678467)
	ewErfK0  = float32(0.5208680397876448)
	ewErfK1  = float32(0.7034518524931738)
	ewErfK2  = float32(0.5650603296311142)
	ewErfK3  = float32(0.13554158639694114)
	ewErfK4  = float32(-0.1790918923574976)
	ewErfK5  = float32(-0.0923702070664066)
	ewErfK6  = float32(0.09681784329449364)

	// GELU(x) = x·(1/2 + x·P(x²)) below ewGeluSmall, P(s) ≈ (Φ(x) - 1/2)/x
	// on [0, 0.75], relative error 2.4e-9 (0.04 ulp).
	ewGeluSmall = float32(0.75)
	ewGeluP0    = float32(0.3989422794357587)
	ewGeluP1    = float32(-0.06649029496160982)
	ewGeluP2    = float32(0.00997234897119548)
	ewGeluP3    = float32(-0.0011812850661972632)
	ewGeluP4    = float32(0.00010294057356525673)
	// Above, T = |x|·Φ(-|x|) = e^(-x²/2)·G(t - t0), t = 1/(1 + |x|/4),
	// on [0.75, 15] (T underflows beyond 14.3), relative error 9.1e-9
	// (0.15 ulp); GELU is x - T for x > 0 and -T below.
	ewGeluMax = float32(15)
	ewGeluT0  = float32(0.5263158082962036)
	ewGeluG0  = float32(0.37344303452287736)
	ewGeluG1  = float32(-0.1723690761785397)
	ewGeluG2  = float32(-0.5092184698440139)
	ewGeluG3  = float32(-0.9146591599823733)
	ewGeluG4  = float32(-1.123968026089459)
	ewGeluG5  = float32(-0.8993024632550575)
	ewGeluG6  = float32(-0.3236083283267824)
	ewGeluG7  = float32(0.16442369295297146)
	ewGeluG8  = float32(0.19726575555828965)
)

// ewErf is the error function: tiny x give 2x/√π, ±Inf give ±1.
func ewErf(x float32) float32 {
	ax := float32(math.Abs(float64(x)))
	if ax < ewErfSmall {
		s := float32(x * x)
		// erf(x) = x + x·(P(s) - 1): the last step adds a small
		// correction to an exact term, so P's rounding errors shrink.
		q := float32(ewErfC5*s) + ewErfC4
		q = float32(q*s) + ewErfC3
		q = float32(q*s) + ewErfC2
		q = float32(q*s) + ewErfC1
		q = float32(q*s) + ewErfC0m1
		return x + float32(x*q)
	}
	z := min(ax, ewErfMax)
	sh := float32(z * z)
	sl := ewFMAExact(z, z, -sh)
	p, n := ewExpCore(-sh, -sl)
	t := 1 / (z*0.5 + 1)
	u := t - ewErfT0
	k := float32(ewErfK6*u) + ewErfK5
	k = float32(k*u) + ewErfK4
	k = float32(k*u) + ewErfK3
	k = float32(k*u) + ewErfK2
	k = float32(k*u) + ewErfK1
	k = float32(k*u) + ewErfK0
	c := ewScale(float32(p*float32(t*k)), n)
	y := 1 - c
	return math.Float32frombits(math.Float32bits(y) | math.Float32bits(x)&ewSignBit)
}

// ewGelu is x·Φ(x) = x/2·(1 + erf(x/√2)): x for large x, -0 for very
// negative x, NaN at -Inf.
func ewGelu(x float32) float32 {
	ax := float32(math.Abs(float64(x)))
	if ax < ewGeluSmall {
		s := float32(x * x)
		q := float32(ewGeluP4*s) + ewGeluP3
		q = float32(q*s) + ewGeluP2
		q = float32(q*s) + ewGeluP1
		q = float32(q*s) + ewGeluP0
		return float32(x * (float32(x*q) + 0.5))
	}
	z := min(ax, ewGeluMax)
	sh := float32(z * z)
	sl := ewFMAExact(z, z, -sh)
	p, n := ewExpCore(-0.5*sh, -0.5*sl)
	// t = 4/(4+z) = th + tl to about 2^-40: the rounding errors of 4+z
	// and of the division would otherwise reach the result amplified by
	// G's slope (3x near z = 0.75).
	big, small := max(z, 4), min(z, 4)
	dh := big + small
	dl := (big - dh) + small // exact (Fast2Sum)
	th := 4 / dh
	rho := ewFMAExact(-th, dh, 4) // exact division residual
	tl := float32(rho-float32(th*dl)) * float32(th*0.25)
	u := (th - ewGeluT0) + tl
	g := float32(ewGeluG8*u) + ewGeluG7
	g = float32(g*u) + ewGeluG6
	g = float32(g*u) + ewGeluG5
	g = float32(g*u) + ewGeluG4
	g = float32(g*u) + ewGeluG3
	g = float32(g*u) + ewGeluG2
	g = float32(g*u) + ewGeluG1
	g = float32(g*u) + ewGeluG0
	tt := ewScale(float32(p*g), n)
	if x > 0 {
		return x - tt
	}
	return ewNaNAtMinusInf(x, -tt)
}
