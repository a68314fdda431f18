package ptx

import (
	"math"
	"testing"
)

// Go float32 mirrors of the PTX math sequences in math.go, instruction
// for instruction, with the hardware ex2.approx modelled as exact. They
// check the algorithms and their constants against float64 math; the
// 2e-6 tolerance of kiln's transcendental kernels leaves room for the
// hardware's 2 ulp on top of the bound checked here.

func fma32(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }

func horner32(c []float32, x float32) float32 {
	r := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		r = fma32(r, x, c[i])
	}
	return r
}

func exp32(x float32) float32 {
	if x != x {
		return x
	}
	c := min(max(x, -105), 89.5)
	n := float32(math.RoundToEven(float64(c * float32(log2e))))
	r := fma32(n, -ln2Hi, c)
	r = fma32(n, -ln2Lo, r)
	e := float32(math.Exp2(float64(r * float32(log2e))))
	ni := int32(n)
	n1 := ni >> 1
	n2 := ni - n1
	s1 := math.Float32frombits(uint32(n1+127) << 23)
	s2 := math.Float32frombits(uint32(n2+127) << 23)
	return e * s1 * s2
}

func log32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x < 0:
		return float32(math.NaN())
	case x == 0:
		return float32(math.Inf(-1))
	case math.IsInf(float64(x), 1):
		return x
	}
	adj := int32(0)
	xs := x
	if x < math.SmallestNonzeroFloat32*(1<<23) { // below 2^-126
		xs, adj = x*(1<<23), -23
	}
	bits := math.Float32bits(xs)
	e := int32(bits>>23) - 127 + adj
	m := math.Float32frombits(bits&0x7fffff | 0x3f800000)
	if m > math.Float32frombits(0x3FB504F3) {
		m *= 0.5
		e++
	}
	f := (m - 1) / (m + 1)
	p := horner32(logCoeffs, f*f)
	ef := float32(e)
	lm := fma32(ef, ln2Lo, f*p)
	return fma32(ef, ln2Hi, lm)
}

func tanh32(x float32) float32 {
	a := float32(math.Abs(float64(x)))
	if a < tanhSmall {
		return x * horner32(tanhCoeffs, x*x)
	}
	y := 1 - 2/(exp32(a+a)+1)
	return float32(math.Copysign(float64(y), float64(x)))
}

func erfcLarge32(a, hi, lo float32) float32 {
	u := 1 / a
	h := horner32(erfcxCoeffs(), fma32(u, 2, -1))
	e := exp32(-hi)
	c := fma32(e, -lo, e)
	return c * h * u
}

func sq32(a float32) (float32, float32, float32) {
	a = min(max(a, 1), 10.5)
	hi := a * a
	return a, hi, fma32(a, a, -hi)
}

func erf32(x float32) float32 {
	a := float32(math.Abs(float64(x)))
	if a < 1 {
		return x * horner32(erfCoeffs, x*x)
	}
	return float32(math.Copysign(float64(1-erfcLarge32(sq32(a))), float64(x)))
}

func gelu32(x float32) float32 {
	if math.IsInf(float64(x), -1) {
		return float32(math.Copysign(0, -1))
	}
	z := x * float32(1/math.Sqrt2)
	g := 1 + erf32(z)
	if z <= -1 {
		xc := max(min(x, -math.Sqrt2), math.Float32frombits(0xC16DA12F))
		x2 := xc * xc
		g = erfcLarge32(xc*float32(-1/math.Sqrt2), x2*0.5, fma32(xc, xc, -x2)*0.5)
	}
	return x * 0.5 * g
}

// sweep yields positive and negative values from tiny to huge, dense
// around 1.
func sweep(lo, hi float64, n int) []float32 {
	var out []float32
	for i := 0; i <= n; i++ {
		v := lo + (hi-lo)*float64(i)/float64(n)
		out = append(out, float32(v))
	}
	return out
}

func relErr(got float32, want float64) float64 {
	if math.IsNaN(want) {
		if got != got {
			return 0
		}
		return math.Inf(1)
	}
	if got != got {
		return math.Inf(1) // NaN where a number is expected
	}
	if math.IsInf(want, 0) {
		if float64(got) == want {
			return 0
		}
		return math.Inf(1)
	}
	// Relative, with an absolute floor at the smallest normal float32.
	return math.Abs(float64(got)-want) / math.Max(math.Abs(want), 1.2e-38)
}

func checkFunc(t *testing.T, name string, got func(float32) float32, want func(float64) float64, xs []float32, tol float64) {
	t.Helper()
	worst, at := 0.0, float32(0)
	for _, x := range xs {
		// The reference is the float64 function of the float32 input,
		// rounded once: what the CPU reference kernels compute.
		w := float64(float32(want(float64(x))))
		if e := relErr(got(x), w); e > worst {
			worst, at = e, x
		}
	}
	if worst > tol {
		t.Errorf("%s: worst relative error %.3g at x=%g (got %g, want %g)", name, worst, at, got(at), float32(want(float64(at))))
	}
}

func TestMathMirror(t *testing.T) {
	wide := append(sweep(-100, 100, 200001), sweep(-2, 2, 100001)...)
	checkFunc(t, "exp", exp32, math.Exp, append(wide, sweep(-104, 89, 100001)...), 1e-6)
	pos := append(sweep(1e-6, 10, 200001), sweep(0.5, 2, 100001)...)
	pos = append(pos, 1e-40, 1e-30, 3e38, 0.999999, 1.000001)
	checkFunc(t, "log", log32, math.Log, pos, 1e-6)
	checkFunc(t, "tanh", tanh32, math.Tanh, append(wide, sweep(-0.5, 0.5, 100001)...), 1e-6)
	checkFunc(t, "erf", erf32, math.Erf, append(sweep(-6, 6, 200001), sweep(-1.1, 1.1, 100001)...), 1e-6)
	gelu := func(x float64) float64 { return x / 2 * (1 + math.Erf(x/math.Sqrt2)) }
	// Gelu's negative tail is tested relative to erfc, where the plain
	// formula above would itself cancel.
	geluTail := func(x float64) float64 {
		if x < -1 {
			return x / 2 * math.Erfc(-x/math.Sqrt2)
		}
		return gelu(x)
	}
	checkFunc(t, "gelu", gelu32, geluTail, append(sweep(-13, 10, 200001), sweep(-2, 2, 100001)...), 2e-6)
	for _, c := range []struct {
		name string
		got  float32
		want float64
	}{
		{"exp(-Inf)", exp32(float32(math.Inf(-1))), 0},
		{"exp(+Inf)", exp32(float32(math.Inf(1))), math.Inf(1)},
		{"exp(NaN)", exp32(float32(math.NaN())), math.NaN()},
		{"log(-1)", log32(-1), math.NaN()},
		{"log(0)", log32(0), math.Inf(-1)},
		{"tanh(+Inf)", tanh32(float32(math.Inf(1))), 1},
		{"erf(-Inf)", erf32(float32(math.Inf(-1))), -1},
		{"gelu(+Inf)", gelu32(float32(math.Inf(1))), math.Inf(1)},
	} {
		if relErr(c.got, c.want) != 0 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if g := gelu32(float32(math.Inf(-1))); g != 0 || !math.Signbit(float64(g)) {
		t.Errorf("gelu(-Inf) = %g, want -0", g)
	}
}
