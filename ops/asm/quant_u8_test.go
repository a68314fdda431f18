package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeU8 runs every row variant's QuantizeU8 against the Go twin
// (which ops' TestQuantizeRow checks against the float64 formula) over
// halves and their float32 neighbours, random and special quotients
// (±Inf, NaN, ±0, huge), five zero points, two scales, every length to
// 40 and a long row, and checks that no byte past the row is written.
func TestQuantizeU8(t *testing.T) {
	var xs []float32
	for h := -1200; h <= 1200; h++ {
		v := float32(h) / 2
		xs = append(xs, v, math.Nextafter32(v, float32(math.Inf(1))), math.Nextafter32(v, float32(math.Inf(-1))))
	}
	r := rand.New(rand.NewPCG(24, 6))
	for range 5000 {
		xs = append(xs, float32(r.NormFloat64()*300), math.Float32frombits(r.Uint32()))
	}
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), 1e30, -1e30)
	for _, k := range RowVariants() {
		for _, z := range []uint8{0, 1, 128, 254, 255} {
			for _, s := range []float32{1, 0.0317} {
				want := make([]uint8, len(xs))
				quantizeU8Go(want, xs, s, z)
				check := func(x []float32, off int) {
					got := make([]uint8, len(x)+8)
					for i := range got {
						got[i] = 0xA5
					}
					if err := QuantizeU8(k, got[:len(x)], x, s, z); err != nil {
						t.Fatal(err)
					}
					for i := range x {
						if got[i] != want[off+i] {
							t.Fatalf("%s z %d s %v n %d: q[%d] of %v = %d, want %d", k.Name, z, s, len(x), i, x[i], got[i], want[off+i])
						}
					}
					for i := len(x); i < len(got); i++ {
						if got[i] != 0xA5 {
							t.Fatalf("%s n %d: byte %d past the row written", k.Name, len(x), i)
						}
					}
				}
				check(xs, 0)
				for n := 0; n <= 40; n++ {
					check(xs[n*7:n*7+n], n*7)
				}
			}
		}
	}
	if QuantizeU8(nil, make([]uint8, 3), make([]float32, 4), 1, 0) == nil {
		t.Error("a short q accepted")
	}
}
