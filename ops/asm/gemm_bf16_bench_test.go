package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkGemmBF16 times the float32 GEMM (BestGemm, B pre-packed) and
// the BF16 one (B packed in bf16) on BERT-sized products, one and two
// threads, interleaved run by run so both see the same machine load, and
// reports the median GFLOP/s of each and the median ratio:
//
//	go test ./ops/asm -run '^$' -bench GemmBF16 -benchtime 200x
func BenchmarkGemmBF16(b *testing.B) {
	v := BestGemmBF16()
	if v == nil {
		b.Skip("no AVX512_BF16 here (or KILN_CPU rules it out)")
	}
	pool := newGemmPool(2)
	defer pool.close()
	for _, s := range []struct {
		name    string
		m, k, n int
	}{{"up_M128_K384_N1536", 128, 384, 1536}, {"down_M128_K1536_N384", 128, 1536, 384}, {"decode_M1_K384_N1536", 1, 384, 1536}} {
		for _, threads := range []int{1, 2} {
			par := Par{}
			if threads == 2 {
				par = pool.par()
			}
			b.Run(fmt.Sprintf("%s/t%d", s.name, threads), func(b *testing.B) { benchBF16Pair(b, v, par, s.m, s.k, s.n) })
		}
	}
}

func benchBF16Pair(b *testing.B, v *GemmBF16Variant, par Par, m, k, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	A, B, C := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range A {
		A[i] = gemmRand(r)
	}
	for i := range B {
		B[i] = bf16Value(r)
	}
	cfg := GemmConfig{M: m, N: n, K: k, Alpha: 1}
	g32, err := NewGemm(cfg, BestGemm(), par)
	if err != nil {
		b.Fatal(err)
	}
	args32 := &GemmArgs{A: A, C: C, PackedB: new(PackedB)}
	if err := g32.PackB(args32.PackedB, B); err != nil {
		b.Fatal(err)
	}
	g16, err := NewGemmBF16(cfg, v, par)
	if err != nil {
		b.Fatal(err)
	}
	args16 := &GemmBF16Args{A: A, C: C, B: new(PackedBF16)}
	if err := g16.PackB(args16.B, B); err != nil {
		b.Fatal(err)
	}
	_, _ = g32.Run(args32), g16.Run(args16) // warm caches and scratch
	// Each sample runs a product reps times, about 200 µs of work.
	reps := max(1, int(2e5/(float64(m*n*k)/50)))
	var t32, t16 []float64
	for b.Loop() {
		t := time.Now()
		for range reps {
			_ = g32.Run(args32)
		}
		t32 = append(t32, time.Since(t).Seconds()/float64(reps))
		t = time.Now()
		for range reps {
			_ = g16.Run(args16)
		}
		t16 = append(t16, time.Since(t).Seconds()/float64(reps))
	}
	ratios := make([]float64, len(t32))
	for i := range t32 {
		ratios[i] = t32[i] / t16[i]
	}
	flop := 2 * float64(m) * float64(n) * float64(k)
	b.ReportMetric(flop/bf16Median(t32)/1e9, "f32-GFLOP/s")
	b.ReportMetric(flop/bf16Median(t16)/1e9, "bf16-GFLOP/s")
	b.ReportMetric(bf16Median(ratios), "speedup")
	b.ReportMetric(float64(args32.PackedB.Bytes())/float64(args16.B.Bytes()), "B-bytes-ratio")
}

func bf16Median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// BenchmarkGemmBF16MicroPeak runs the BF16 micro-kernel alone on one
// tile whose panels stay in L1 (256 pairs = 512 steps): the ceiling of
// the BF16 product, as BenchmarkGemmMicroPeak is the float32 one's.
func BenchmarkGemmBF16MicroPeak(b *testing.B) {
	const kp = 256
	for _, v := range GemmBF16Variants() {
		a, bp, c := make([]uint32, bf16MR*kp), make([]uint32, bf16NR*kp), make([]float32, bf16MR*bf16NR)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range a {
			a[i] = randBF16Pair(r)
		}
		for i := range bp {
			bp[i] = randBF16Pair(r)
		}
		b.Run(v.Name, func(b *testing.B) {
			for b.Loop() {
				v.panel(1, kp, &a[0], kp, &bp[0], &c[0], bf16NR, 0)
			}
			b.ReportMetric(2*float64(bf16MR*bf16NR*2*kp)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
