package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAffinePlanes checks every elementwise variant's AffinePlanes (the
// vector kernel where there is one, the plane-by-plane calls elsewhere)
// against its definition, bit for bit: planes of 1 to 64 floats (under a
// block, whole blocks, tails), with and without Relu, into dst and in
// place, NaN, ±Inf and -0 among x, a and b; and the errors.
func TestAffinePlanes(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, k := range EwVariants() {
		for _, n := range []int{1, 3, 16, 17, 49, 64} {
			for _, relu := range []bool{false, true} {
				for _, inPlace := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/n=%d/relu=%v/inplace=%v", k.Name, n, relu, inPlace), func(t *testing.T) {
						planes := 1 + r.IntN(5)
						x, a, b := randFloats(r, planes*n), randFloats(r, planes), randFloats(r, planes)
						x[r.IntN(len(x))] = float32(math.NaN())
						x[r.IntN(len(x))] = float32(math.Inf(-1))
						x[r.IntN(len(x))] = float32(math.Copysign(0, -1))
						a[r.IntN(planes)] = float32(math.Copysign(0, -1))
						b[r.IntN(planes)] = float32(math.Inf(1))
						want := make([]float32, len(x))
						for q := range planes {
							for i := range n {
								v := float32(x[q*n+i]*a[q]) + b[q]
								if relu && v < 0 {
									v = 0
								}
								want[q*n+i] = v
							}
						}
						dst := newGuarded(len(x), 0)
						src := x
						if inPlace {
							copy(dst.Data, x)
							src = dst.Data
						}
						if err := k.AffinePlanes(dst.Data, src, n, a, b, relu); err != nil {
							t.Fatal(err)
						}
						dst.check(t, "affine planes")
						if !slicesBitsEq(dst.Data, want) {
							for i := range want {
								if !bitsEq(dst.Data[i], want[i]) {
									t.Fatalf("float %d (plane %d): %v, want %v", i, i/n, dst.Data[i], want[i])
								}
							}
						}
					})
				}
			}
		}
	}
	k := BestEw()
	x := make([]float32, 12)
	for _, err := range []error{
		k.AffinePlanes(x, x, 4, []float32{1, 2, 3}, []float32{1, 2}, false),
		k.AffinePlanes(x[:11], x, 4, []float32{1, 2, 3}, []float32{1, 2, 3}, false),
		k.AffinePlanes(x, x[:8], 4, []float32{1, 2, 3}, []float32{1, 2, 3}, true),
		k.AffinePlanes(x[1:], x[:11], 11, []float32{1}, []float32{1}, true),
	} {
		if err == nil {
			t.Error("bad operands: no error")
		}
	}
}
