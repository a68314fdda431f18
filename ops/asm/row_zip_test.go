package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestZip2AddRows checks every variant's Zip2Add against its definition
// (the float32 sum a[i] + b, c[i] + b, interleaved), over every length
// of rowLengths, misaligned starts, special values, guard words around
// the output, inputs unchanged.
func TestZip2AddRows(t *testing.T) {
	for _, k := range RowVariants() {
		for _, n := range rowLengths() {
			for off := range 3 {
				r := rand.New(rand.NewPCG(uint64(n), uint64(off+23)))
				a, c := make([]float32, n+off)[off:], make([]float32, n)
				specialRow(r, a, 3, off == 1)
				specialRow(r, c, 3, off == 2)
				b := float32(r.NormFloat64())
				a0, c0 := append([]float32(nil), a...), append([]float32(nil), c...)
				y := newGuarded(2*n, off)
				k.Zip2Add(y.Data, a, c, b)
				y.check(t, "Zip2Add")
				for i := range n {
					for j, want := range [2]float32{a0[i] + b, c0[i] + b} {
						got := y.Data[2*i+j]
						if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
							t.Fatalf("%s n=%d off=%d: y[%d] = %v, want %v", k.Name, n, off, 2*i+j, got, want)
						}
					}
				}
				for i := range n {
					if math.Float32bits(a[i]) != math.Float32bits(a0[i]) || math.Float32bits(c[i]) != math.Float32bits(c0[i]) {
						t.Fatalf("%s n=%d: input %d changed", k.Name, n, i)
					}
				}
			}
		}
	}
}
