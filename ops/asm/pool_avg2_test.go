package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPool2DAvg2x2 checks the 2×2, stride-2 average pool on its vector
// kernel: even and odd planes (a last odd row and column dropped), widths
// under one step, whole steps and tails, one to three workers, against
// the general path's bits (its float64 sums, the kernel off) and the
// definition; specials among the inputs.
func TestPool2DAvg2x2(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for _, k := range RowVariants() {
		for _, hw := range [][2]int{{2, 2}, {3, 5}, {4, 16}, {8, 8}, {16, 17}, {5, 31}, {9, 33}, {40, 40}} {
			g := tgeom{N: 2, C: 3, M: 3, H: hw[0], W: hw[1], KH: 2, KW: 2, SH: 2, SW: 2}.normalised()
			t.Run(fmt.Sprintf("%s/%dx%d", k.Name, hw[0], hw[1]), func(t *testing.T) {
				x := randFloats(r, g.N*g.C*g.H*g.W)
				x[r.IntN(len(x))] = float32(math.NaN())
				x[r.IntN(len(x))] = float32(math.Inf(-1))
				x[r.IntN(len(x))] = float32(math.Copysign(0, -1))
				p, err := NewPool2D(g, false, false, k, goPar(1+r.IntN(3)))
				if err != nil {
					t.Fatal(err)
				}
				if want := poolFamily.forFeature(k.Feature).avg2 != nil; (p.avg2 != nil) != want {
					t.Fatalf("2×2 kernel %v, want %v", p.avg2 != nil, want)
				}
				general, err := NewPool2D(g, false, false, k, goPar(1))
				if err != nil {
					t.Fatal(err)
				}
				general.avg2 = nil
				for i := range general.ws {
					general.ws[i].d = make([]float64, g.W)
				}
				out, ref := newGuarded(g.N*g.C*g.OH*g.OW, 3), make([]float32, g.N*g.C*g.OH*g.OW)
				if err := p.Run(out.Data, x); err != nil {
					t.Fatal(err)
				}
				if err := general.Run(ref, x); err != nil {
					t.Fatal(err)
				}
				out.check(t, "pool")
				want := poolRef(g, x, false, false)
				for i, v := range out.Data {
					if !bitsEq(v, ref[i]) || !closeTo(v, float64(float32(want[i])), 1e-7, 0) {
						t.Fatalf("element %d = %v, general path %v, definition %v", i, v, ref[i], want[i])
					}
				}
			})
		}
	}
}

// TestAvgRows2x2Kernels checks each vector 2×2 kernel against the Go
// twin's bits on rows of 1 to 40 outputs, with specials.
func TestAvgRows2x2Kernels(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, k := range poolFamily.asm {
		if k.avg2 == nil {
			continue
		}
		for _, ow := range []int{1, 7, 8, 9, 16, 40} {
			rows, w := 1+r.IntN(3), 2*ow+r.IntN(2)
			x := randFloats(r, 2*rows*w)
			x[r.IntN(len(x))] = float32(math.NaN())
			x[r.IntN(len(x))] = float32(math.Inf(1))
			want := make([]float32, rows*ow)
			avgRows2x2Go(&want[0], &x[0], rows, w, ow)
			got := newGuarded(rows*ow, 1)
			k.avg2(&got.Data[0], &x[0], rows, w, ow)
			got.check(t, "avg rows")
			if i := firstDiff(got.Data, want); i >= 0 {
				t.Fatalf("%s ow %d: output %d = %v, twin %v", k.feature, ow, i, got.Data[i], want[i])
			}
		}
	}
}
