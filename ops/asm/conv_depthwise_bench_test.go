package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// depthwiseBenchConvs are the depthwise convolutions of MobileNetV2 and
// EfficientNet-B0 at batch 1 (224² input) whose rates the depthwise
// kernels are judged by: 3×3 at strides 1 and 2 over large to small
// planes, and the 5×5 ones of the late stages (the 7×7 and 14×14 ones
// run the channel-interleaved path).
var depthwiseBenchConvs = []struct {
	name string
	g    tgeom
}{
	{"32x112x112_3x3", tgeom{N: 1, C: 32, H: 112, W: 112, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 32}},
	{"96x112x112_3x3s2", tgeom{N: 1, C: 96, H: 112, W: 112, M: 96, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 96}},
	{"144x56x56_3x3", tgeom{N: 1, C: 144, H: 56, W: 56, M: 144, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 144}},
	{"144x56x56_5x5s2", tgeom{N: 1, C: 144, H: 56, W: 56, M: 144, KH: 5, KW: 5, SH: 2, SW: 2, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 144}},
	{"384x28x28_3x3", tgeom{N: 1, C: 384, H: 28, W: 28, M: 384, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 384}},
	{"240x28x28_5x5", tgeom{N: 1, C: 240, H: 28, W: 28, M: 240, KH: 5, KW: 5, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 240}},
	{"672x14x14_5x5", tgeom{N: 1, C: 672, H: 14, W: 14, M: 672, KH: 5, KW: 5, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 672}},
	{"672x14x14_5x5s2", tgeom{N: 1, C: 672, H: 14, W: 14, M: 672, KH: 5, KW: 5, SH: 2, SW: 2, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 672}},
	{"1152x7x7_5x5", tgeom{N: 1, C: 1152, H: 7, W: 7, M: 1152, KH: 5, KW: 5, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 1152}},
	{"576x7x7_5x5", tgeom{N: 1, C: 576, H: 7, W: 7, M: 576, KH: 5, KW: 5, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 576}},
	{"960x7x7_3x3", tgeom{N: 1, C: 960, H: 7, W: 7, M: 960, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 960}},
}

// BenchmarkConvDepthwise runs the depthwise convolutions above (bias,
// pre-packed weights, no activation, as a compiled model runs them) at
// one and two threads, reporting GMAC/s (multiply-adds: N·M·OH·OW·KH·KW
// per run) and of-peak, the fraction of the FMA peak of as many cores
// (FMAPeak's register-only loop, measured first: the clock the core
// really runs at, all FMA pipes, the best variant's width).
func BenchmarkConvDepthwise(b *testing.B) {
	pool := newGemmPool(2)
	defer pool.close()
	peak := FMAPeakRate(50*time.Millisecond) / 2 // GMAC/s: two flops a lane
	for _, s := range depthwiseBenchConvs {
		g := s.g.normalised()
		for _, threads := range []int{1, 2} {
			par := Par{}
			if threads == 2 {
				par = pool.par()
			}
			b.Run(fmt.Sprintf("%s/t%d", s.name, threads), func(b *testing.B) {
				c, err := NewConv2D(g, true, nil, nil, par)
				if err != nil {
					b.Fatal(err)
				}
				x, w, bias := convOperands(rand.New(rand.NewPCG(1, 2)), g, true)
				var pw ConvWeights
				if err := c.PackWeights(&pw, w, bias); err != nil {
					b.Fatal(err)
				}
				args := &ConvArgs{X: x, Y: make([]float32, g.N*g.M*g.OH*g.OW), Packed: &pw}
				if err := c.RunArgs(args); err != nil { // warm-up
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if err := c.RunArgs(args); err != nil {
						b.Fatal(err)
					}
				}
				rate := float64(g.N*g.M*g.OH*g.OW*g.KH*g.KW) * float64(b.N) / b.Elapsed().Seconds() / 1e9
				b.ReportMetric(rate, "GMAC/s")
				if peak > 0 {
					b.ReportMetric(rate/(peak*float64(threads)), "of-peak")
				}
			})
		}
	}
}

// BenchmarkConvDepthwisePaths runs depthwise convolutions of growing
// planes (3×3 and 5×5, strides 1 and 2) at one thread on each path,
// plane and channel-interleaved, forced: the crossover dwUseChan draws.
func BenchmarkConvDepthwisePaths(b *testing.B) {
	for _, k := range []int{3, 5} {
		for _, s := range []int{1, 2} {
			for _, hw := range []int{7, 10, 14, 17, 20, 24, 28, 40, 56} {
				c := max(16, 16*((1<<20)/(hw*hw*k*k*16)))
				tg := tgeom{N: 1, C: c, H: hw, W: hw, M: c, KH: k, KW: k, SH: s, SW: s,
					PT: k / 2, PL: k / 2, PB: k / 2, PR: k / 2, Groups: c}
				g := tg.normalised()
				for _, p := range dwPaths {
					b.Run(fmt.Sprintf("%dx%dx%d_%dx%ds%d/%s", c, hw, hw, k, k, s, p.name), func(b *testing.B) {
						benchDepthwise(b, g, Par{}, p.path)
					})
				}
			}
		}
	}
}

// benchDepthwise runs convolution g (bias, pre-packed weights) on path
// over par, reporting GMAC/s.
func benchDepthwise(b *testing.B, g ConvGeom, par Par, path int) {
	c := newDepthwisePath(b, g, true, false, bestDepthwise(), par, path)
	x, w, bias := convOperands(rand.New(rand.NewPCG(1, 2)), g, true)
	var pw ConvWeights
	if err := c.PackWeights(&pw, w, bias); err != nil {
		b.Fatal(err)
	}
	args := &ConvArgs{X: x, Y: make([]float32, g.N*g.M*g.OH*g.OW), Packed: &pw}
	if err := c.RunArgs(args); err != nil { // warm-up
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := c.RunArgs(args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.N*g.M*g.OH*g.OW*g.KH*g.KW)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
}
