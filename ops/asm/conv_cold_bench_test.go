package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvColdWeights runs DenseNet-121's convolutions over tiny
// planes (its 1×1 bottlenecks and 3×3 growth convs at 2×2, 4×4 and 8×8)
// one thread, with their weights warm (one copy, run after run) and cold
// (64 copies of 128-576 KiB taken in turn, so that each run's weights have
// left the caches, as a model of 31 MiB of weights leaves them), and cold
// with ColdWeights set; reporting the weights' read rate (wGB/s).
func BenchmarkConvColdWeights(b *testing.B) {
	for _, s := range []struct{ c, m, hw, k int }{{768, 128, 2, 1}, {512, 128, 4, 1}, {512, 32, 2, 3}, {768, 128, 8, 1}} {
		g := tgeom{N: 1, C: s.c, H: s.hw, W: s.hw, M: s.m, KH: s.k, KW: s.k, PT: s.k / 2, PL: s.k / 2, PB: s.k / 2, PR: s.k / 2}.normalised()
		for _, mode := range []struct {
			name   string
			copies int
			cold   bool
		}{{"warm", 1, false}, {"cold", 64, false}, {"cold+ColdWeights", 64, true}} {
			b.Run(fmt.Sprintf("%dto%d_%dx%d_k%d/%s", s.c, s.m, s.hw, s.hw, s.k, mode.name), func(b *testing.B) {
				c, err := NewConv2D(g, false, nil, nil, Par{})
				if err != nil {
					b.Fatal(err)
				}
				if mode.cold {
					c.ColdWeights()
				}
				r := rand.New(rand.NewPCG(1, 2))
				x, _, _ := convOperands(r, g, false)
				pws := make([]ConvWeights, mode.copies)
				for i := range pws {
					_, w, _ := convOperands(r, g, false)
					if err := c.PackWeights(&pws[i], w, nil); err != nil {
						b.Fatal(err)
					}
				}
				args := &ConvArgs{X: x, Y: make([]float32, g.N*g.M*g.OH*g.OW)}
				i := 0
				for b.Loop() {
					args.Packed = &pws[i]
					if err := c.RunArgs(args); err != nil {
						b.Fatal(err)
					}
					i = (i + 1) % mode.copies
				}
				b.ReportMetric(4*float64(s.c*s.m*s.k*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "wGB/s")
			})
		}
	}
}
