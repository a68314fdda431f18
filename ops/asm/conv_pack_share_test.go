package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestConvPackingThreadIndependent: a convolution planned for any number
// of workers packs the same weights into the same bytes (SharesPacking),
// so that a program's serial twin of a step can run on the pool kernel's
// packed weights: 200 random geometries (randConvGeom, larger than
// TestConv2DRandom's) and shapes that take every path (Winograd in
// blocks beside the direct path on AVX2, in bands and in split passes,
// direct, depthwise on planes and interleaved, 1×1, pooled).
func TestConvPackingThreadIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	type conv struct {
		g      ConvGeom
		bias   bool
		pooled bool
	}
	var cases []conv
	for _, tg := range []tgeom{
		{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 256, H: 14, W: 14, M: 256, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 512, H: 7, W: 7, M: 512, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 128, H: 28, W: 28, M: 256, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 7, KW: 7, SH: 2, SW: 2, PT: 3, PL: 3, PB: 3, PR: 3},
		{N: 1, C: 32, H: 28, W: 28, M: 192, KH: 1, KW: 1},
		{N: 1, C: 192, H: 28, W: 28, M: 192, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 192},
		{N: 1, C: 576, H: 14, W: 14, M: 576, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 576},
		{N: 2, C: 16, H: 32, W: 32, M: 24, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	} {
		cases = append(cases, conv{tg.normalised(), true, false}, conv{tg.normalised(), false, false})
	}
	cases = append(cases, conv{tgeom{N: 1, C: 16, H: 32, W: 32, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}.normalised(), true, true})
	for range 200 {
		g := randConvGeom(r, 20, 20)
		if g.OH > 0 && g.OW > 0 {
			cases = append(cases, conv{g, r.IntN(2) == 0, false})
		}
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, c := range cases {
			newConv := NewConv2D
			if c.pooled {
				newConv = NewConv2DPool2x2
			}
			_, w, b := convOperands(rand.New(rand.NewPCG(uint64(i), 3)), c.g, c.bias)
			var first *Conv2D
			var want ConvWeights
			for _, threads := range []int{1, 2, 3, 8} {
				name := fmt.Sprintf("%s/%d/t%d %+v", p[0], i, threads, c.g)
				cv, err := newConv(c.g, c.bias, k, gv, goPar(threads))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var pw ConvWeights
				if err := cv.PackWeights(&pw, w, b); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if first == nil {
					first, want = cv, pw
					continue
				}
				if !cv.SharesPacking(first) || !first.SharesPacking(cv) {
					t.Fatalf("%s: does not share the packing of one worker's plan", name)
				}
				if pw.wino != want.wino || !slices.Equal(pw.data, want.data) {
					t.Fatalf("%s: packed %d floats (wino %v), one worker's plan %d (wino %v), or other values",
						name, len(pw.data), pw.wino, len(want.data), want.wino)
				}
			}
		}
	}
}
