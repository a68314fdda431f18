package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScaleAddMax checks every variant's ScaleAddMax: y must hold
// round(round(y·s) + add) bit for bit, the return the max of it (NaN
// when a NaN is present), at every length and misalignment, with guards
// around y and the add row untouched.
func TestScaleAddMax(t *testing.T) {
	inf := float32(math.Inf(1))
	specials := []float32{inf, -inf, float32(math.NaN()), -1e4, 3e38}
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		for trial := range 3 {
			g := newGuarded(n, off)
			add := newGuarded(n, off+2)
			randRow(r, g.Data, 50)
			randRow(r, add.Data, 5)
			if trial > 0 && n > 0 {
				// A special in y or in the mask, at a random place.
				row := g.Data
				if trial == 2 {
					row = add.Data
				}
				row[r.IntN(n)] = specials[r.IntN(len(specials))]
			}
			x0 := append([]float32(nil), g.Data...)
			a0 := append([]float32(nil), add.Data...)
			const s = 0.37
			got := k.ScaleAddMax(g.Data, add.Data, s)
			g.check(t, "ScaleAddMax y")
			add.check(t, "ScaleAddMax add")
			want, nan := float32(math.Inf(-1)), false
			for i, v := range x0 {
				w := float32(float32(v*s) + a0[i])
				if math.Float32bits(g.Data[i]) != math.Float32bits(w) && !(w != w && g.Data[i] != g.Data[i]) {
					t.Fatalf("y[%d] = %v, want %v (y %v add %v)", i, g.Data[i], w, v, a0[i])
				}
				if add.Data[i] != a0[i] && !(a0[i] != a0[i]) {
					t.Fatal("add changed")
				}
				nan = nan || w != w
				if w > want {
					want = w
				}
			}
			if nan {
				if got == got {
					t.Fatalf("max %v, want NaN", got)
				}
			} else if got != want {
				t.Fatalf("max %v, want %v", got, want)
			}
		}
	})
}
