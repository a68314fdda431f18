package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestConvDirectKernel checks every direct kernel, and the Go twin,
// against the definition computed here, with and without a bias, in
// both write modes, the last offset reaching the last cell of x and
// guards around c.
func TestConvDirectKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	kernels := map[string]convDirectKernel{"go": convDirectGo}
	for _, ks := range convFamily.asm {
		if ks.direct != nil {
			kernels[string(ks.feature)] = ks.direct
		}
	}
	for name, kern := range kernels {
		for _, rows := range []int{6, 5} {
			for _, k := range []int{1, 3, 4, 9, 33} {
				for mode := range 4 {
					t.Run(fmt.Sprintf("%s/%d/%d/%d", name, rows, k, mode), func(t *testing.T) {
						checkDirectKernel(t, kern, rows, k, mode&1 != 0, mode&2 != 0, r)
					})
				}
			}
		}
	}
}

func checkDirectKernel(t *testing.T, kern convDirectKernel, rows, k int, bias, acc bool, r *rand.Rand) {
	const ldc = 21
	a := randFloats(r, k*rows)
	x := randFloats(r, 100)
	off := make([]int, k)
	for s := range off {
		off[s] = r.IntN(len(x) - 15)
	}
	off[k-1] = len(x) - 16
	var b []float32
	var pb *float32
	if bias {
		b = randFloats(r, rows)
		pb = &b[0]
	}
	c := newGuarded((rows-1)*ldc+16, 1)
	copy(c.Data, randFloats(r, len(c.Data)))
	init := slices.Clone(c.Data)
	flags := uint(0)
	if acc {
		flags = gemmAccumulate
	}
	kern(rows, k, &a[0], &x[0], &off[0], pb, &c.Data[0], ldc, flags)
	c.check(t, "direct")
	for i := range rows {
		for j := range ldc {
			at := i*ldc + j
			if at >= len(c.Data) {
				break
			}
			want := init[at]
			if j < 16 {
				var sum float64
				if bias {
					sum = float64(b[i])
				}
				for s := range k {
					sum += float64(a[s*rows+i]) * float64(x[off[s]+j])
				}
				if acc {
					sum += float64(init[at])
				}
				if approx.Far(float64(c.Data[at]), sum, 1e-4) { // NaN-aware: a NaN sum fails
					t.Fatalf("c[%d][%d] = %v, want %v", i, j, c.Data[at], sum)
				}
				continue
			}
			if c.Data[at] != want {
				t.Fatalf("c[%d][%d] = %v outside the tile changed from %v", i, j, c.Data[at], want)
			}
		}
	}
}

// TestDirectPanels checks the panel split: sixes then fives covering
// every row, for every m that has one, and nil for the rest.
func TestDirectPanels(t *testing.T) {
	for m := 1; m <= 60; m++ {
		p := directPanels(m)
		has := false
		for fives := 0; fives < 6 && 5*fives <= m; fives++ {
			has = has || (m-5*fives)%6 == 0
		}
		sum := 0
		for i, rows := range p {
			sum += rows
			if rows != 6 && (rows != 5 || i+1 < len(p) && p[i+1] != 5) {
				t.Fatalf("directPanels(%d) = %v", m, p)
			}
		}
		if has != (p != nil) || p != nil && sum != m {
			t.Fatalf("directPanels(%d) = %v", m, p)
		}
	}
}

// TestConv2DDirect runs convolutions the direct path takes where a
// feature has a direct kernel (and the packing path elsewhere) against
// the reference: panels of 6 and 5 rows, several depth blocks, a row
// stride of 2, groups, with and without a bias, one and three workers.
func TestConv2DDirect(t *testing.T) {
	cases := []tgeom{
		{N: 2, C: 8, H: 10, W: 32, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, // 6,6,5,5,5,5
		{N: 1, C: 3, H: 9, W: 16, M: 11, KH: 3, KW: 3, SH: 2, PT: 1, PL: 1, PR: 1},  // 6,5; row stride 2
		{N: 1, C: 40, H: 5, W: 16, M: 10, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, // 2 depth blocks
		{N: 1, C: 8, H: 4, W: 16, M: 12, KH: 3, KW: 3, PL: 1, PR: 1, Groups: 2},     // groups of 6
		{N: 1, C: 16, H: 8, W: 16, M: 64, KH: 1, KW: 1},                             // x read in place
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range cases {
			g := tg.normalised()
			c, err := NewConv2D(g, true, k, gv, goPar(1))
			if err != nil {
				t.Fatal(err)
			}
			if want := convKernelsFor(gv.Feature).direct != nil && gv.nr == 16; c.direct != want {
				t.Fatalf("%s case %d: direct path %v, want %v", p[0], i, c.direct, want)
			}
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d/t%d", p[0], i, threads), func(t *testing.T) {
					checkConv(t, k, gv, goPar(threads), g, i%2 == 0, rand.New(rand.NewPCG(uint64(i), 17)))
				})
			}
		}
	}
}

// BenchmarkConvDirect compares the direct path with packing on the
// stride-1 convolutions of a small ResNet (3×3, padding 1),
// single-threaded (Winograd, which would take most of them, off).
func BenchmarkConvDirect(b *testing.B) {
	defer func(v, w bool) { convDirectOn, convWinoOn = v, w }(convDirectOn, convWinoOn)
	convWinoOn = false
	for _, tg := range []tgeom{
		{N: 1, C: 3, H: 128, W: 128, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 32, H: 64, W: 64, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 64, H: 32, W: 32, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 128, H: 16, W: 16, M: 128, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	} {
		g := tg.normalised()
		for _, on := range []bool{false, true} {
			convDirectOn = on
			c, err := NewConv2D(g, true, nil, nil, Par{})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("c%d/m%d/%dx%d/direct=%v", g.C, g.M, g.H, g.W, c.direct), func(b *testing.B) { benchConv(b, c) })
		}
	}
}

// benchConv times runs of c on random operands (weights packed once)
// and reports GFLOP/s of the direct definition.
func benchConv(b *testing.B, c *Conv2D) {
	g := c.g
	x, w, bias := convOperands(rand.New(rand.NewPCG(1, 2)), g, c.bias)
	var pw ConvWeights
	if err := c.PackWeights(&pw, w, bias); err != nil {
		b.Fatal(err)
	}
	args := &ConvArgs{X: x, Y: make([]float32, g.N*g.M*g.OH*g.OW), Packed: &pw}
	for b.Loop() {
		if err := c.RunArgs(args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(g.N*g.M*g.C/g.Groups*g.KH*g.KW*g.OH*g.OW)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
