package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// specialFloats fills x with random values and some NaNs, zeros of
// both signs and infinities.
func specialFloats(r *rand.Rand, n int) []float32 {
	x := randFloats(r, n)
	specials := []float32{float32(math.NaN()), 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1))}
	for i := range x {
		if r.IntN(4) == 0 {
			x[i] = specials[r.IntN(len(specials))]
		}
	}
	return x
}

// builtinMax is the max of cs by Go's builtin's rules, spelled out: NaN
// wins, +0 beats -0 (-Inf when empty).
func builtinMax(cs ...float32) float32 {
	want := float32(math.Inf(-1))
	for _, c := range cs {
		switch {
		case c != c || want != want:
			want = float32(math.NaN())
		case c > want || (c == want && !math.Signbit(float64(c))):
			want = c
		}
	}
	return want
}

func TestMaxPool2x2Pairs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for _, ks := range append([]*convKernels{convKernelsGo}, convFamily.asm...) {
		for n := range 41 {
			x0, x1 := specialFloats(r, 2*n+1), specialFloats(r, 2*n+1)
			y := newGuarded(n, 1)
			if n > 0 {
				ks.maxPairs(&y.Data[0], &x0[0], &x1[0], n)
			}
			y.check(t, string(ks.feature))
			for i, v := range y.Data {
				want := builtinMax(x0[2*i], x0[2*i+1], x1[2*i], x1[2*i+1])
				if !sameBits(v, want) {
					t.Fatalf("%s n=%d: y[%d] = %v, want %v (from %v %v %v %v)", ks.feature, n, i, v, want, x0[2*i], x0[2*i+1], x1[2*i], x1[2*i+1])
				}
			}
		}
	}
}

// TestMaxPool2x2 checks the 2×2 pooling against Pool2D on odd and even
// sizes (floor mode drops the last row and column): the same values, NaN
// where it has NaN (the sign of a zero may differ: Pool2D's row fold does
// not order ±0; TestMaxPool2x2Pairs checks this kernel's against the builtin).
func TestMaxPool2x2(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, k := range RowVariants() {
		for trial := range 40 {
			g := tgeom{N: 1 + r.IntN(2), C: 1 + r.IntN(3), H: 2 + r.IntN(20), W: 2 + r.IntN(40), KH: 2, KW: 2, SH: 2, SW: 2}.normalised()
			g.M = g.C
			threads := 1 + trial%3
			t.Run(fmt.Sprintf("%s/%d", k.Name, trial), func(t *testing.T) {
				p, err := NewMaxPool2x2(g, k, goPar(threads))
				if err != nil || p == nil {
					t.Fatalf("no 2×2 pooling for %+v (%v)", g, err)
				}
				ref, err := NewPool2D(g, true, false, k, Par{})
				if err != nil {
					t.Fatal(err)
				}
				x := specialFloats(r, g.N*g.C*g.H*g.W)
				y, want := newGuarded(g.N*g.C*g.OH*g.OW, 1), make([]float32, g.N*g.C*g.OH*g.OW)
				if err := p.Run(y.Data, x); err != nil {
					t.Fatal(err)
				}
				y.check(t, "pool")
				if err := ref.Run(want, x); err != nil {
					t.Fatal(err)
				}
				for i, v := range y.Data {
					if !sameFloat(v, want[i]) {
						t.Fatalf("%+v: y[%d] = %v, want %v", g, i, v, want[i])
					}
				}
			})
		}
	}
	other := tgeom{N: 1, C: 2, H: 8, W: 8, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1}.normalised()
	other.M = other.C
	if p, err := NewMaxPool2x2(other, nil, Par{}); p != nil || err != nil {
		t.Errorf("3×3 window: got %v, %v; want nil, nil", p, err)
	}
}
