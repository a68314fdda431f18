package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/ops/cpuid"
)

// gemmBenchShapes are the shapes: square N and the transformer
// block's products (MLP up and down, one-token decode).
var gemmBenchShapes = []struct {
	name    string
	m, k, n int
}{
	{"sq64", 64, 64, 64}, {"sq128", 128, 128, 128}, {"sq256", 256, 256, 256},
	{"sq512", 512, 512, 512}, {"sq1024", 1024, 1024, 1024}, {"sq2048", 2048, 2048, 2048},
	{"up_M128_K384_N1536", 128, 384, 1536}, {"down_M128_K1536_N384", 128, 1536, 384},
	{"decode_M1_K384_N1536", 1, 384, 1536},
	{"mlp_M16_K1024_N2048", 16, 1024, 2048}, {"mlp_M16_K2048_N2048", 16, 2048, 2048},
	{"mlp_M16_K2048_N1024", 16, 2048, 1024},
}

// benchGemm times one product of v over par and reports GFLOP/s.
func benchGemm(b *testing.B, v *GemmVariant, par Par, m, k, n int, packed bool) {
	benchGemmEp(b, v, par, m, k, n, packed, nil)
}

// benchGemmEp is benchGemm with an epilogue.
func benchGemmEp(b *testing.B, v *GemmVariant, par Par, m, k, n int, packed bool, ep *Epilogue) {
	r := rand.New(rand.NewPCG(1, 2))
	A, B, C := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, x := range [][]float32{A, B} {
		for i := range x {
			x[i] = gemmRand(r)
		}
	}
	g, err := NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1}, v, par)
	if err != nil {
		b.Fatal(err)
	}
	args := &GemmArgs{A: A, B: B, C: C, Epilogue: ep}
	if packed {
		args.PackedB, args.B = new(PackedB), nil
		if err := g.PackB(args.PackedB, B); err != nil {
			b.Fatal(err)
		}
	}
	if err := g.Run(args); err != nil { // warm caches and scratch
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		_ = g.Run(args)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSgemm: every variant, shape and thread count (1 and 2), B
// packed per run as BLAS does, and pre-packed as for weights.
func BenchmarkSgemm(b *testing.B) {
	pool := newGemmPool(2)
	defer pool.close()
	for _, v := range GemmVariants() {
		for _, s := range gemmBenchShapes {
			if v.Name == "go" && s.m*s.n*s.k > 1<<27 {
				continue // minutes per run
			}
			for _, threads := range []int{1, 2} {
				par := Par{}
				if threads == 2 {
					par = pool.par()
				}
				for _, packed := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/t%d", v.Name, s.name, threads)
					if packed {
						name += "/prepacked"
					}
					b.Run(name, func(b *testing.B) { benchGemm(b, v, par, s.m, s.k, s.n, packed) })
				}
			}
		}
	}
}

// BenchmarkGemmBlocking times N=1024 (one thread) and the MLP shape with
// other cache blocks than the default, one dimension at a time, to back
// the choice in the variant table.
func BenchmarkGemmBlocking(b *testing.B) {
	v := BestGemm()
	kc0, mc0, nc0 := v.Blocking()
	type blk struct{ kc, mc, nc int }
	var alts []blk
	for _, kc := range []int{128, 192, 256, 320, 384, 512} {
		alts = append(alts, blk{kc, mc0, nc0})
	}
	for _, mc := range []int{48, 72, 96, 144, 192, 288, 384} {
		alts = append(alts, blk{kc0, mc, nc0})
	}
	for _, nc := range []int{512, 1024, 4096} {
		alts = append(alts, blk{kc0, mc0, nc})
	}
	for _, s := range []struct{ m, k, n int }{{1024, 1024, 1024}, {128, 384, 1536}} {
		for _, a := range alts {
			w := v.withBlocking(a.kc, a.mc, a.nc)
			b.Run(fmt.Sprintf("M%d_K%d_N%d/kc%d_mc%d_nc%d", s.m, s.k, s.n, a.kc, a.mc, a.nc), func(b *testing.B) {
				benchGemm(b, w, Par{}, s.m, s.k, s.n, false)
			})
		}
	}
}

// BenchmarkSgemmEpilogue: the MLP-up shape with pre-packed weights, plain
// and with epilogues (bias + relu + residual; bias + the built-in scalar
// GELU), to show what applying them on finished blocks costs.
func BenchmarkSgemmEpilogue(b *testing.B) {
	m, k, n := 128, 384, 1536
	bias, res := make([]float32, n), make([]float32, m*n)
	for name, ep := range map[string]*Epilogue{
		"none":               nil,
		"bias_relu_residual": {Bias: bias, Act: ActRelu, Residual: res, ResRowStride: n, ResColStride: 1, ResScale: 1},
		"bias_gelu":          {Bias: bias, Act: ActGelu},
	} {
		b.Run(name, func(b *testing.B) { benchGemmEp(b, BestGemm(), Par{}, m, k, n, true, ep) })
	}
}

// BenchmarkGemmMicroPeak runs each variant's micro-kernel alone on one
// tile whose panels stay in L1 (k = 256): the ceiling a product can
// approach, against which the GEMM's own GFLOP/s (packing, cache misses,
// write-back included) are read. Zen 5 with AVX2: about 93.
func BenchmarkGemmMicroPeak(b *testing.B) {
	const k = 256
	for _, v := range GemmVariants() {
		a, bp, c := make([]float32, v.mr*k), make([]float32, v.nr*k), make([]float32, v.mr*v.nr)
		fill(a, 1e-3)
		fill(bp, 1e-3)
		b.Run(v.Name, func(b *testing.B) {
			for b.Loop() {
				v.micro(k, &a[0], &bp[0], &c[0], v.nr, 0)
			}
			b.ReportMetric(2*float64(v.mr*v.nr*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		if v.panel2 == nil {
			continue
		}
		b1, c2 := make([]float32, v.nr*k), make([]float32, 2*v.mr*v.nr)
		fill(b1, 1e-3)
		b.Run(v.Name+"/two-panel", func(b *testing.B) {
			for b.Loop() {
				v.panel2(1, k, &a[0], &bp[0], &b1[0], &c2[0], 2*v.nr, 0)
			}
			b.ReportMetric(2*float64(2*v.mr*v.nr*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkFMAPeak runs register-only FMAs of the best variant: the
// core's peak, the denominator of "fraction of peak" for the GEMM
// figures (BenchmarkGemmMicroPeak, BenchmarkSgemm).
func BenchmarkFMAPeak(b *testing.B) {
	var flops float64
	var v cpuid.Variant
	for b.Loop() {
		f, fv := FMAPeak(1 << 12)
		flops, v = flops+f, fv
	}
	if flops == 0 {
		b.Skipf("no FMA loop for %s", v)
	}
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
