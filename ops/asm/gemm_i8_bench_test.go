package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkGemmU8S8 times each int8 variant against the float32 GEMM
// (BestGemm, B pre-packed) on the same shape, interleaved run by run so
// both see the same machine load, one and two threads, and reports the
// median int8 GOPS (2·M·N·K operations a product, as GFLOP/s counts
// them), the float32 GFLOP/s and the median ratio of their times. The
// shapes are BERT-base's projections at sequence 128 (768×768 and the
// 768×3072 feed-forward), one token (M=1), and the 1024-cube:
//
//	go test ./ops/asm -run '^$' -bench GemmU8S8 -benchtime 30x
func BenchmarkGemmU8S8(b *testing.B) {
	pool := newGemmPool(2)
	defer pool.close()
	for _, s := range []struct {
		name    string
		m, k, n int
	}{{"M128_K768_N768", 128, 768, 768}, {"M128_K768_N3072", 128, 768, 3072}, {"M1_K768_N768", 1, 768, 768}, {"M1024_K1024_N1024", 1024, 1024, 1024}} {
		for _, v := range GemmU8S8Variants() {
			for _, threads := range []int{1, 2} {
				par := Par{}
				if threads == 2 {
					par = pool.par()
				}
				b.Run(fmt.Sprintf("%s/%s/t%d", s.name, v.Name, threads), func(b *testing.B) { benchU8S8Pair(b, v, par, s.m, s.k, s.n) })
			}
		}
	}
}

func benchU8S8Pair(b *testing.B, v *GemmU8S8Variant, par Par, m, k, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	A, B, C := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range A {
		A[i] = gemmRand(r)
	}
	for i := range B {
		B[i] = gemmRand(r)
	}
	A8, B8, C8 := make([]uint8, m*k), make([]int8, k*n), make([]int32, m*n)
	for i := range A8 {
		A8[i] = randU8(r)
	}
	for i := range B8 {
		B8[i] = randS8(r)
	}
	g32, err := NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1}, BestGemm(), par)
	if err != nil {
		b.Fatal(err)
	}
	args32 := &GemmArgs{A: A, C: C, PackedB: new(PackedB)}
	if err := g32.PackB(args32.PackedB, B); err != nil {
		b.Fatal(err)
	}
	g8, err := NewGemmU8S8(GemmU8S8Config{M: m, N: n, K: k}, v, par)
	if err != nil {
		b.Fatal(err)
	}
	args8 := &GemmU8S8Args{A: A8, C: C8, B: new(PackedU8S8)}
	if err := PackU8S8(args8.B, B8, k, n, n, false); err != nil {
		b.Fatal(err)
	}
	_, _ = g32.Run(args32), g8.Run(args8) // warm caches and scratch
	// Each sample runs a product reps times, about 200 µs of float32 work.
	reps := max(1, int(2e5/(float64(m*n*k)/50)))
	var t32, t8 []float64
	for b.Loop() {
		t := time.Now()
		for range reps {
			_ = g32.Run(args32)
		}
		t32 = append(t32, time.Since(t).Seconds()/float64(reps))
		t = time.Now()
		for range reps {
			_ = g8.Run(args8)
		}
		t8 = append(t8, time.Since(t).Seconds()/float64(reps))
	}
	ratios := make([]float64, len(t32))
	for i := range t32 {
		ratios[i] = t32[i] / t8[i]
	}
	ops := 2 * float64(m) * float64(n) * float64(k)
	b.ReportMetric(ops/bf16Median(t8)/1e9, "i8-GOPS")
	b.ReportMetric(ops/bf16Median(t32)/1e9, "f32-GFLOP/s")
	b.ReportMetric(bf16Median(ratios), "i8/f32")
}

// BenchmarkGemmU8S8MicroPeak runs each panel kernel alone on one tile
// whose panels stay in L1 (256 quads = 1024 steps): the ceiling of the
// int8 product.
func BenchmarkGemmU8S8MicroPeak(b *testing.B) {
	const kq = 256
	for _, v := range GemmU8S8Variants() {
		qb := 4
		if v.aWide {
			qb = 8
		}
		a, bp, c := make([]byte, v.mr*kq*qb), make([]int8, v.nr*kq*4), make([]int32, v.mr*v.nr)
		b.Run(v.Name, func(b *testing.B) {
			for b.Loop() {
				v.panel(1, kq, &a[0], kq*qb, &bp[0], &c[0], v.nr, 0)
			}
			b.ReportMetric(2*float64(v.mr*v.nr*4*kq)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOPS")
		})
	}
}
