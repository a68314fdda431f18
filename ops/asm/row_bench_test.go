package asm

import (
	"math/rand/v2"
	"testing"
)

// Per-primitive benchmarks (one 1536-float row, in L1), reporting bytes
// of the row per second (transpose8: of the 64×64 tile, 16 KiB).
func BenchmarkRowPrimitives(b *testing.B) {
	const n = 1536
	x, y := make([]float32, n), make([]float32, n)
	randRow(rand.New(rand.NewPCG(1, 1)), x, 4)
	acc := make([]float64, n)
	tsrc, tdst := make([]uint32, 64*64), make([]uint32, 64*64)
	for _, k := range RowVariants() {
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"sum", func() { k.sum(&x[0], n) }},
			{"sumSqDev", func() { k.sumSqDev(&x[0], n, 0.5) }},
			{"max", func() { k.max(&x[0], n) }},
			{"min", func() { k.min(&x[0], n) }},
			{"MaxNum", func() { k.MaxNum(x) }},
			{"expShift", func() { k.expShift(&y[0], &x[0], n, 4) }},
			{"ExpScaleShift", func() { k.ExpScaleShift(y, x, 1, 4) }},
			{"scale", func() { k.scale(&y[0], n, 1.0001) }},
			{"norm", func() { k.norm(&y[0], &x[0], &x[0], &x[0], n, 1, 1, 0.5, 0, 1.5) }},
			{"axpy", func() { k.axpy(&y[0], &x[0], n, 1e-4) }},
			{"accMax", func() { k.accMax(&y[0], &x[0], n) }},
			{"accAdd", func() { k.accAdd(&acc[0], &x[0], n) }},
			{"scaleAddMax", func() { k.scaleAddMax(&y[0], &x[0], n, 0.5) }},
			// One 64×64 tile of Transpose32 (16 KiB each way, in L1).
			{"transpose8", func() { k.transpose8(&tdst[0], 64, &tsrc[0], 64, 64, 64) }},
		} {
			b.Run(k.Name+"/"+c.name, func(b *testing.B) {
				b.SetBytes(4 * n)
				if c.name == "transpose8" {
					b.SetBytes(4 * 64 * 64)
				}
				for b.Loop() {
					c.f()
				}
			})
		}
	}
}
