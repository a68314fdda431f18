package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestConvTaps checks every patch packer against the definition, with the
// last offset reaching the last cell of src and guards around dst.
func TestConvTaps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, taps := range append([]*convKernels{convKernelsGo}, convFamily.asm...) {
		for _, stride := range []int{1, 2} {
			for _, n := range []int{1, 2, 7, 30} {
				src := randFloats(r, 200)
				off := make([]int, n)
				for s := range off {
					off[s] = r.IntN(len(src) - 15*stride)
				}
				off[n-1] = len(src) - 1 - 15*stride
				dst := newGuarded(16*n, 1)
				k := taps.s1
				if stride == 2 {
					k = taps.s2
				}
				k(&dst.Data[0], &src[0], &off[0], n)
				dst.check(t, string(taps.feature))
				for s := range n {
					for j := range 16 {
						if got, want := dst.Data[16*s+j], src[off[s]+j*stride]; got != want {
							t.Fatalf("%s stride %d n %d: row %d cell %d = %v, want %v", taps.feature, stride, n, s, j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestConv2DWide covers the sixteen-position panels (output rows of 16 or
// more), strides 1 to 3, several depth blocks and row panels past M.
func TestConv2DWide(t *testing.T) {
	cases := []tgeom{
		{N: 1, C: 5, H: 34, W: 33, M: 13, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},              // rows of 33: whole and spanning panels
		{N: 2, C: 4, H: 40, W: 64, M: 7, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, // stride 2
		{N: 1, C: 3, H: 20, W: 50, M: 6, KH: 1, KW: 1, SH: 3, SW: 3},                             // stride 3, 1×1
		{N: 1, C: 48, H: 6, W: 32, M: 20, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},              // 2 depth blocks
		{N: 1, C: 16, H: 16, W: 16, M: 12, KH: 1, KW: 1},                                         // 1×1: x read in place
		{N: 1, C: 6, H: 19, W: 40, M: 8, KH: 3, KW: 5, DH: 2, DW: 2, PT: 3, PL: 2, Groups: 2},    // dilated, grouped
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range cases {
			g := tg.normalised()
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d/t%d", p[0], i, threads), func(t *testing.T) {
					checkConv(t, k, gv, goPar(threads), g, i%3 != 2, rand.New(rand.NewPCG(uint64(i), 11)))
				})
			}
		}
	}
}

// TestConv2DEpilogue checks the activation and residual against the
// float64 convolution followed by the same steps.
func TestConv2DEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	cases := []tgeom{
		{N: 1, C: 8, H: 18, W: 32, M: 10, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 2, C: 3, H: 9, W: 9, M: 3, KH: 3, KW: 3, Groups: 3, PT: 1, PL: 1}, // depthwise
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range cases {
			g := tg.normalised()
			c, err := NewConv2D(g, true, k, gv, goPar(2))
			if err != nil {
				t.Fatal(err)
			}
			x := randFloats(r, g.N*g.C*g.H*g.W)
			w := randFloats(r, g.M*g.C/g.Groups*g.KH*g.KW)
			b := randFloats(r, g.M)
			res := randFloats(r, g.N*g.M*g.OH*g.OW)
			var pw ConvWeights
			if err := c.PackWeights(&pw, w, b); err != nil {
				t.Fatal(err)
			}
			y := make([]float32, len(res))
			if err := c.RunArgs(&ConvArgs{X: x, Y: y, Packed: &pw, Act: ActRelu, Residual: res}); err != nil {
				t.Fatal(err)
			}
			want, mag := convRef(g, x, w, b)
			for j, v := range y {
				e := max(want[j], 0) + float64(res[j])
				if approx.Far(float64(v), e, 1e-5*(mag[j]+math.Abs(float64(res[j])))+1e-30) {
					t.Fatalf("%s case %d: element %d = %v, want %v", p[0], i, j, v, e)
				}
			}
			// The same convolution planned for other workers runs on the
			// packing (SharesPacking) and gives the same bits; one
			// without the bias refuses it.
			twin, err := NewConv2D(g, true, k, gv, goPar(3))
			if err != nil {
				t.Fatal(err)
			}
			y2 := make([]float32, len(y))
			if err := twin.RunArgs(&ConvArgs{X: x, Y: y2, Packed: &pw, Act: ActRelu, Residual: res}); err != nil {
				t.Fatalf("%s case %d: the plan for three workers: %v", p[0], i, err)
			}
			if !slices.Equal(y2, y) {
				t.Errorf("%s case %d: the plan for three workers gave other values on the same packing", p[0], i)
			}
			other, err := NewConv2D(g, false, k, gv, Par{})
			if err != nil {
				t.Fatal(err)
			}
			if err := other.RunArgs(&ConvArgs{X: x, Y: y, Packed: &pw}); err == nil {
				t.Error("weights packed for another convolution accepted")
			}
			if err := c.RunArgs(&ConvArgs{X: x, Y: y, Packed: &pw, Residual: res[1:]}); err == nil {
				t.Error("short residual accepted")
			}
		}
	}
}
