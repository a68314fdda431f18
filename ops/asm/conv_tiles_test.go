package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestConvTilesCover checks on random geometries, variants and thread
// counts that the tiles cover every (plane, output channel, position)
// of the GEMM path exactly once, and that blocks split evenly.
func TestConvTilesCover(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	for _, gv := range GemmVariants() {
		for trial := range 400 {
			g := tgeom{N: 1 + r.IntN(2), C: 1 + r.IntN(9), H: 1 + r.IntN(20), W: 1 + r.IntN(20),
				M: 1 + r.IntN(200), KH: 1 + r.IntN(3), KW: 1 + r.IntN(3), SH: 1 + r.IntN(2), SW: 1 + r.IntN(2),
				PT: r.IntN(2), PL: r.IntN(2), PB: r.IntN(2), PR: r.IntN(2)}
			if r.IntN(3) == 0 {
				g.C, g.M, g.Groups = 2*g.C, 2*g.M, 2
			}
			geom := g.normalised()
			if geom.OH == 0 || geom.OW == 0 || geom.C/geom.Groups == 1 {
				continue
			}
			threads := 1 + r.IntN(4)
			c, err := NewConv2D(geom, r.IntN(2) == 0, nil, gv, goPar(threads))
			if err != nil {
				t.Fatal(err)
			}
			planes := geom.N * geom.Groups
			seen := make([]uint8, planes*c.mpg*c.span)
			minC, maxC := c.span, 0
			for it := range c.tiles(planes) {
				plane, rblk, cblk := it/(c.rb*c.cb), it/c.cb%c.rb, it%c.cb
				m0, m1 := c.panelRows(c.rowBlock(rblk))
				j0, cols := c.colBlock(cblk)
				minC, maxC = min(minC, cols), max(maxC, cols)
				if cols > c.nb {
					t.Fatalf("%s %d: block %d is %d columns, more than nb %d", gv.Name, trial, cblk, cols, c.nb)
				}
				for m := m0; m < m1; m++ {
					for j := j0; j < j0+cols; j++ {
						seen[(plane*c.mpg+m)*c.span+j]++
					}
				}
			}
			for i, n := range seen {
				if n != 1 {
					t.Fatalf("%s %d %+v t%d (rb %d, cb %d): element %d covered %d times", gv.Name, trial, geom, threads, c.rb, c.cb, i, n)
				}
			}
			if maxC-minC > c.unit {
				t.Errorf("%s %d: column blocks of %d to %d positions", gv.Name, trial, minC, maxC)
			}
		}
	}
}

// TestConv2DRowBlocks runs, on every variant pair and two to four
// threads, convolutions whose planes have no more positions than
// channels, so that tiles split the channels: packed 3×3 (stride 1 and
// 2, a zero-padded last panel and rows past the panels for both 6- and
// 12-row tiles), grouped, and the direct path's 1×1 over rows of 16.
func TestConv2DRowBlocks(t *testing.T) {
	cases := []tgeom{
		{N: 1, C: 24, H: 7, W: 7, M: 100, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 2, C: 16, H: 9, W: 9, M: 74, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 12, H: 6, W: 6, M: 80, KH: 1, KW: 1, Groups: 2},
		{N: 1, C: 8, H: 2, W: 16, M: 40, KH: 1, KW: 1},                              // direct: 32 positions, panels 6,6,6,6,6,5,5
		{N: 1, C: 300, H: 3, W: 3, M: 50, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, // several depth blocks
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		split := 0 // plans that split the channels; the planner may not for a tile shape
		for i, tg := range cases {
			g := tg.normalised()
			for _, threads := range []int{2, 3, 4} {
				c, err := NewConv2D(g, i%2 == 0, k, gv, goPar(threads))
				if err != nil {
					t.Fatal(err)
				}
				if c.rb >= 2 {
					split++
					if c.shared.on == c.direct {
						t.Fatalf("%s case %d t%d: %d row blocks, shared patches %v (direct %v)", p[0], i, threads, c.rb, c.shared.on, c.direct)
					}
				}
				t.Run(fmt.Sprintf("%s/%d/t%d", p[0], i, threads), func(t *testing.T) {
					checkConv(t, k, gv, goPar(threads), g, i%2 == 0, rand.New(rand.NewPCG(uint64(i), 21)))
				})
			}
		}
		if split < len(cases) {
			t.Errorf("%s: only %d of %d plans split the channels", p[0], split, 3*len(cases))
		}
	}
}

// TestConv2DPostAct checks Act, Residual, then PostAct (built-in and as
// a function) against the float64 convolution followed by the same
// steps, on row-split and column-split tiles, the depthwise and the
// Winograd paths, with NaNs in the input and the residual, which must
// come out as NaN.
func TestConv2DPostAct(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	cases := []tgeom{
		{N: 1, C: 16, H: 5, W: 5, M: 40, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},  // row blocks
		{N: 1, C: 5, H: 18, W: 30, M: 10, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, // column blocks
		{N: 1, C: 8, H: 8, W: 32, M: 8, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},   // Winograd where it exists
		{N: 2, C: 3, H: 9, W: 9, M: 3, KH: 3, KW: 3, Groups: 3, PT: 1, PL: 1},       // depthwise
	}
	relu := func(v float64) float64 {
		if v < 0 {
			return 0
		}
		return v
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range cases {
			g := tg.normalised()
			c, err := NewConv2D(g, true, k, gv, goPar(2))
			if err != nil {
				t.Fatal(err)
			}
			x, w, b := convOperands(r, g, true)
			res := randFloats(r, g.N*g.M*g.OH*g.OW)
			nan := float32(math.NaN())
			x[len(x)/2], res[3] = nan, nan
			var pw ConvWeights
			if err := c.PackWeights(&pw, w, b); err != nil {
				t.Fatal(err)
			}
			want, mag := convRef(g, x, w, b)
			for _, fn := range []bool{false, true} {
				args := &ConvArgs{X: x, Y: make([]float32, len(res)), Packed: &pw, Act: ActRelu, Residual: res, PostAct: ActTanh}
				if fn {
					args.PostAct, args.PostActFunc = ActNone, func(seg []float32) { ActTanh.Apply(seg) }
				}
				if err := c.RunArgs(args); err != nil {
					t.Fatal(err)
				}
				nans := 0
				for j, v := range args.Y {
					e := math.Tanh(relu(want[j]) + float64(res[j]))
					if math.IsNaN(e) || math.IsNaN(float64(v)) {
						if math.IsNaN(e) != math.IsNaN(float64(v)) {
							t.Fatalf("%s case %d func %v: element %d = %v, want %v", p[0], i, fn, j, v, e)
						}
						nans++
						continue
					}
					if approx.Far(float64(v), e, 1e-5*(mag[j]+math.Abs(float64(res[j])))+1e-6) {
						t.Fatalf("%s case %d func %v: element %d = %v, want %v", p[0], i, fn, j, v, e)
					}
				}
				if nans < 2 {
					t.Fatalf("%s case %d: %d NaN outputs", p[0], i, nans)
				}
			}
			if err := c.RunArgs(&ConvArgs{X: x, Y: make([]float32, len(res)), Packed: &pw, PostAct: numActs}); err == nil {
				t.Error("unknown post-residual activation accepted")
			}
		}
	}
}
