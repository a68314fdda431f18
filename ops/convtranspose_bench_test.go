package ops

import (
	"fmt"
	"testing"
	"time"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkConvTranspose runs the fast ConvTranspose on a U-Net decoder
// step (2×2, stride 2), a segmentation upsampler (3×3, stride 2, pad 1,
// output_padding 1) at 32² and 64² (whose taps' products outgrow the
// L2) and three DCGAN generator steps (4×4, stride 2, pad 1; at 8²,
// rows shorter than a segment; at 4², one segment, where both sides
// stream 2 MiB of weights for 16 input cells), on 1 and 2 workers, and
// reports GFLOP/s
// (2·M·N·K per group, with M = output channels per group · taps, N =
// input cells, K = input channels per group) and the ratio to the plain
// GEMM of the same M×N×K batch, the two run alternately and compared by
// their median times (pairedMedians: thread CPU time at one worker, wall
// time at two, both on the runtime's worker pool, benchParEnv; the host
// is shared). Weights come two ways: as an input
// (weights=input: computed at run time, so every run packs them), against
// the GEMM of op(A) = Wᵀ by the input, which packs its A each run; and as
// a param (weights=param, as models hold them: packed once while they do
// not change), against the same product as a model's MatMul with
// constant weights runs it, input cells by Cin times W [Cin × M] with W
// packed once (asm.PackedB). Both rates are also given over the FMA
// peak of as many cores (asm.FMAPeakRate, measured after them: the
// clock the host gave them): ×peak for the ConvTranspose, gemm×peak for
// the GEMM, which shows how much room either leaves.
func BenchmarkConvTranspose(b *testing.B) {
	for _, c := range []struct {
		name string
		x, w []int
		o    graph.ConvTransposeOpts
	}{
		{"unet-2x2s2", []int{1, 128, 64, 64}, []int{128, 64, 2, 2}, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"3x3s2p1", []int{1, 64, 32, 32}, []int{64, 32, 3, 3}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 0, 0}}},
		{"3x3s2p1-64", []int{1, 64, 64, 64}, []int{64, 32, 3, 3}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 0, 0}}},
		{"dcgan-4x4s2p1", []int{1, 128, 16, 16}, []int{128, 64, 4, 4}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"dcgan-4x4s2p1-8", []int{1, 256, 8, 8}, []int{256, 128, 4, 4}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"dcgan-4x4s2p1-4", []int{1, 256, 4, 4}, []int{256, 128, 4, 4}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
	} {
		for _, weights := range []string{"input", "param"} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/weights=%s/threads=%d", c.name, weights, threads), func(b *testing.B) {
					g := graph.New()
					var w *graph.Node
					if weights == "param" {
						w = g.Param("w", tensor.F32, c.w...)
					} else {
						w = g.Input("w", tensor.F32, c.w...)
					}
					n := g.ConvTranspose(g.Input("x", tensor.F32, c.x...), w, nil, c.o)
					env := Serial
					if threads > 1 {
						env = benchParEnv(threads)
					}
					k, variant, err := PrepareFast(n, env)
					if err != nil || variant == "reference" {
						b.Fatalf("no fast kernel (%v)", err)
					}
					x, wt, y := tensor.New(tensor.F32, c.x...), tensor.New(tensor.F32, c.w...), tensor.New(tensor.F32, n.Shape...)
					for i := range x.F32() {
						x.F32()[i] = float32(i%13) * 0.1
					}
					for i := range wt.F32() {
						wt.F32()[i] = float32(i%7) * 0.1
					}
					m, nn, kk := c.w[1]*c.w[2]*c.w[3], c.x[2]*c.x[3], c.x[1]
					flops := 2 * float64(m) * float64(nn) * float64(kk)
					ref := gemmOf(b, env, m, nn, kk)
					if weights == "param" {
						ref = gemmPackedOf(b, env, nn, m, kk)
					}
					op, refT := pairedMedians(b, threads == 1, func() {
						if err := k([]tensor.Tensor{x, wt}, y); err != nil {
							b.Fatal(err)
						}
					}, ref)
					b.ReportMetric(flops/op/1e9, "GFLOP/s")
					b.ReportMetric(flops/refT/1e9, "gemmGFLOP/s")
					b.ReportMetric(refT/op, "×gemm")
					if peak := asm.FMAPeakRate(50 * time.Millisecond); peak > 0 {
						b.ReportMetric(flops/op/1e9/(peak*float64(threads)), "×peak")
						b.ReportMetric(flops/refT/1e9/(peak*float64(threads)), "gemm×peak")
					}
				})
			}
		}
	}
}

// gemmOf returns a run of asm's GEMM of op(A)=Aᵀ [m×k] by B [k×n] (the
// product the ConvTranspose runs) over env.
func gemmOf(b *testing.B, env Env, m, n, k int) func() {
	gm, err := asm.NewGemm(asm.GemmConfig{M: m, N: n, K: k, TransA: true, Alpha: 1}, asm.BestGemm(), asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		b.Fatal(err)
	}
	args := &asm.GemmArgs{A: make([]float32, m*k), B: make([]float32, k*n), C: make([]float32, m*n)}
	for i := range args.A {
		args.A[i] = float32(i%7) * 0.1
	}
	for i := range args.B {
		args.B[i] = float32(i%13) * 0.1
	}
	return func() {
		if err := gm.Run(args); err != nil {
			b.Fatal(err)
		}
	}
}

// gemmPackedOf returns a run of asm's GEMM of A [m×k] by B [k×n] with B
// packed once (a MatMul by constant weights) over env.
func gemmPackedOf(b *testing.B, env Env, m, n, k int) func() {
	gm, err := asm.NewGemm(asm.GemmConfig{M: m, N: n, K: k, Alpha: 1}, asm.BestGemm(), asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		b.Fatal(err)
	}
	args := &asm.GemmArgs{A: make([]float32, m*k), PackedB: &asm.PackedB{}, C: make([]float32, m*n)}
	for i := range args.A {
		args.A[i] = float32(i%13) * 0.1
	}
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float32(i%7) * 0.1
	}
	if err := gm.PackB(args.PackedB, w); err != nil {
		b.Fatal(err)
	}
	return func() {
		if err := gm.Run(args); err != nil {
			b.Fatal(err)
		}
	}
}
