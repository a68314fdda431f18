package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkConvPointwise runs 1×1 convolutions of MobileNetV2, DenseNet
// and ResNet-style bottlenecks on the pointwise path against the GEMM
// path (benchPhaseVsGemm).
func BenchmarkConvPointwise(b *testing.B) {
	for _, s := range []struct{ c, m, hw int }{
		{32, 16, 112}, {16, 96, 112}, {96, 24, 56}, {24, 144, 56}, {144, 24, 56},
		{144, 32, 28}, {192, 32, 28}, {32, 192, 28}, {64, 256, 56}, {256, 64, 56}, {256, 128, 28},
	} {
		b.Run(fmt.Sprintf("%dto%d@%d", s.c, s.m, s.hw), func(b *testing.B) {
			benchPhaseVsGemm(b, tgeom{N: 1, C: s.c, H: s.hw, W: s.hw, M: s.m, KH: 1, KW: 1}.normalised())
		})
	}
}

// BenchmarkConvStrided runs the stems of MobileNetV2, SqueezeNet 1.1,
// ShuffleNetV2, a YOLO-style detector and ResNet, and two of the
// detector's stride-2 steps, on the strided path against the GEMM path
// (benchPhaseVsGemm). (Deeper strided steps keep the GEMM path:
// pointMaxDepth.)
func BenchmarkConvStrided(b *testing.B) {
	for _, s := range []struct {
		name string
		g    tgeom
	}{
		{"mobilenet-stem", tgeom{N: 1, C: 3, H: 224, W: 224, M: 32, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
		{"squeezenet-stem", tgeom{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 3, KW: 3, SH: 2, SW: 2}},
		{"shufflenet-stem", tgeom{N: 1, C: 3, H: 224, W: 224, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
		{"yolo-stem", tgeom{N: 1, C: 3, H: 128, W: 160, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
		{"resnet-stem", tgeom{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 7, KW: 7, SH: 2, SW: 2, PT: 3, PL: 3, PB: 3, PR: 3}},
		// A detector's stride-2 steps: rows of 40 (on the phase grid), and
		// a plane of 16×20 (below pointMinPositions, small weights).
		{"yolo-s2-40", tgeom{N: 1, C: 16, H: 64, W: 80, M: 32, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
		{"yolo-s2-20", tgeom{N: 1, C: 32, H: 32, W: 40, M: 32, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}},
	} {
		b.Run(s.name, func(b *testing.B) { benchPhaseVsGemm(b, s.g.normalised()) })
	}
}

// benchPhaseVsGemm runs convolution g (bias, packed weights, the ReLU as
// a model's fused step gives it: ActFunc with ActIsRelu) on its
// phase-product path and on the GEMM path (convPointOn off), one after
// the other each iteration (alternating which goes first), at one
// thread, and reports both rates and the ratio of the medians (×gemm >
// 1: the phase product is faster).
func benchPhaseVsGemm(b *testing.B, g ConvGeom) {
	if !HasPhaseProduct() {
		b.Skip("no vector phase product on this CPU")
	}
	relu := func(seg []float32) { _ = BestEw().Unary(EwRelu, seg, seg) }
	x, w, bias := convOperands(rand.New(rand.NewPCG(1, 2)), g, true)
	var runs [2]func()
	for i, on := range []bool{true, false} {
		convPointOn = on
		c, err := NewConv2D(g, true, nil, nil, Par{})
		convPointOn = true
		if err != nil || c.Pointwise() != on {
			b.Fatalf("%+v: phase-product path %v with the paths on = %v (%v)", g, c.Pointwise(), on, err)
		}
		var pw ConvWeights
		if err := c.PackWeights(&pw, w, bias); err != nil {
			b.Fatal(err)
		}
		args := &ConvArgs{X: x, Y: make([]float32, g.N*g.M*g.OH*g.OW), Packed: &pw, ActFunc: relu, ActIsRelu: true}
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
	flops := 2 * float64(g.N*g.M*g.OH*g.OW*g.C/g.Groups*g.KH*g.KW)
	phase, gemm := benchMedian(t[0]), benchMedian(t[1])
	b.ReportMetric(flops/phase/1e9, "GFLOP/s")
	b.ReportMetric(flops/gemm/1e9, "gemmGFLOP/s")
	b.ReportMetric(gemm/phase, "×gemm")
}

// benchMedian is the median of v (which it sorts).
func benchMedian(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
