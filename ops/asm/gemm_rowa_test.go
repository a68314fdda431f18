package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmInPlaceA: reading A in place gives the bits packing it gives,
// for every variant (those without the kernel pack anyway), over edge
// rows and columns, depth blocks, strides past the row, accumulation,
// shrunk runs and parallel plans; and it refuses a transposed or scaled A.
func TestGemmInPlaceA(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, v := range gemmTestVariants() {
		for _, par := range []Par{{}, gemmTestPar(2)} {
			for _, s := range [][3]int{{6, 16, 1}, {12, 64, 300}, {256, 64, 512}, {13, 40, 37}, {31, 17, 5}, {5, 16, 9}, {290, 33, 70}} {
				for _, acc := range []bool{false, true} {
					name := fmt.Sprintf("%s/t%d/%v/acc%v", v.Name, par.Threads, s, acc)
					t.Run(name, func(t *testing.T) { inPlaceCase(t, r, v, par, s[0], s[1], s[2], acc) })
				}
			}
		}
	}
	for _, cfg := range []GemmConfig{{M: 6, N: 16, K: 4, Alpha: 2, InPlaceA: true}, {M: 6, N: 16, K: 4, Alpha: 1, TransA: true, InPlaceA: true}} {
		if _, err := NewGemm(cfg, nil, Par{}); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func inPlaceCase(t *testing.T, r *rand.Rand, v *GemmVariant, par Par, m, n, k int, acc bool) {
	cfg := GemmConfig{M: m, N: n, K: k, LDA: k + 5, LDC: n + 3, Alpha: 1, Accumulate: acc}
	a, b := make([]float32, m*cfg.LDA), make([]float32, k*n)
	for _, x := range [][]float32{a, b} {
		for i := range x {
			x[i] = gemmRand(r)
		}
	}
	c0 := make([]float32, m*cfg.LDC)
	for i := range c0 {
		c0[i] = gemmRand(r)
	}
	results := [2][]float32{}
	for i, inPlace := range []bool{false, true} {
		cfg.InPlaceA = inPlace
		g, err := NewGemm(cfg, v, par)
		if err != nil {
			t.Fatal(err)
		}
		pb := new(PackedB)
		if err := g.PackB(pb, b); err != nil {
			t.Fatal(err)
		}
		results[i] = append([]float32(nil), c0...)
		if err := g.Run(&GemmArgs{A: a, PackedB: pb, C: results[i]}); err != nil {
			t.Fatal(err)
		}
		if k > 2 { // a shrunk run after a full one, into the same C
			if err := g.PackBDims(pb, b, k-2, 0); err != nil {
				t.Fatal(err)
			}
			if err := g.Run(&GemmArgs{A: a, PackedB: pb, C: results[i], K: k - 2}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range c0 {
		if math.Float32bits(results[0][i]) != math.Float32bits(results[1][i]) {
			t.Fatalf("C[%d] (row %d col %d): in place %v, packed %v", i, i/cfg.LDC, i%cfg.LDC, results[1][i], results[0][i])
		}
	}
	if !acc && k > 2 { // and both against a float64 reference of the last run
		ref, mag := refGemm(GemmConfig{M: m, N: n, K: k - 2, LDA: cfg.LDA, LDB: n, LDC: cfg.LDC, Alpha: 1}, a, b, c0, nil, 0)
		checkGemmC(t, results[1], cfg.LDC, ref, mag, m, n, k-2, "in place")
	}
}
