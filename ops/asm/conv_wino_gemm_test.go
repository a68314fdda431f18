package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// winoGemmCases qualify for the packing path's Winograd runs: panels
// spanning tile rows (7 and 14 tiles a row), calls running past their
// panel, odd outputs (7×7, 13×11: a last tile row and column half
// outside), workers running whole bands (small U: ResNet-18's 56²
// layer) and passes split over workers (C·M past winoLocalU), two depth
// blocks (C = 320), one-row-kernel rows past the panels (M = 14: 12 +
// 2), an unpadded input widened for the tiles, batches.
var winoGemmCases = []tgeom{
	{N: 1, C: 16, H: 14, W: 14, M: 24, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 2, C: 20, H: 28, W: 28, M: 18, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 320, H: 14, W: 14, M: 20, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 17, H: 10, W: 22, M: 14, KH: 3, KW: 3},
	{N: 3, C: 16, H: 8, W: 32, M: 16, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 32, H: 7, W: 7, M: 24, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 2, C: 16, H: 13, W: 11, M: 16, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 2, C: 128, H: 14, W: 14, M: 144, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}, // passes split over workers
}

// winoGemmWanted reports whether g should take the packing path's
// Winograd runs with GEMM variant gv.
func winoGemmWanted(c *Conv2D, gv *GemmVariant) bool {
	return winoKernelsFor(gv.Feature) != nil && !c.direct && gv.nr == 16
}

// TestConv2DWinogradGemm: the packing path's Winograd runs match the
// float64 definition within the tolerance every conv path meets, with
// and without bias, on one and three workers, twice in a row.
func TestConv2DWinogradGemm(t *testing.T) {
	defer func(v int) { winoBandFloats = v }(winoBandFloats)
	for _, bf := range []int{winoBandFloats, 1 << 14} {
		winoBandFloats = bf // then the split passes take several bands (and small planes too many tiles)
		t.Run(fmt.Sprint("band", bf), func(t *testing.T) { testConv2DWinogradGemm(t, bf == 1<<14) })
	}
}

func testConv2DWinogradGemm(t *testing.T, smallBands bool) {
	ran := false
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range winoGemmCases {
			g := tg.normalised()
			c, err := NewConv2D(g, true, k, gv, goPar(1))
			if err != nil {
				t.Fatal(err)
			}
			if want := winoGemmWanted(c, gv); (c.winoG != nil) != want && !smallBands {
				t.Fatalf("%s case %d %+v: Winograd runs %v, want %v", p[0], i, g, c.winoG != nil, want)
			}
			ran = ran || c.winoG != nil
			if w := c.winoG; w != nil && (i == 2 || i == 8) {
				if local := i == 2; w.local != local || w.bands < 2 && (local || winoBandFloats < 1<<15) {
					t.Errorf("%s case %d: local %v in %d bands, want local %v in several", p[0], i, w.local, w.bands, local)
				}
			}
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d/t%d", p[0], i, threads), func(t *testing.T) {
					checkConv(t, k, gv, goPar(threads), g, i%2 == 0, rand.New(rand.NewPCG(uint64(i), 29)))
				})
			}
		}
	}
	if !ran && winoKernelsFor(BestGemm().Feature) != nil && !BestGemm().hasDirect() {
		t.Error("no case took the Winograd runs")
	}
}

// hasDirect reports whether the variant's convolutions can take the
// direct path.
func (v *GemmVariant) hasDirect() bool { return convKernelsFor(v.Feature).direct != nil }

// TestConv2DWinogradGemmFallback: the epilogue (Relu, residual) follows
// the Winograd runs; an input holding an Inf, a NaN or a value past
// winoMaxIn, or weights whose transform reaches it, send the whole run
// to the packing path, bit for bit.
func TestConv2DWinogradGemmFallback(t *testing.T) {
	for _, i := range []int{1, 8} { // whole bands per worker, split passes
		t.Run(fmt.Sprint(i), func(t *testing.T) { testWinogradGemmFallback(t, winoGemmCases[i].normalised()) })
	}
}

func testWinogradGemmFallback(t *testing.T, g ConvGeom) {
	if c, err := NewConv2D(g, true, nil, nil, goPar(2)); err != nil || c.winoG == nil {
		t.Skipf("no Winograd runs for %s (%v)", BestGemm().Name, err)
	}
	r := rand.New(rand.NewPCG(5, 31))
	x, w, b := convOperands(r, g, true)
	res := randFloats(r, g.N*g.M*g.OH*g.OW)
	wino, plain := runBoth(t, g, x, w, b, res)
	ref, mag := convRef(g, x, w, b)
	differs := false
	for i := range wino {
		want := max(ref[i], 0) + float64(res[i])
		if approx.Far(float64(wino[i]), want, 2e-5*(mag[i]+math.Abs(float64(res[i])))+1e-30) {
			t.Fatalf("output %d = %v, want %v", i, wino[i], want)
		}
		differs = differs || !sameBits(wino[i], plain[i])
	}
	if !differs {
		t.Fatal("every output matched the packing path bit for bit: the Winograd runs never ran")
	}
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN()), 1e20} {
		xb := append([]float32(nil), x...)
		xb[((g.N-1)*g.C+3)*g.H*g.W+17] = bad // the last image: earlier ones already ran
		wino, plain := runBoth(t, g, xb, w, b, res)
		for i := range wino {
			if !sameBits(wino[i], plain[i]) {
				t.Fatalf("%v in the input: output %d = %v, packing path %v", bad, i, wino[i], plain[i])
			}
		}
	}
	wb := append([]float32(nil), w...)
	wb[7] = 1e30
	wino, plain = runBoth(t, g, x, wb, b, res)
	for i := range wino {
		if !sameBits(wino[i], plain[i]) {
			t.Fatalf("huge weights: output %d = %v, packing path %v", i, wino[i], plain[i])
		}
	}
}
