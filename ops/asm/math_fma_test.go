package asm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fmaExact is a·b + c rounded once to float32 (to nearest, ties to
// even), computed exactly with big.Float.
func fmaExact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// TestEwFMA checks ewFMA, the twins' once-rounded multiply-add, bit for
// bit against exact arithmetic: on random operands of every magnitude,
// on the exponential's own (reduced argument and coefficients), and on
// sums built to fall just off a float32 midpoint by less than a float64
// ulp, where rounding to float64 and then to float32 gets the wrong side
// (the test checks that the naive way does fail there, so the cases
// exercise the correction).
func TestEwFMA(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(a, b, c float32) {
		t.Helper()
		got, want := ewFMA(a, b, c), fmaExact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("ewFMA(%g, %g, %g) = %g (%#08x), want %g (%#08x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	anyFloat := func() float32 {
		v := math.Float32frombits(r.Uint32())
		if v != v || math.IsInf(float64(v), 0) {
			return 1
		}
		return v
	}
	for range 200000 {
		check(anyFloat(), anyFloat(), anyFloat())
	}
	for range 200000 { // the exponential's: r in [-0.35, 0.35], c0..c4
		x := float32(r.Float64()*0.7 - 0.35)
		q := float32(r.Float64()*0.6 + 0.4)
		check(x, q, ewExpC3)
		check(q, x, ewExpC0)
		check(float32(x*x), q, x)
		check(-float32(r.IntN(256)-128), ewLn2Lo, x)
	}
	naiveWrong := 0
	for k := 1; k < 300; k++ {
		// (2^-24·(1 + k·2^-23)) · (1 - k·2^-23) = 2^-24 - k²·2^-70: added to
		// 1 + 2^-23 it lies k²·2^-70 below the midpoint 1 + 3·2^-24, which
		// float64 rounds to the midpoint itself and float32 then to even.
		for _, sign := range []float32{1, -1} {
			a := sign * float32(math.Ldexp(1+float64(k)*0x1p-23, -24))
			b := float32(1 - float64(k)*0x1p-23)
			c := sign * float32(1+0x1p-23)
			check(a, b, c)
			if float32(float64(a)*float64(b)+float64(c)) != fmaExact(a, b, c) {
				naiveWrong++
			}
			b = float32(1 + float64(k)*0x1p-23) // now above the midpoint
			check(a, b, c)
			check(-a, b, c)
		}
	}
	if naiveWrong == 0 {
		t.Fatal("no crafted case trips the double rounding: the tie cases test nothing")
	}
	check(float32(math.MaxFloat32), 2, 0) // overflow
	// 2^103·(1 + 2^-23) · (1 - 2^-23) = 2^103 - 2^57, plus MaxFloat32: just
	// below the overflow boundary MaxFloat32 + 2^103 by less than a float64
	// ulp (2^75), so MaxFloat32, where rounding twice gives +Inf.
	a, b := float32(0x1p103*(1+0x1p-23)), float32(1-0x1p-23)
	check(a, b, math.MaxFloat32)
	check(-a, b, -math.MaxFloat32)
	if !math.IsInf(float64(float32(float64(a)*float64(b)+math.MaxFloat32)), 1) {
		t.Fatal("the overflow case does not trip the double rounding")
	}
	check(float32(0x1p-149), 0.5, 0)         // to the smallest subnormal's tie
	check(float32(0x1p-149), 0.75, 0x1p-149) // subnormal sums
	check(0, 0, float32(math.Copysign(0, -1)))
}
