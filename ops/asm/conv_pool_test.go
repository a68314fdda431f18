package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// pooledRef is the 2×2, stride-2 max pool (floor mode) of the float64
// conv y of geometry g after relu when act is set, and the largest
// magnitude of each window (its rounding scale).
func pooledRef(g ConvGeom, y, mag []float64, act bool) (out, omag []float64) {
	ph, pw := g.OH/2, g.OW/2
	for plane := range g.N * g.M {
		for py := range ph {
			for px := range pw {
				best, m := math.Inf(-1), 0.0
				for dy := range 2 {
					for dx := range 2 {
						i := (plane*g.OH+2*py+dy)*g.OW + 2*px + dx
						v := y[i]
						if act {
							v = max(v, 0)
						}
						best, m = max(best, v), max(m, mag[i])
					}
				}
				out, omag = append(out, best), append(omag, m)
			}
		}
	}
	return out, omag
}

// checkConvPooled runs the pooled conv against the float64 definition,
// and against the plain conv then MaxPool2x2 of the same variant, which
// round the same sums (exact).
func checkConvPooled(t *testing.T, k *RowKernels, gv *GemmVariant, par Par, g ConvGeom, bias, act bool, r *rand.Rand) *Conv2D {
	t.Helper()
	x, w, b := convOperands(r, g, bias)
	a := ActNone
	if act {
		a = ActRelu
	}
	c, err := NewConv2DPool2x2(g, bias, k, gv, par)
	if err != nil {
		t.Fatal(err)
	}
	ph, pw := g.OH/2, g.OW/2
	out := newGuarded(g.N*g.M*ph*pw, 1)
	for range 2 { // a second run must not depend on the first
		if err := c.RunArgs(&ConvArgs{X: x, W: w, B: b, Y: out.Data, Act: a}); err != nil {
			t.Fatal(err)
		}
	}
	out.check(t, "pooled conv")
	y, mag := convRef(g, x, w, b)
	want, wmag := pooledRef(g, y, mag, act)
	for i, v := range out.Data {
		if approx.Far(float64(v), want[i], 1e-5*wmag[i]+1e-30) {
			t.Fatalf("%s/%s %+v bias=%v act=%v: element %d = %v, want %v", k.Name, gv.Name, g, bias, act, i, v, want[i])
		}
	}
	// The pooled conv has no Winograd or phase-product path: compare it
	// with the same sums.
	saveWino, savePoint := convWinoOn, convPointOn
	convWinoOn, convPointOn = false, false
	plain, err := NewConv2D(g, bias, k, gv, par)
	convWinoOn, convPointOn = saveWino, savePoint
	if err != nil {
		t.Fatal(err)
	}
	full := make([]float32, g.N*g.M*g.OH*g.OW)
	if err := plain.RunArgs(&ConvArgs{X: x, W: w, B: b, Y: full, Act: a}); err != nil {
		t.Fatal(err)
	}
	pg := ConvGeom{N: g.N, C: g.M, H: g.OH, W: g.OW, M: g.M, OH: ph, OW: pw, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1}
	p, err := NewMaxPool2x2(pg, k, Par{})
	if err != nil || p == nil {
		t.Fatalf("NewMaxPool2x2: %v, %v", p, err)
	}
	two := make([]float32, len(out.Data))
	if err := p.Run(two, full); err != nil {
		t.Fatal(err)
	}
	for i, v := range out.Data {
		if math.Float32bits(v) != math.Float32bits(two[i]) {
			t.Fatalf("%s %+v: element %d = %v, conv then pool gives %v", k.Name, g, i, v, two[i])
		}
	}
	return c
}

func TestConv2DPool2x2Shapes(t *testing.T) {
	cases := []tgeom{
		{N: 1, C: 3, H: 32, W: 32, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},           // the stem: direct path
		{N: 2, C: 4, H: 17, W: 15, M: 10, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1},    // stride 2, odd OH
		{N: 1, C: 5, H: 11, W: 13, M: 7, KH: 3, KW: 3},                                        // packing, odd OH and OW
		{N: 1, C: 8, H: 10, W: 12, M: 6, KH: 3, KW: 3, Groups: 2, PT: 1, PL: 1, PB: 1, PR: 1}, // grouped
		{N: 2, C: 6, H: 9, W: 9, M: 6, KH: 3, KW: 3, Groups: 6, PT: 1, PL: 1, PB: 1, PR: 1},   // depthwise, odd
		{N: 1, C: 4, H: 13, W: 12, M: 8, KH: 3, KW: 3, Groups: 4, SH: 2, SW: 2},               // depthwise ×2, strided
		{N: 1, C: 8, H: 6, W: 7, M: 12, KH: 1, KW: 1},                                         // 1×1
		{N: 1, C: 16, H: 30, W: 30, M: 20, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},          // several tiles
		{N: 1, C: 64, H: 7, W: 7, M: 70, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},            // few columns, many rows
		{N: 1, C: 3, H: 33, W: 16, M: 25, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},           // direct, odd OH, five-row panels
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range cases {
			g := tg.normalised()
			for _, threads := range []int{1, 3, 4} {
				for mode := range 4 {
					t.Run(fmt.Sprintf("%s/%d/t%d/%d", p[0], i, threads, mode), func(t *testing.T) {
						c := checkConvPooled(t, k, gv, goPar(threads), g, mode&1 != 0, mode&2 != 0, rand.New(rand.NewPCG(uint64(i), 7)))
						if (i == 0 || i == 9) && c.taps.direct != nil && !c.direct {
							t.Error("the stem geometry did not take the direct path")
						}
					})
				}
			}
		}
	}
}

func TestConv2DPool2x2Random(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for trial := 0; trial < 150; trial++ {
			groups := 1 + r.IntN(3)
			cpg := 1 + r.IntN(4)
			if r.IntN(3) == 0 {
				cpg = 1
			}
			g := tgeom{
				N: 1 + r.IntN(2), C: groups * cpg, H: 2 + r.IntN(20), W: 2 + r.IntN(40),
				M: groups * (1 + r.IntN(8)), KH: 1 + r.IntN(3), KW: 1 + r.IntN(3),
				SH: 1 + r.IntN(2), SW: 1 + r.IntN(2), PT: r.IntN(2), PL: r.IntN(2), PB: r.IntN(2), PR: r.IntN(2), Groups: groups,
			}.normalised()
			if g.OH < 2 || g.OW < 2 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", p[0], trial), func(t *testing.T) {
				checkConvPooled(t, k, gv, goPar(1+r.IntN(4)), g, r.IntN(2) == 0, r.IntN(2) == 0, r)
			})
		}
	}
}

func TestConv2DPool2x2Errors(t *testing.T) {
	if _, err := NewConv2DPool2x2(tgeom{N: 1, C: 4, H: 3, W: 8, M: 6, KH: 3, KW: 3}.normalised(), false, nil, nil, Par{}); err == nil {
		t.Error("a one-row output accepted")
	}
	g := tgeom{N: 1, C: 4, H: 6, W: 6, M: 6, KH: 3, KW: 3}.normalised() // 4×4, pooled 2×2
	c, err := NewConv2DPool2x2(g, false, nil, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	x, w := make([]float32, 4*36), make([]float32, 6*4*9)
	if err := c.Run(make([]float32, 6*4), x, w, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(make([]float32, 6*16), x, w, nil); err == nil {
		t.Error("an output of the conv's size accepted")
	}
	y := make([]float32, 6*4)
	if err := c.RunArgs(&ConvArgs{X: x, W: w, Y: y, Residual: make([]float32, len(y))}); err == nil {
		t.Error("a residual accepted")
	}
}

// BenchmarkConvPool2x2 compares the CNN benchmark's stem (3 → 32
// channels, 3×3, 128×128, bias and Relu) then a 2×2 max pool, as two
// steps and as one pooled conv, single-threaded.
func BenchmarkConvPool2x2(b *testing.B) {
	g := tgeom{N: 1, C: 3, H: 128, W: 128, M: 32, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}.normalised()
	r := rand.New(rand.NewPCG(1, 2))
	x, w, bias := randFloats(r, 3*128*128), randFloats(r, 32*3*9), randFloats(r, 32)
	full, y := make([]float32, 32*128*128), make([]float32, 32*64*64)
	plain, err := NewConv2D(g, true, nil, nil, Par{})
	if err != nil {
		b.Fatal(err)
	}
	pooled, err := NewConv2DPool2x2(g, true, nil, nil, Par{})
	if err != nil {
		b.Fatal(err)
	}
	pool, err := NewMaxPool2x2(ConvGeom{N: 1, C: 32, H: 128, W: 128, M: 32, OH: 64, OW: 64, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1}, nil, Par{})
	if err != nil {
		b.Fatal(err)
	}
	ew := BestEw()
	relu := func(seg []float32) { _ = ew.Unary(EwRelu, seg, seg) } // as ops' FusedConv2D applies it
	var pw, pp ConvWeights
	if err := plain.PackWeights(&pw, w, bias); err != nil {
		b.Fatal(err)
	}
	if err := pooled.PackWeights(&pp, w, bias); err != nil {
		b.Fatal(err)
	}
	b.Run("conv+pool", func(b *testing.B) {
		for b.Loop() {
			if err := plain.RunArgs(&ConvArgs{X: x, Y: full, Packed: &pw, ActFunc: relu}); err != nil {
				b.Fatal(err)
			}
			if err := pool.Run(y, full); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pooled", func(b *testing.B) {
		for b.Loop() {
			if err := pooled.RunArgs(&ConvArgs{X: x, Y: y, Packed: &pp, ActFunc: relu}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
