package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxRows3S2 checks every maxRows3S2 kernel bit for bit against Go's
// builtin max (NaN, ±0 and ±Inf among the inputs) over row widths that
// cover full vectors and every tail, 0-2 padding columns, output counts
// from one to past the row (windows wholly outside give -Inf) and one to
// three rows, each input buffer fenced by inaccessible pages on one side
// (the first on the side before it, which the padding's masked loads
// point at) and the columns between rows NaN, so a read outside a row
// either faults or wins.
func TestMaxRows3S2(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 10))
	for _, ks := range poolFamily.variants() {
		if ks.max3S2 == nil {
			continue
		}
		for w := 1; w <= 75; w++ {
			for pl := range 3 {
				full := (w+pl-1)/2 + 1 // outputs whose window starts inside the row
				for _, ow := range []int{1, full, full + 1, 1 + r.IntN(full+1)} {
					rows := 1 + r.IntN(3)
					t.Run(fmt.Sprintf("%s/w=%d/pl=%d/ow=%d/rows=%d", ks.feature, w, pl, ow, rows), func(t *testing.T) {
						checkMaxRows3S2(t, r, ks.max3S2, w, pl, ow, rows)
					})
				}
			}
		}
	}
}

func checkMaxRows3S2(t *testing.T, r *rand.Rand, k maxRows3S2Kernel, w, pl, ow, rows int) {
	xstride := w + r.IntN(3)
	n := (rows-1)*xstride + w
	var x [3][]float32
	for i := range x {
		buf, release := fencedFloats(t, n, i == 0)
		t.Cleanup(release)
		copy(buf, specialFloats(r, n))
		for row := range rows - 1 {
			fill(buf[row*xstride+w:(row+1)*xstride], float32(math.NaN()))
		}
		x[i] = buf
	}
	y := newGuarded(rows*ow, 1)
	k(&y.Data[0], &x[0][0], &x[1][0], &x[2][0], rows, w, pl, ow, xstride, &max3S2Masks(w, pl, ow)[0])
	y.check(t, "max3S2")
	for row := range rows {
		for i := range ow {
			var cs []float32
			for _, xk := range x {
				for c := max(2*i-pl, 0); c < min(2*i-pl+3, w); c++ {
					cs = append(cs, xk[row*xstride+c])
				}
			}
			if got, want := y.Data[row*ow+i], builtinMax(cs...); !sameBits(got, want) {
				t.Fatalf("y[%d][%d] = %v, want %v (from %v)", row, i, got, want, cs)
			}
		}
	}
}

// TestPool2DMax3S2 runs Pool2D's 3-wide, stride-2 max plan (every row
// variant: avx512's kernel, avx2's row folds, the twin) against the
// float64 definition on shapes that exercise its row split: clipped top
// and bottom rows, windows wholly in the padding, 1-3 rows high, row
// strides 1-3, planes split between workers mid-plane, and specials.
func TestPool2DMax3S2(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range RowVariants() {
		for trial := range 120 {
			kh := 1 + r.IntN(3)
			c := 1 + r.IntN(5)
			g := tgeom{N: 1 + r.IntN(2), C: c, M: c, H: 1 + r.IntN(30), W: 1 + r.IntN(70), KH: kh, KW: 3,
				SH: 1 + r.IntN(3), SW: 2, PT: r.IntN(3), PL: r.IntN(3), PB: r.IntN(3), PR: r.IntN(3)}.normalised()
			switch trial {
			case 0: // ResNet's stem, scaled down in channels
				g = tgeom{N: 1, C: 3, M: 3, H: 112, W: 112, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}.normalised()
			case 1: // an empty row: every window in the padding, -Inf
				g = tgeom{N: 1, C: 2, M: 2, H: 3, W: 0, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 2, PB: 1, PR: 2}.normalised()
			}
			if g.OH <= 0 || g.OW <= 0 {
				continue
			}
			x := specialFloats(r, g.N*g.C*g.H*g.W)
			t.Run(fmt.Sprintf("%s/%d", k.Name, trial), func(t *testing.T) {
				p, err := NewPool2D(g, true, false, k, goPar(1+r.IntN(3)))
				if err != nil {
					t.Fatal(err)
				}
				if want := poolFamily.forFeature(k.Feature).max3S2 != nil && g.PL <= 2 && g.W >= 1; p.max3.on != want {
					t.Fatalf("%+v: max3 plan on = %v, want %v", g, p.max3.on, want)
				}
				out := newGuarded(g.N*g.C*g.OH*g.OW, 3)
				if err := p.Run(out.Data, x); err != nil {
					t.Fatal(err)
				}
				out.check(t, "pool")
				want := poolRef(g, x, true, false)
				for i, v := range out.Data {
					if w := float32(want[i]); !sameBits(v, w) {
						t.Fatalf("%+v: element %d = %v, want %v", g, i, v, w)
					}
				}
			})
		}
	}
}
