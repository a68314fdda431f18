package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmColsPanels runs each variant's colsPanelsKernels against its
// colsKernel panel by panel, bit for bit, at depths around the unrolling
// (none included), the panels further apart than their depth needs; the
// scratch starts as NaN, so a sum left unwritten fails.
func TestGemmColsPanels(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	ran := false
	for _, v := range GemmVariants() {
		for _, kp := range []struct {
			name   string
			f      colsPanelsKernel
			panels int
			cols   int
		}{{"p4", v.colsP4, 4, colsMax}, {"p8x1", v.colsP8, 8, 1}} {
			if kp.f == nil {
				continue
			}
			ran = true
			mr := v.mr
			for _, k := range []int{0, 1, 2, 3, 7, 33, 300} {
				t.Run(fmt.Sprintf("%s/%s/k%d", v.Name, kp.name, k), func(t *testing.T) {
					astride := k*mr + 5 // panels apart by more than their steps
					a := randFloats(r, kp.panels*astride+1)
					b := randFloats(r, k*16+1)
					got := make([]float32, colsPanelsMax*colsMax*16)
					for i := range got {
						got[i] = float32(math.NaN())
					}
					kp.f(k, &a[0], astride, &b[0], &got[0])
					want := make([]float32, colsMax*16)
					for p := range kp.panels {
						v.cols(k, &a[p*astride], &b[0], &want[0])
						for j := range kp.cols {
							for i := range mr {
								g, w := got[(p*colsMax+j)*16+i], want[j*16+i]
								if math.Float32bits(g) != math.Float32bits(w) {
									t.Fatalf("panel %d column %d row %d = %v, the colsKernel's %v", p, j, i, g, w)
								}
							}
						}
					}
				})
			}
		}
	}
	if !ran {
		t.Skip("no variant here has colsPanelsKernels")
	}
}

// TestConvColsPanels runs convolutions on the packing path whose last
// columns take the colsPanelsKernels (7×7 and 14×14 outputs: one and
// four columns past the panels; a 3×3 stride-2 one; a depth past one
// block; panels left over for the colsKernel) against the same variant
// without them, bit for bit, on one and three workers, and against
// convRef.
func TestConvColsPanels(t *testing.T) {
	best := BestGemm()
	if best.colsP4 == nil && best.colsP8 == nil {
		t.Skip("the best GEMM variant has no colsPanelsKernels")
	}
	plain := *best
	plain.colsP4, plain.colsP8 = nil, nil
	r := rand.New(rand.NewPCG(15, 16))
	for _, tg := range []tgeom{
		{N: 1, C: 96, H: 7, W: 7, M: 160, KH: 1, KW: 1},
		{N: 2, C: 40, H: 14, W: 14, M: 100, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, // to 7×7
		{N: 1, C: 600, H: 7, W: 7, M: 64, KH: 1, KW: 1},
		{N: 1, C: 64, H: 14, W: 14, M: 72, KH: 1, KW: 1},
		{N: 1, C: 32, H: 14, W: 14, M: 50, KH: 1, KW: 1},
	} {
		g := tg.normalised()
		x, w, b := convOperands(r, g, true)
		want, mag := convRef(g, x, w, b)
		for _, threads := range []int{1, 3} {
			outs := [2][]float32{}
			for i, gv := range []*GemmVariant{best, &plain} {
				c, err := NewConv2D(g, true, nil, gv, goPar(threads))
				if err != nil {
					t.Fatal(err)
				}
				if c.Winograd() || c.point != nil || c.direct {
					t.Fatalf("%+v: not on the packing path", g)
				}
				outs[i] = make([]float32, g.N*g.M*g.OH*g.OW)
				if err := c.RunArgs(&ConvArgs{X: x, W: w, B: b, Y: outs[i]}); err != nil {
					t.Fatal(err)
				}
			}
			if !slicesBitsEq(outs[0], outs[1]) {
				t.Fatalf("%+v on %d workers: the colsPanelsKernels' output differs from the colsKernel's", g, threads)
			}
			for i, got := range outs[0] {
				if !dwClose(got, want[i], mag[i], 1e-5) {
					t.Fatalf("%+v on %d workers: element %d = %v, want %v", g, threads, i, got, want[i])
				}
			}
		}
	}
}
