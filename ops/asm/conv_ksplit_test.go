package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestConvKSplit: convolutions with small output planes and deep
// patches take the depth split (two shares of two and more depth blocks,
// with a bias, rows past the last whole panel, columns past the last
// whole panel) on one to four workers, each share's rows cut into a
// block per worker past two, and match the float64 convolution followed
// by the epilogue (Relu, then the residual), as the plan without the
// split does; every number of workers gives the same bits (the shares
// are summed alike); a depth of fewer blocks, or a plane of more
// positions than channels, does not split.
func TestConvKSplit(t *testing.T) {
	cases := []struct {
		g     tgeom
		split bool
	}{
		{tgeom{N: 1, C: 128, H: 10, W: 10, M: 40, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, true},   // 5×5, four blocks
		{tgeom{N: 1, C: 256, H: 14, W: 14, M: 100, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, true},  // 7×7, eight blocks
		{tgeom{N: 1, C: 128, H: 28, W: 28, M: 256, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, true},  // ResNet's layer 3
		{tgeom{N: 1, C: 64, H: 10, W: 10, M: 40, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, false},   // two blocks
		{tgeom{N: 1, C: 128, H: 28, W: 28, M: 100, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, false}, // 196 positions, 100 channels
	}
	for i, tc := range cases {
		g := tc.g.normalised()
		r := rand.New(rand.NewPCG(uint64(i), 21))
		x, w, b := convOperands(r, g, true)
		res := randFloats(r, g.M*g.OH*g.OW)
		want, mag := convRef(g, x, w, b)
		var first []float32 // one worker's output with the split allowed
		for threads := 1; threads <= 4; threads++ {
			t.Run(fmt.Sprintf("%d/t%d", i, threads), func(t *testing.T) {
				for _, split := range []bool{true, false} {
					convKSplitOn = split
					c, err := NewConv2D(g, true, nil, nil, goPar(threads))
					convKSplitOn = true
					if err != nil {
						t.Fatal(err)
					}
					if c.Winograd() || c.point != nil || c.direct {
						t.Fatalf("%+v: not on the packing path", g)
					}
					if on := c.ksplit.on; on != (split && tc.split) {
						t.Fatalf("split allowed %v: planned %v, want %v", split, on, split && tc.split)
					}
					if wantRows := (threads + 1) / 2; c.ksplit.on && c.ksplit.rows != wantRows {
						t.Fatalf("%d row blocks a share, want %d", c.ksplit.rows, wantRows)
					}
					for run := range 2 { // the second reuses the scratch
						y := make([]float32, len(res))
						if err := c.RunArgs(&ConvArgs{X: x, W: w, B: b, Y: y, Act: ActRelu, Residual: res}); err != nil {
							t.Fatal(err)
						}
						for j, v := range y {
							e := max(want[j], 0) + float64(res[j])
							if approx.Far(float64(v), e, 1e-5*(mag[j]+math.Abs(float64(res[j])))+1e-30) {
								t.Fatalf("split %v, run %d: element %d = %v, want %v", split, run, j, v, e)
							}
						}
						if !split {
							continue
						}
						if first == nil {
							first = y
						} else if !slicesBitsEq(y, first) {
							t.Fatalf("run %d: other bits than on one worker", run)
						}
					}
				}
			})
		}
	}
}
