package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// poolRef is the definition of pooling in float64 (dense windows; a
// window without input cells gives -Inf, or NaN for an average that does
// not count the padding).
func poolRef(g ConvGeom, x []float32, isMax, countPad bool) []float64 {
	y := make([]float64, 0, g.N*g.C*g.OH*g.OW)
	for plane := range g.N * g.C {
		for oy := range g.OH {
			for ox := range g.OW {
				best, sum, cells := math.Inf(-1), 0.0, 0
				for ky := range g.KH {
					for kx := range g.KW {
						iy, ix := oy*g.SH-g.PT+ky, ox*g.SW-g.PL+kx
						if iy < 0 || iy >= g.H || ix < 0 || ix >= g.W {
							continue
						}
						v := float64(x[(plane*g.H+iy)*g.W+ix])
						if v != v || best != best {
							best = math.NaN()
						} else {
							best = math.Max(best, v)
						}
						sum += v
						cells++
					}
				}
				switch {
				case isMax:
					y = append(y, best)
				case countPad:
					y = append(y, sum/float64(g.KH*g.KW))
				default:
					y = append(y, sum/float64(cells))
				}
			}
		}
	}
	return y
}

// randPoolGeom is a random pooling of up to images images: windows of
// 1-4 by 1-4 with padding short of a window, strides 1-3, 1-4 channels;
// false when it has no output.
func randPoolGeom(r *rand.Rand, images int) (ConvGeom, bool) {
	kh, kw := 1+r.IntN(4), 1+r.IntN(4)
	c := 1 + r.IntN(4)
	g := tgeom{N: 1 + r.IntN(images), C: c, M: c, H: 1 + r.IntN(40), W: 1 + r.IntN(60), KH: kh, KW: kw,
		SH: 1 + r.IntN(3), SW: 1 + r.IntN(3), PT: r.IntN(kh), PL: r.IntN(kw), PB: r.IntN(kh), PR: r.IntN(kw)}.normalised()
	return g, g.OH > 0 && g.OW > 0
}

func TestPool2DRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range RowVariants() {
		for trial := range 300 {
			g, ok := randPoolGeom(r, 2)
			if !ok {
				continue
			}
			isMax, countPad := r.IntN(2) == 0, r.IntN(2) == 0
			x := randFloats(r, g.N*g.C*g.H*g.W)
			if trial%5 == 0 { // specials: NaN must win a max, infinities pass through
				x[r.IntN(len(x))] = float32(math.NaN())
				x[r.IntN(len(x))] = float32(math.Inf(1))
				x[r.IntN(len(x))] = float32(math.Inf(-1))
			}
			t.Run(fmt.Sprintf("%s/%d", k.Name, trial), func(t *testing.T) {
				p, err := NewPool2D(g, isMax, countPad, k, goPar(1+r.IntN(3)))
				if err != nil {
					t.Fatal(err)
				}
				out := newGuarded(g.N*g.C*g.OH*g.OW, 3)
				if err := p.Run(out.Data, x); err != nil {
					t.Fatal(err)
				}
				out.check(t, "pool")
				want := poolRef(g, x, isMax, countPad)
				for i, v := range out.Data {
					tol := 0.0 // a max is exact
					if !isMax {
						tol = 1e-7
					}
					if !closeTo(v, float64(float32(want[i])), tol, 0) {
						t.Fatalf("%+v max=%v countPad=%v: element %d = %v, want %v", g, isMax, countPad, i, v, want[i])
					}
				}
			})
		}
	}
}

func TestPool2DErrors(t *testing.T) {
	g := tgeom{N: 1, C: 2, M: 2, H: 4, W: 4, KH: 2, KW: 2}.normalised()
	p, err := NewPool2D(g, true, false, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(make([]float32, 17), make([]float32, 32)); err == nil {
		t.Error("wrong output length accepted")
	}
	g.M = 3
	if _, err := NewPool2D(g, true, false, nil, Par{}); err == nil {
		t.Error("channel mismatch accepted")
	}
}

// BenchmarkPool2DMax runs ResNet's stem max pooling (3×3, stride 2, pad
// 1, 64×112×112) at one thread.
func BenchmarkPool2DMax(b *testing.B) {
	g := tgeom{N: 1, C: 64, M: 64, H: 112, W: 112, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}.normalised()
	p, err := NewPool2D(g, true, false, nil, Par{})
	if err != nil {
		b.Fatal(err)
	}
	x := randFloats(rand.New(rand.NewPCG(1, 2)), g.N*g.C*g.H*g.W)
	y := make([]float32, g.N*g.C*g.OH*g.OW)
	for b.Loop() {
		if err := p.Run(y, x); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPool2DBands checks the bands of rows (image, output row; every
// channel) that workers take against the plane-by-plane rows over the
// whole output: random poolings of one to three images, the rows cut
// into random bands, some crossing images, run in random order, every
// output written (the buffer starts as NaNs that no max or average
// here gives).
func TestPool2DBands(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for trial := range 200 {
		g, ok := randPoolGeom(r, 3)
		if !ok {
			continue
		}
		p, err := NewPool2D(g, r.IntN(2) == 0, r.IntN(2) == 0, nil, Par{})
		if err != nil {
			t.Fatal(err)
		}
		x := randFloats(r, g.N*g.C*g.H*g.W)
		want, got := make([]float32, g.N*g.C*g.OH*g.OW), make([]float32, g.N*g.C*g.OH*g.OW)
		fill(want, float32(math.NaN()))
		fill(got, float32(math.NaN()))
		p.x, p.y = x, want
		p.rows(0, 0, g.N*g.C*g.OH)
		rows := g.N * g.OH
		cuts := []int{0, rows}
		for range r.IntN(6) {
			cuts = append(cuts, r.IntN(rows+1))
		}
		slices.Sort(cuts)
		p.y = got
		for _, j := range r.Perm(len(cuts) - 1) {
			p.bands(0, cuts[j], cuts[j+1])
		}
		if !slicesBitsEq(got, want) {
			t.Fatalf("trial %d %+v, bands %v: the bands' output differs from the rows'", trial, g, cuts)
		}
	}
}

// TestPool2DSplit checks how workers split a pooling: bands of rows
// where every bound between two workers falls on a cache line of every
// plane (ResNet's stem pooling), planes where a bound would share a line
// (SqueezeNet's), and bandsLineAligned's arithmetic.
func TestPool2DSplit(t *testing.T) {
	for _, c := range []struct {
		g     tgeom
		bands bool
	}{
		{tgeom{N: 1, C: 64, M: 64, H: 112, W: 112, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, true},
		{tgeom{N: 1, C: 256, M: 256, H: 27, W: 27, KH: 3, KW: 3, SH: 2, SW: 2, PB: 1, PR: 1}, false}, // 13×13, ceil mode
		{tgeom{N: 1, C: 128, M: 128, H: 56, W: 56, KH: 2, KW: 2, SH: 2, SW: 2}, false},               // 28×28: row 14 is mid-line
		{tgeom{N: 2, C: 8, M: 8, H: 64, W: 64, KH: 2, KW: 2, SH: 2, SW: 2}, true},                    // the bound between images
	} {
		g := c.g.normalised()
		p, err := NewPool2D(g, true, false, nil, goPar(2))
		if err != nil {
			t.Fatal(err)
		}
		if bands := p.c.items == g.N*g.OH; bands != c.bands || p.c.N() != 2 {
			t.Errorf("%dx%dx%d pooled to %dx%d: bands %v on %d workers, want bands %v on 2", g.C, g.H, g.W, g.OH, g.OW, bands, p.c.N(), c.bands)
		}
	}
	for _, c := range []struct {
		images, rows, cols, n int
		want                  bool
	}{
		{1, 56, 56, 2, true}, {1, 13, 13, 2, false}, {1, 28, 28, 2, false}, {1, 32, 24, 2, true},
		{1, 32, 24, 3, false}, {2, 56, 56, 2, true}, {3, 14, 16, 2, true}, {1, 13, 13, 1, true},
		{1, 17, 2, 2, false}, // row 8 starts a line of the first plane, not of the second (34 floats a plane)
	} {
		if got := bandsLineAligned(c.images, c.rows, c.cols, c.n); got != c.want {
			t.Errorf("bandsLineAligned(%d, %d, %d, %d) = %v, want %v", c.images, c.rows, c.cols, c.n, got, c.want)
		}
	}
}
