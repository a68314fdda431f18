package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// winoCases qualify for the Winograd path: padded and unpadded, several
// blocks per image, tile rows of 8, 16 and 24 tiles, panel splits of
// 6/5 rows, batches.
var winoCases = []tgeom{
	{N: 2, C: 8, H: 10, W: 32, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 32, H: 64, W: 64, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 13, H: 18, W: 18, M: 17, KH: 3, KW: 3},                               // no padding
	{N: 3, C: 64, H: 16, W: 16, M: 40, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},   // 8 tiles a row
	{N: 1, C: 9, H: 8, W: 48, M: 11, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},     // 24 tiles a row
	{N: 1, C: 128, H: 16, W: 16, M: 128, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, // the CNN's last block
	{N: 1, C: 16, H: 12, W: 34, M: 16, KH: 3, KW: 3, PT: 0, PL: 0, PB: 0, PR: 0},   // OW 32, OH 10
	{N: 1, C: 8, H: 7, W: 31, M: 8, KH: 3, KW: 3, PT: 2, PL: 2, PB: 1, PR: 1},      // uneven pads
}

// TestConv2DWinograd: convolutions that take the Winograd path (checked)
// match the float64 definition within the tolerance every conv path
// meets, with and without bias, on one and three workers, twice in a row.
func TestConv2DWinograd(t *testing.T) {
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range winoCases {
			g := tg.normalised()
			c, err := NewConv2D(g, true, k, gv, goPar(1))
			if err != nil {
				t.Fatal(err)
			}
			if want := winoKernelsFor(gv.Feature) != nil && c.direct; (c.wino != nil) != want {
				t.Fatalf("%s case %d %+v: Winograd %v, want %v", p[0], i, g, c.wino != nil, want)
			}
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d/t%d", p[0], i, threads), func(t *testing.T) {
					checkConv(t, k, gv, goPar(threads), g, i%2 == 0, rand.New(rand.NewPCG(uint64(i), 23)))
				})
			}
		}
	}
}

// runBoth runs g on x (with a bias, a Relu and residual res) with its
// Winograd path (either) and without it, on two workers, and returns
// both outputs.
func runBoth(t *testing.T, g ConvGeom, x, w, b, res []float32) (wino, plain []float32) {
	t.Helper()
	out := [2][]float32{}
	for i, on := range []bool{true, false} {
		save := convWinoOn
		convWinoOn = on
		c, err := NewConv2D(g, true, nil, nil, goPar(2))
		convWinoOn = save
		if err != nil {
			t.Fatal(err)
		}
		if c.Winograd() != on {
			t.Fatalf("Winograd plan %v, want %v", c.Winograd(), on)
		}
		out[i] = make([]float32, len(res))
		if err := c.RunArgs(&ConvArgs{X: x, W: w, B: b, Y: out[i], Act: ActRelu, Residual: res}); err != nil {
			t.Fatal(err)
		}
	}
	return out[0], out[1]
}

// TestConv2DWinogradFallback: a block of tiles whose input holds an Inf,
// a NaN or a value past winoMaxIn is computed by the direct path, bit
// for bit (so Inf - Inf never makes a NaN the direct conv does not),
// while the other blocks keep the Winograd path; weights whose transform
// reaches winoMaxIn send every block to the direct path.
func TestConv2DWinogradFallback(t *testing.T) {
	if winoKernelsFor(BestGemm().Feature) == nil {
		t.Skip("no Winograd transforms for " + string(BestGemm().Feature))
	}
	r := rand.New(rand.NewPCG(3, 23))
	g := winoCases[1].normalised() // 64×64: several blocks
	c, err := NewConv2D(g, true, nil, nil, goPar(2))
	if err != nil {
		t.Fatal(err)
	}
	if c.wino == nil {
		t.Skip("the blocked Winograd path is the direct path's: " + BestGemm().Name + " packs (see TestConv2DWinogradGemmFallback)")
	}
	rowsPerBlock := 2 * c.wino.tb / c.wino.tw // output rows a block covers
	if c.wino.blocks < 3 {
		t.Fatalf("%d blocks, want several", c.wino.blocks)
	}
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN()), 1e20} {
		x, w, b := convOperands(r, g, true)
		iy, ix := rowsPerBlock+1, 20 // in the second block
		x[(3*g.H+iy)*g.W+ix] = bad
		x[(5*g.H+iy)*g.W+ix+1] = -bad
		wino, direct := runBoth(t, g, x, w, b, randFloats(rand.New(rand.NewPCG(1, 1)), g.N*g.M*g.OH*g.OW))
		differs := false
		for i := range wino {
			oy := i / g.OW % g.OH
			inBad := oy/rowsPerBlock == 1
			same := sameBits(wino[i], direct[i])
			if inBad && !same {
				t.Fatalf("%v: output %d (row %d) = %v, direct path %v", bad, i, oy, wino[i], direct[i])
			}
			differs = differs || (!inBad && !same)
		}
		if !differs {
			t.Fatalf("%v: every block matched the direct path bit for bit: Winograd never ran", bad)
		}
	}
	x, w, b := convOperands(r, g, true)
	w[7] = 1e30
	wino, direct := runBoth(t, g, x, w, b, randFloats(r, g.N*g.M*g.OH*g.OW))
	for i := range wino {
		if !sameBits(wino[i], direct[i]) {
			t.Fatalf("huge weights: output %d = %v, direct path %v", i, wino[i], direct[i])
		}
	}
}

// BenchmarkConvWinograd compares each conv with and without its
// Winograd path on the CNN benchmark's and ResNet-18's stride-1 3×3
// convolutions, one thread, warm.
func BenchmarkConvWinograd(b *testing.B) {
	defer func(v bool) { convWinoOn = v }(convWinoOn)
	for _, tg := range []tgeom{
		{N: 1, C: 32, H: 64, W: 64, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 64, H: 32, W: 32, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 128, H: 16, W: 16, M: 128, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 128, H: 28, W: 28, M: 128, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 256, H: 14, W: 14, M: 256, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
		{N: 1, C: 512, H: 7, W: 7, M: 512, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	} {
		g := tg.normalised()
		for _, on := range []bool{false, true} {
			convWinoOn = on
			c, err := NewConv2D(g, true, nil, nil, Par{})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("c%d_%dx%d/wino=%v", g.C, g.OH, g.OW, c.Winograd()), func(b *testing.B) { benchConv(b, c) })
		}
	}
}

// FuzzConvWinograd runs fuzz-chosen convolutions that qualify for a
// Winograd path, specials and huge values included, against the path
// without it: NaN and ±Inf where it has them, finite values within the
// tolerance every conv path meets (against the float64 definition). The
// shapes reach both paths: the direct path's (OW a multiple of 16, where
// the variant has it) and the packing path's, with odd outputs, rows of
// tiles packed across panels, bands per worker (small C·M) and passes
// split over workers (C·M past winoLocalU).
func FuzzConvWinograd(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 1, 1, 1})
	f.Add([]byte{1, 3, 2, 1, 0, 2, 9, 7, 7, 1, 4, 200, 6, 1, 2, 3, 4})
	f.Add([]byte{2, 5, 8, 0, 1, 1, 1, 3, 7, 5, 9, 2, 6, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		ms := []int{10, 11, 12, 15, 16, 17, 18, 20, 23, 96, 192} // 96·192 past winoLocalU
		cs := []int{8, 9, 13, 16, 24, 96}
		tg := tgeom{N: 1 + in.intn(2), C: cs[in.intn(len(cs))], M: ms[in.intn(len(ms))], KH: 3, KW: 3,
			PT: in.intn(2), PL: in.intn(2), PB: in.intn(2), PR: in.intn(2)}
		var oh, ow int
		if in.intn(2) == 0 { // the direct path's shapes
			oh, ow = 2*(1+in.intn(3)), 16*(1+in.intn(2))
			if ow == 16 {
				oh = 4 * (1 + in.intn(2)) // rows of 8 tiles come in pairs
			}
		} else {
			oh, ow = 3+in.intn(14), 3+in.intn(14)
		}
		tg.H, tg.W = oh+2-tg.PT-tg.PB, ow+2-tg.PL-tg.PR
		g := tg.normalised()
		x, w, b := in.floats(g.N*g.C*g.H*g.W, 0), in.floats(g.M*g.C*9, 0), in.floats(g.M, 0)
		outs := [2][]float32{}
		for i, on := range []bool{true, false} {
			save := convWinoOn
			convWinoOn = on
			c, err := NewConv2D(g, true, nil, nil, goPar(1+in.intn(2)))
			convWinoOn = save
			if err != nil {
				t.Fatal(err)
			}
			if on && !c.Winograd() {
				return // too few tiles for the saving: nothing to compare
			}
			outs[i] = make([]float32, g.N*g.M*g.OH*g.OW)
			if err := c.Run(outs[i], x, w, b); err != nil {
				t.Fatal(err)
			}
		}
		_, mag := convRef(g, x, w, b)
		for i, v := range outs[0] {
			d := outs[1][i]
			switch {
			case d != d || v != v:
				if (d != d) != (v != v) {
					t.Fatalf("%+v: output %d = %v, without Winograd %v", g, i, v, d)
				}
			case math.IsInf(float64(d), 0) || math.IsInf(float64(v), 0):
				if d != v {
					t.Fatalf("%+v: output %d = %v, without Winograd %v", g, i, v, d)
				}
			case approx.Far(float64(v), float64(d), 2e-5*mag[i]+1e-30):
				t.Fatalf("%+v: output %d = %v, without Winograd %v (magnitude %g)", g, i, v, d, mag[i])
			}
		}
	})
}
