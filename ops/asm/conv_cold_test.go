package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestConvColdWeights: a convolution told its weights are cold fetches
// them far ahead from convColdFarBytes on (and not below), on the GEMM
// and Winograd paths, and computes the same bits as without.
func TestConvColdWeights(t *testing.T) {
	cases := []struct {
		g       tgeom
		coldFar bool // far with cold weights
		warmFar bool // far without
	}{
		{tgeom{N: 1, C: 768, H: 2, W: 2, M: 128, KH: 1, KW: 1}, true, false},                             // 384 KiB: DenseNet's 1×1 at 2×2 (column kernel)
		{tgeom{N: 1, C: 512, H: 4, W: 4, M: 128, KH: 1, KW: 1}, true, false},                             // 256 KiB at 4×4 (a partial panel)
		{tgeom{N: 1, C: 512, H: 2, W: 2, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, true, false},  // 576 KiB, 3×3
		{tgeom{N: 1, C: 16, H: 9, W: 9, M: 16, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, false, false},  // 9 KiB: stays near
		{tgeom{N: 1, C: 64, H: 14, W: 14, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, true, false}, // 144 KiB (Winograd where the variant takes it: 256 KiB transformed)
		{tgeom{N: 1, C: 512, H: 7, W: 7, M: 512, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, true, true},  // ResNet's layer 4: far either way
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tc := range cases {
			g := tc.g.normalised()
			t.Run(fmt.Sprintf("%s/%d", p[0], i), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(i), 3))
				x, w, b := convOperands(r, g, true)
				var outs [2][]float32
				for cold := range 2 {
					c, err := NewConv2D(g, true, k, gv, goPar(2))
					if err != nil {
						t.Fatal(err)
					}
					if cold == 1 {
						c.ColdWeights()
					}
					if c.depthwise {
						t.Fatal("not a GEMM-path convolution")
					}
					want := []bool{tc.warmFar, tc.coldFar}[cold]
					for _, ws := range [][]convWorker{c.ws, winoWorkers(c)} {
						for _, wk := range ws {
							if got := wk.far == gemmPrefetchFar; got != want {
								t.Fatalf("cold %d: far %v, want %v", cold, got, want)
							}
						}
					}
					outs[cold] = make([]float32, g.N*g.M*g.OH*g.OW)
					if err := c.Run(outs[cold], x, w, b); err != nil {
						t.Fatal(err)
					}
				}
				if !slices.EqualFunc(outs[0], outs[1], dwSameBits) {
					t.Fatal("cold weights changed the result")
				}
			})
		}
	}
}

// winoWorkers are the Winograd packing path's workers, if it has any.
func winoWorkers(c *Conv2D) []convWorker {
	if c.winoG == nil {
		return nil
	}
	return c.winoG.ws
}
