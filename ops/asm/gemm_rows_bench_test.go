package asm

import (
	"fmt"
	"testing"
)

// BenchmarkGemmFewRows times products of a few rows by prepacked weights
// (an LSTM step's 2×48 by 48×192, small batches through dense layers) on
// the best variant, through its fewRows kernel (path=few) and through the
// micro-tile path it replaces (path=tiles), one thread.
func BenchmarkGemmFewRows(b *testing.B) {
	for _, s := range [][3]int{{1, 192, 48}, {1, 100, 256}, {1, 1000, 1024}, {1, 1024, 1024}, {1, 4096, 1024}, {2, 192, 48}, {4, 192, 48}, {4, 64, 64}, {2, 1024, 1024}, {4, 1024, 1024}, {3, 4096, 1024}} {
		for _, few := range []bool{true, false} {
			for _, threads := range []int{1, 2} {
				path := map[bool]string{true: "few", false: "tiles"}[few]
				b.Run(fmt.Sprintf("%dx%dx%d/path=%s/threads=%d", s[0], s[1], s[2], path, threads), func(b *testing.B) {
					v := *BestGemm()
					if v.fewRows == nil {
						b.Skip("no fewRows kernel")
					}
					if !few {
						v.fewRows = nil
					}
					par := Par{}
					if threads > 1 {
						par = gemmTestPar(threads)
					}
					g, err := NewGemm(GemmConfig{M: s[0], N: s[1], K: s[2], Alpha: 1}, &v, par)
					if err != nil {
						b.Fatal(err)
					}
					w := make([]float32, s[1]*s[2])
					for i := range w {
						w[i] = float32(i%7) * 0.1
					}
					var pb PackedB
					if err := g.PackB(&pb, w); err != nil {
						b.Fatal(err)
					}
					args := &GemmArgs{A: make([]float32, s[0]*s[2]), C: make([]float32, s[0]*s[1]), PackedB: &pb}
					for b.Loop() {
						if err := g.Run(args); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(2*float64(s[0]*s[1]*s[2])*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}
