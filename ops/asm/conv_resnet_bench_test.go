package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// resnet18Convs are ResNet-18's distinct convolutions at batch 1 (224²
// input), with the bias ConvBN folding leaves: the stem, each stage's
// first (stride-2) and repeated 3×3 convs and its 1×1 stride-2
// downsample.
var resnet18Convs = []struct {
	name string
	g    tgeom
}{
	{"conv1_7x7s2_3-64_224", tgeom{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 7, KW: 7, SH: 2, SW: 2, PT: 3, PL: 3, PB: 3, PR: 3}},
	{"l1_3x3_64-64_56", tgeom{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}},
	{"l2_3x3s2_64-128_56", tgeom{N: 1, C: 64, H: 56, W: 56, M: 128, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
	{"l2_3x3_128-128_28", tgeom{N: 1, C: 128, H: 28, W: 28, M: 128, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}},
	{"l2_down_1x1s2_64-128_56", tgeom{N: 1, C: 64, H: 56, W: 56, M: 128, KH: 1, KW: 1, SH: 2, SW: 2}},
	{"l3_3x3s2_128-256_28", tgeom{N: 1, C: 128, H: 28, W: 28, M: 256, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
	{"l3_3x3_256-256_14", tgeom{N: 1, C: 256, H: 14, W: 14, M: 256, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}},
	{"l3_down_1x1s2_128-256_28", tgeom{N: 1, C: 128, H: 28, W: 28, M: 256, KH: 1, KW: 1, SH: 2, SW: 2}},
	{"l4_3x3s2_256-512_14", tgeom{N: 1, C: 256, H: 14, W: 14, M: 512, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
	{"l4_3x3_512-512_7", tgeom{N: 1, C: 512, H: 7, W: 7, M: 512, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}},
	{"l4_down_1x1s2_256-512_14", tgeom{N: 1, C: 256, H: 14, W: 14, M: 512, KH: 1, KW: 1, SH: 2, SW: 2}},
}

// BenchmarkConvResNet18 runs ResNet-18's convolutions one by one at one
// and two threads (pre-packed weights, as a compiled model runs them),
// each next to the plain GEMM of the same M×N×K (M output channels, N
// output positions, K = C·KH·KW, both operands packed per run) on the
// same threads. The conv reports GFLOP/s and x-gemm, its rate over that
// of the GEMM measured just before it, so -count=N interleaves the two
// and every sample carries its own ratio.
func BenchmarkConvResNet18(b *testing.B) {
	pool := newGemmPool(2)
	defer pool.close()
	for _, s := range resnet18Convs {
		g := s.g.normalised()
		m, n, k := g.M, g.OH*g.OW, g.C*g.KH*g.KW
		for _, threads := range []int{1, 2} {
			par := Par{}
			if threads == 2 {
				par = pool.par()
			}
			var gemmRate float64
			b.Run(fmt.Sprintf("%s/t%d/gemm", s.name, threads), func(b *testing.B) {
				benchGemm(b, BestGemm(), par, m, k, n, false)
				gemmRate = 2 * float64(m*n*k) * float64(b.N) / b.Elapsed().Seconds() / 1e9
			})
			b.Run(fmt.Sprintf("%s/t%d/conv", s.name, threads), func(b *testing.B) {
				c, err := NewConv2D(g, true, nil, nil, par)
				if err != nil {
					b.Fatal(err)
				}
				rate := benchConvRate(b, c)
				if gemmRate > 0 {
					b.ReportMetric(rate/gemmRate, "x-gemm")
				}
			})
		}
	}
}

// benchConvRate is benchConv with a warm-up run (caches, padded-input
// buffer) that returns the GFLOP/s it reports.
func benchConvRate(b *testing.B, c *Conv2D) float64 {
	g := c.g
	x, w, bias := convOperands(rand.New(rand.NewPCG(1, 2)), g, c.bias)
	var pw ConvWeights
	if err := c.PackWeights(&pw, w, bias); err != nil {
		b.Fatal(err)
	}
	args := &ConvArgs{X: x, Y: make([]float32, g.N*g.M*g.OH*g.OW), Packed: &pw}
	if err := c.RunArgs(args); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := c.RunArgs(args); err != nil {
			b.Fatal(err)
		}
	}
	rate := 2 * float64(g.N*g.M*g.C/g.Groups*g.KH*g.KW*g.OH*g.OW) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(rate, "GFLOP/s")
	return rate
}

// BenchmarkConvResNet18Tiles compares, on two threads, the tile plans
// for ResNet-18's convolutions with few output positions per channel:
// column blocks alone (cols), the plans with row blocks (rows:
// convRowSplitOn) and those whose row blocks give way to the depth split
// (depth: convKSplitOn, where it applies), with at least one, two or four
// tiles per thread (convMinTiles).
func BenchmarkConvResNet18Tiles(b *testing.B) {
	pool := newGemmPool(2)
	defer pool.close()
	defer func(on, k bool, n int) { convRowSplitOn, convKSplitOn, convMinTiles = on, k, n }(convRowSplitOn, convKSplitOn, convMinTiles)
	for _, s := range resnet18Convs[5:] {
		g := s.g.normalised()
		for _, min := range []int{1, 2, 4} {
			for _, mode := range []string{"cols", "rows", "depth"} {
				convRowSplitOn, convKSplitOn, convMinTiles = mode != "cols", mode == "depth", min
				c, err := NewConv2D(g, true, nil, nil, pool.par())
				if err != nil {
					b.Fatal(err)
				}
				if mode == "depth" && !c.ksplit.on {
					continue
				}
				b.Run(fmt.Sprintf("%s/min%d/%s/rb%d_cb%d", s.name, min, mode, c.rb, c.cb), func(b *testing.B) { benchConvRate(b, c) })
			}
		}
	}
}
