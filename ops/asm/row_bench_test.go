package asm

import (
	"math/rand/v2"
	"testing"
)

// Per-primitive benchmarks (one 1536-float row, in L1), reporting bytes
// read per second.
func BenchmarkRowPrimitives(b *testing.B) {
	const n = 1536
	x, y := make([]float32, n), make([]float32, n)
	randRow(rand.New(rand.NewPCG(1, 1)), x, 4)
	for _, k := range RowVariants() {
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"sum", func() { k.sum(&x[0], n) }},
			{"max", func() { k.max(&x[0], n) }},
			{"MaxNum", func() { k.MaxNum(x) }},
			{"expShift", func() { k.expShift(&y[0], &x[0], n, 4) }},
			{"ExpScaleShift", func() { k.ExpScaleShift(y, x, 1, 4) }},
			{"scale", func() { k.scale(&y[0], n, 1.0001) }},
			{"norm", func() { k.norm(&y[0], &x[0], &x[0], &x[0], n, 1, 1, 0.5, 0, 1.5) }},
		} {
			b.Run(k.Name+"/"+c.name, func(b *testing.B) {
				b.SetBytes(4 * n)
				for b.Loop() {
					c.f()
				}
			})
		}
	}
}
