package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPhaseRun runs the chosen phase kernel on one 12-row panel
// and one tile of two segments, a step's inputs read from planes of the given size
// (small: L1; large: L2) at aligned or unaligned offsets, and reports
// GFLOP/s.
func BenchmarkPhaseRun(b *testing.B) {
	k := convFamily.best()
	if k.phase == nil {
		b.Skip("no vector phase kernel")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		planes, plane, taps int
		shift               int
	}{{64, 64, 4, 0}, {64, 64, 4, 1}, {64, 64, 1, 0}, {64, 64, 2, 1}, {128, 18 * 18, 4, 1}, {128, 32 * 18, 4, 0}} {
		b.Run(fmt.Sprintf("planes=%d/plane=%d/taps=%d/shift=%d", c.planes, c.plane, c.taps, c.shift), func(b *testing.B) {
			var off []int
			for ci := range c.planes {
				for t := range c.taps {
					off = append(off, ci*c.plane+t/2*16+(t%2)*c.shift)
				}
			}
			p, err := newPhaseProduct(k.phase, off)
			if err != nil {
				b.Fatal(err)
			}
			x := randFloats(r, c.planes*c.plane+64)
			a, bias := randFloats(r, 12*len(off)), randFloats(r, 12)
			y := make([]float32, 12*64)
			ts, err := NewPhaseTiles([]int{0, 16, 0, 32})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				p.Run(12, 12, a, bias, x, y, 0, 64, ts)
			}
			b.ReportMetric(2*12*32*float64(len(off))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
