package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkConvPointwise runs 1×1 convolutions of MobileNetV2, DenseNet
// and ResNet-style bottlenecks (bias, packed weights, the ReLU as a
// model's fused step gives it: ActFunc with ActIsRelu) on the pointwise
// path and on the GEMM path (convPointOn off), one after the other each
// iteration (alternating which goes first), at one thread, and reports
// both rates and the ratio of the medians (×gemm > 1: the pointwise path
// is faster).
func BenchmarkConvPointwise(b *testing.B) {
	if !HasPhaseProduct() {
		b.Skip("no vector phase product on this CPU")
	}
	relu := func(seg []float32) { _ = BestEw().Unary(EwRelu, seg, seg) }
	for _, s := range []struct{ c, m, hw int }{
		{32, 16, 112}, {16, 96, 112}, {96, 24, 56}, {24, 144, 56}, {144, 24, 56},
		{144, 32, 28}, {192, 32, 28}, {32, 192, 28}, {64, 256, 56}, {256, 64, 56}, {512, 128, 28},
	} {
		b.Run(fmt.Sprintf("%dto%d@%d", s.c, s.m, s.hw), func(b *testing.B) {
			g := tgeom{N: 1, C: s.c, H: s.hw, W: s.hw, M: s.m, KH: 1, KW: 1}.normalised()
			x, w, bias := convOperands(rand.New(rand.NewPCG(1, 2)), g, true)
			var runs [2]func()
			for i, on := range []bool{true, false} {
				convPointOn = on
				c, err := NewConv2D(g, true, nil, nil, Par{})
				convPointOn = true
				if err != nil || c.Pointwise() != on {
					b.Fatalf("pointwise %v with the path on = %v (%v)", c.Pointwise(), on, err)
				}
				var pw ConvWeights
				if err := c.PackWeights(&pw, w, bias); err != nil {
					b.Fatal(err)
				}
				args := &ConvArgs{X: x, Y: make([]float32, g.M*g.OH*g.OW), Packed: &pw, ActFunc: relu, ActIsRelu: true}
				runs[i] = func() {
					if err := c.RunArgs(args); err != nil {
						b.Fatal(err)
					}
				}
				runs[i]() // warm
			}
			var t [2][]float64
			for i := 0; b.Loop(); i++ {
				for j := range 2 {
					k := (i + j) % 2
					t0 := time.Now()
					runs[k]()
					t[k] = append(t[k], time.Since(t0).Seconds())
				}
			}
			flops := 2 * float64(g.C*g.M*g.OH*g.OW)
			point, gemm := benchMedian(t[0]), benchMedian(t[1])
			b.ReportMetric(flops/point/1e9, "GFLOP/s")
			b.ReportMetric(flops/gemm/1e9, "gemmGFLOP/s")
			b.ReportMetric(gemm/point, "×gemm")
		})
	}
}

// benchMedian is the median of v (which it sorts).
func benchMedian(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
