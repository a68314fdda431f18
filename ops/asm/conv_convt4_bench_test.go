package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvT4 runs a DCGAN generator's 4² → 8² step (256 → 128
// channels) through the chosen ConvT4, one thread: the weights read as
// ONNX stores them (ldw = 16·128) or packed a tile of three channels
// contiguous (ldw = 48), and the planes alone. GFLOP/s counts the
// products of every tap and cell (2·256·128·16·16).
func BenchmarkConvT4(b *testing.B) {
	k := NewConvT4()
	if k == nil {
		b.Skip("no vector ConvT4 on this CPU")
	}
	const cin, cout = 256, 128
	tiles := (cout + ConvT4Cols - 1) / ConvT4Cols
	r := rand.New(rand.NewPCG(1, 2))
	x, w := randFloats(r, 16*cin), randFloats(r, cin*16*ConvT4Cols*tiles)
	sums, out, bias := make([]float32, 256*ConvT4Cols*tiles), make([]float32, 64*ConvT4Cols*tiles), make([]float32, ConvT4Cols*tiles)
	flops := 2.0 * cin * cout * 256
	for _, packed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sums+planes/packed=%v", packed), func(b *testing.B) {
			for b.Loop() {
				for tl := range tiles {
					c := sums[256*ConvT4Cols*tl:][:256*ConvT4Cols]
					var err error
					if packed {
						err = k.Sums(c, x, w[cin*48*tl:], 48, cin)
					} else {
						err = k.Sums(c, x, w[48*tl:], 16*ConvT4Cols*tiles, cin)
					}
					if err == nil {
						err = k.Planes(out[64*ConvT4Cols*tl:], c, bias[ConvT4Cols*tl:][:ConvT4Cols])
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	b.Run("planes", func(b *testing.B) {
		for b.Loop() {
			if err := k.Planes(out, sums, bias); err != nil {
				b.Fatal(err)
			}
		}
	})
}
