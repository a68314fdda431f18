package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkGemvColdWeights runs one-row products by pre-packed weights (a
// classifier's: MobileNetV2's 1280×1000, ResNet-18's 512×1000, and a
// 4096×1024 projection) on one thread, their weights warm (run after run)
// and cold (64 MiB written between runs, untimed, so that the weights
// stream from memory as a model's classifier reads them), reporting the
// weights' read rate (wGB/s).
func BenchmarkGemvColdWeights(b *testing.B) {
	for _, s := range []struct{ k, n int }{{1280, 1000}, {512, 1000}, {4096, 1024}} {
		for _, cold := range []bool{false, true} {
			b.Run(fmt.Sprintf("k%d_n%d/cold=%v", s.k, s.n, cold), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				a, w, c := make([]float32, s.k), make([]float32, s.k*s.n), make([]float32, s.n)
				for _, x := range [][]float32{a, w} {
					for i := range x {
						x[i] = gemmRand(r)
					}
				}
				g, err := NewGemm(GemmConfig{M: 1, N: s.n, K: s.k, Alpha: 1}, BestGemm(), Par{})
				if err != nil {
					b.Fatal(err)
				}
				args := &GemmArgs{A: a, C: c, PackedB: new(PackedB)}
				if err := g.PackB(args.PackedB, w); err != nil {
					b.Fatal(err)
				}
				var flush []float32
				if cold {
					flush = make([]float32, 16<<20)
				}
				for b.Loop() {
					if cold {
						b.StopTimer()
						for i := 0; i < len(flush); i += 16 {
							flush[i]++
						}
						b.StartTimer()
					}
					if err := g.Run(args); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(4*float64(s.k*s.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "wGB/s")
			})
		}
	}
}
