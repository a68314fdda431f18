package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestConvClampInKernel: a convolution told that its activation is the
// elementwise Relu or Clamp to [+0, 6] (ConvArgs.ActIsRelu, ActClampHi)
// gives the bits of the same activation applied as an epilogue pass, on
// every GEMM variant (those without the in-register clamp ignore the
// hint), over inputs with NaN, ±Inf and ±0; on geometries whose tiles are
// all whole micro-tiles of one depth block and on ones whose tiles the
// kernels clamp only in part, the epilogue pass taking the rest (a partial
// row panel through the edge kernels or the one-row kernel, a partial
// column panel, two and three depth blocks, all at once, a pooled conv),
// serially and on three workers.
func TestConvClampInKernel(t *testing.T) {
	cases := []struct {
		g      tgeom
		pooled bool
	}{
		{tgeom{N: 1, C: 16, H: 16, W: 16, M: 96, KH: 1, KW: 1}, false},                                        // MobileNetV2's expansion
		{tgeom{N: 2, C: 8, H: 16, W: 16, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1}, false},             // strided: packed on every variant
		{tgeom{N: 2, C: 24, H: 10, W: 10, M: 48, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1}, false},            // 5×5 outputs: a partial column panel
		{tgeom{N: 1, C: 3, H: 32, W: 32, M: 24, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, true},              // pooled
		{tgeom{N: 1, C: 40, H: 12, W: 12, M: 50, KH: 1, KW: 1}, false},                                        // 50 rows: a partial panel
		{tgeom{N: 1, C: 320, H: 8, W: 8, M: 24, KH: 1, KW: 1}, false},                                         // two depth blocks
		{tgeom{N: 1, C: 32, H: 20, W: 20, M: 64, KH: 1, KW: 1}, false},                                        // 64 rows: five panels and four edge rows
		{tgeom{N: 1, C: 16, H: 30, W: 30, M: 62, KH: 1, KW: 1}, false},                                        // two one-row-kernel rows, 900 columns
		{tgeom{N: 2, C: 700, H: 5, W: 7, M: 16, KH: 1, KW: 1}, false},                                         // three depth blocks, a partial panel and columns
		{tgeom{N: 1, C: 3, H: 35, W: 35, M: 64, KH: 3, KW: 3, SH: 2, SW: 2}, false},                           // SqueezeNet's stem: 17×17 outputs
		{tgeom{N: 2, C: 16, H: 12, W: 12, M: 40, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2}, false}, // groups of 20 rows: a panel and eight edge rows each
		// Depthwise: the plane path clamps as it copies (dwClamp), the
		// channel-interleaved path keeps the pass.
		{tgeom{N: 1, C: 24, H: 40, W: 40, M: 24, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 24}, false},
		{tgeom{N: 2, C: 16, H: 12, W: 12, M: 32, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, Groups: 16}, false},
	}
	for _, gv := range GemmVariants() {
		k := rowVariantNamed(gv.Name)
		ew := ewVariantNamed(gv.Name)
		if k == nil || ew == nil {
			continue
		}
		for i, tc := range cases {
			g := tc.g.normalised()
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d/t%d", gv.Name, i, threads), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(i), 5))
					x, w, b := convOperands(r, g, true)
					dwSpecials(r, x)
					for _, relu := range []bool{true, false} {
						var outs [2][]float32
						for hint := range 2 {
							newConv := NewConv2D
							if tc.pooled {
								newConv = NewConv2DPool2x2
							}
							c, err := newConv(g, true, k, gv, goPar(threads))
							if err != nil {
								t.Fatal(err)
							}
							args := &ConvArgs{X: x, W: w, B: b}
							if relu {
								args.ActFunc = func(s []float32) { _ = ew.Unary(EwRelu, s, s) }
								args.ActIsRelu = hint == 1
							} else {
								args.ActFunc = func(s []float32) { _ = ew.Clamp(s, s, 0, 6) }
								if hint == 1 {
									args.ActClampHi = 6
								}
							}
							if hint == 1 && c.depthwise {
								c.run.clamp = c.clampFlags(args)
								copies := c.dwClamp() != 0 && !c.dw.ch.on
								c.run.clamp = 0
								if want := i == len(cases)-2 && gv.Name == "avx512" && bestDepthwise().name == "avx512"; copies != want {
									t.Fatalf("the depthwise copy clamps: %v, want %v", copies, want)
								}
							} else if hint == 1 && gv.clamp && c.clampFlags(args) == 0 {
								t.Fatal("the hint is not taken") // (the direct path, AVX2's for rows of whole panels, ignores it)
							}
							ny := g.N * g.M * g.OH * g.OW
							if tc.pooled {
								ny = g.N * g.M * (g.OH / 2) * (g.OW / 2)
							}
							outs[hint] = make([]float32, ny)
							args.Y = outs[hint]
							if err := c.RunArgs(args); err != nil {
								t.Fatal(err)
							}
						}
						if !slices.EqualFunc(outs[0], outs[1], dwSameBits) {
							t.Fatalf("relu %v: the in-register clamp changed the result", relu)
						}
					}
				})
			}
		}
	}
}
