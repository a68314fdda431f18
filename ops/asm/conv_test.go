package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// convRef is the definition of the convolution in float64, with the
// magnitude Σ|w·x| + |b| of every output (the scale its rounding error
// is measured against). Padding cells are zeros that the weights
// multiply, as ONNX defines them: a NaN or infinite weight meeting one
// gives NaN.
func convRef(g ConvGeom, x, w, b []float32) (y, mag []float64) {
	cpg, mpg := g.C/g.Groups, g.M/g.Groups
	y = make([]float64, g.N*g.M*g.OH*g.OW)
	mag = make([]float64, len(y))
	i := 0
	for n := range g.N {
		for m := range g.M {
			for oy := range g.OH {
				for ox := range g.OW {
					var s, a float64
					if b != nil {
						s, a = float64(b[m]), math.Abs(float64(b[m]))
					}
					for c := range cpg {
						ci := m/mpg*cpg + c
						for ky := range g.KH {
							for kx := range g.KW {
								iy, ix := oy*g.SH-g.PT+ky*g.DH, ox*g.SW-g.PL+kx*g.DW
								var xv float64 // padding
								if iy >= 0 && iy < g.H && ix >= 0 && ix < g.W {
									xv = float64(x[((n*g.C+ci)*g.H+iy)*g.W+ix])
								}
								t := float64(w[((m*cpg+c)*g.KH+ky)*g.KW+kx]) * xv
								s += t
								a += math.Abs(t)
							}
						}
					}
					y[i], mag[i] = s, a
					i++
				}
			}
		}
	}
	return y, mag
}

// tgeom is a test geometry with all four pads; normalised fills in the
// defaults (1 for strides, dilations and groups) and the output dims.
type tgeom struct {
	N, C, H, W, M, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, Groups int
}

func (t tgeom) normalised() ConvGeom {
	one := func(v int) int { return max(v, 1) }
	g := ConvGeom{N: t.N, C: t.C, H: t.H, W: t.W, M: t.M, KH: t.KH, KW: t.KW,
		SH: one(t.SH), SW: one(t.SW), DH: one(t.DH), DW: one(t.DW), PT: t.PT, PL: t.PL, Groups: one(t.Groups)}
	g.OH = outDim(g.H, t.PT+t.PB, g.KH, g.SH, g.DH)
	g.OW = outDim(g.W, t.PL+t.PR, g.KW, g.SW, g.DW)
	return g
}

// outDim is the floor-mode output size, or 0 when the window does not fit.
func outDim(in, pads, k, stride, dil int) int {
	n := in + pads - (dil*(k-1) + 1)
	if n < 0 {
		return 0
	}
	return n/stride + 1
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	randRow(r, x, 1)
	return x
}

// convOperands are random input, weights and (when bias) bias of a conv
// of geometry g.
func convOperands(r *rand.Rand, g ConvGeom, bias bool) (x, w, b []float32) {
	x = randFloats(r, g.N*g.C*g.H*g.W)
	w = randFloats(r, g.M*g.C/g.Groups*g.KH*g.KW)
	if bias {
		b = randFloats(r, g.M)
	}
	return x, w, b
}

func checkConv(t *testing.T, k *RowKernels, gv *GemmVariant, par Par, g ConvGeom, bias bool, r *rand.Rand) {
	t.Helper()
	x, w, b := convOperands(r, g, bias)
	c, err := NewConv2D(g, bias, k, gv, par)
	if err != nil {
		t.Fatal(err)
	}
	out := newGuarded(g.N*g.M*g.OH*g.OW, 1)
	for range 2 { // a second run must not depend on the first
		if err := c.Run(out.Data, x, w, b); err != nil {
			t.Fatal(err)
		}
	}
	out.check(t, "conv")
	want, mag := convRef(g, x, w, b)
	for i, v := range out.Data {
		if approx.Far(float64(v), want[i], 1e-5*mag[i]+1e-30) {
			t.Fatalf("%s/%s %+v bias=%v: element %d = %v, want %v", k.Name, gv.Name, g, bias, i, v, want[i])
		}
	}
}

// convPairs pairs each row-kernel variant with the GEMM variant of the
// same name (the pure-Go twins together).
func convPairs() [][2]string {
	var ps [][2]string
	for _, k := range RowVariants() {
		if GemmVariantNamed(k.Name) != nil {
			ps = append(ps, [2]string{k.Name, k.Name})
		}
	}
	return ps
}

func rowVariantNamed(name string) *RowKernels {
	for _, k := range RowVariants() {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// ewVariantNamed is the elementwise variant of that name, or nil.
func ewVariantNamed(name string) *EwKernels {
	for _, e := range EwVariants() {
		if e.Name == name {
			return e
		}
	}
	return nil
}

func TestConv2DShapes(t *testing.T) {
	cases := []tgeom{
		{N: 1, C: 16, H: 30, W: 30, M: 20, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},          // several tiles and a tail
		{N: 2, C: 8, H: 9, W: 11, M: 12, KH: 1, KW: 1},                                        // 1×1: GEMM straight on x
		{N: 1, C: 6, H: 12, W: 12, M: 6, KH: 3, KW: 3, Groups: 6, PT: 1, PL: 1, PB: 1, PR: 1}, // depthwise
		{N: 1, C: 4, H: 13, W: 13, M: 8, KH: 3, KW: 3, Groups: 4, SH: 2, SW: 2},               // depthwise ×2, strided
		{N: 1, C: 8, H: 10, W: 10, M: 6, KH: 3, KW: 3, Groups: 2, DH: 2, DW: 2, PT: 2, PL: 2, PB: 2, PR: 2},
		{N: 1, C: 1, H: 20, W: 17, M: 5, KH: 5, KW: 5, PT: 2, PL: 2},                               // one input channel: direct
		{N: 1, C: 3, H: 2, W: 2, M: 2, KH: 3, KW: 3, PT: 2, PL: 2, PB: 2, PR: 2},                   // mostly padding
		{N: 1, C: 64, H: 7, W: 7, M: 70, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},                 // few columns, many threads
		{N: 1, C: 16, H: 32, W: 32, M: 64, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1}, // packing, a 4-row panel (64 = 6·10 + 4)
	}
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for i, tg := range cases {
			g := tg.normalised()
			for _, threads := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/%d/t%d", p[0], i, threads), func(t *testing.T) {
					checkConv(t, k, gv, goPar(threads), g, i%2 == 0, rand.New(rand.NewPCG(uint64(i), 9)))
				})
			}
		}
	}
}

// randConvGeom is a random convolution of planes up to hw×hw with up to
// mpg output channels a group: one to three groups (a quarter of them
// up to six, often of one channel: depthwise), kernels up to 4×4,
// strides and dilations up to 3, pads up to 2; its output may be empty.
func randConvGeom(r *rand.Rand, hw, mpg int) ConvGeom {
	groups := 1 + r.IntN(3)
	if r.IntN(4) == 0 {
		groups = 1 + r.IntN(6) // with cpg 1 below: depthwise
	}
	cpg := 1 + r.IntN(4)
	if r.IntN(3) == 0 {
		cpg = 1
	}
	return tgeom{
		N: 1 + r.IntN(2), C: groups * cpg, H: 1 + r.IntN(hw), W: 1 + r.IntN(hw),
		M: groups * (1 + r.IntN(mpg)), KH: 1 + r.IntN(4), KW: 1 + r.IntN(4),
		SH: 1 + r.IntN(3), SW: 1 + r.IntN(3), DH: 1 + r.IntN(3), DW: 1 + r.IntN(3),
		PT: r.IntN(3), PL: r.IntN(3), PB: r.IntN(3), PR: r.IntN(3), Groups: groups,
	}.normalised()
}

func TestConv2DRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range convPairs() {
		k, gv := rowVariantNamed(p[0]), GemmVariantNamed(p[1])
		for trial := 0; trial < 300; trial++ {
			g := randConvGeom(r, 14, 4)
			if g.OH == 0 || g.OW == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", p[0], trial), func(t *testing.T) {
				checkConv(t, k, gv, goPar(1+r.IntN(3)), g, r.IntN(2) == 0, r)
			})
		}
	}
}

// BenchmarkConvTile compares output tile sizes on a ResNet-style 3×3
// convolution (64 → 64 channels at 56×56), single-threaded.
func BenchmarkConvTile(b *testing.B) {
	g := tgeom{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}.normalised()
	r := rand.New(rand.NewPCG(1, 2))
	x, w, bias := randFloats(r, 64*56*56), randFloats(r, 64*64*9), randFloats(r, 64)
	y := make([]float32, 64*56*56)
	defer func(v int) { convTileFloats = v }(convTileFloats)
	for _, tile := range []int{1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16} {
		convTileFloats = tile
		c, err := NewConv2D(g, true, nil, nil, Par{})
		if err != nil {
			b.Fatal(err)
		}
		var pw ConvWeights
		if err := c.PackWeights(&pw, w, bias); err != nil {
			b.Fatal(err)
		}
		args := &ConvArgs{X: x, Y: y, Packed: &pw}
		b.Run(fmt.Sprintf("floats=%d/nb=%d", tile, c.nb), func(b *testing.B) {
			for b.Loop() {
				if err := c.RunArgs(args); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*64*64*9*56*56*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func TestConv2DErrors(t *testing.T) {
	g := tgeom{N: 1, C: 4, H: 5, W: 5, M: 6, KH: 3, KW: 3, Groups: 2}.normalised()
	if _, err := NewConv2D(tgeom{N: 1, C: 3, H: 5, W: 5, M: 6, KH: 3, KW: 3, Groups: 2}.normalised(), false, nil, nil, Par{}); err == nil {
		t.Error("groups not dividing the channels accepted")
	}
	bad := g
	bad.SH = 0
	if _, err := NewConv2D(bad, false, nil, nil, Par{}); err == nil {
		t.Error("stride 0 accepted")
	}
	c, err := NewConv2D(g, true, nil, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	x, w, b := make([]float32, 100), make([]float32, 6*2*9), make([]float32, 6)
	y := make([]float32, 6*9)
	if err := c.Run(y, x, w, b); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(y, x, w, nil); err == nil {
		t.Error("missing bias accepted")
	}
	if err := c.Run(y[:10], x, w, b); err == nil {
		t.Error("short output accepted")
	}
	buf := make([]float32, 200)
	if err := c.Run(buf[50:104], buf[:100], w, b); err == nil {
		t.Error("output overlapping the input accepted")
	}
}

// TestConvWorkers: a convolution gets a worker per convParMinFlops of
// work, up to those it is given, and none to share below two workers'
// worth (a serial plan: one chunk); depthwise convolutions keep every
// worker.
func TestConvWorkers(t *testing.T) {
	defer func(v int) { convParMinFlops = v }(convParMinFlops)
	convParMinFlops = convParMinFlopsDefault
	par := goPar(4)
	for _, c := range []struct {
		flops, want int
	}{{0, 1}, {convParMinFlopsDefault - 1, 1}, {2*convParMinFlopsDefault - 1, 1}, {2 * convParMinFlopsDefault, 2},
		{3*convParMinFlopsDefault + 5, 3}, {100 * convParMinFlopsDefault, 4}} {
		got := convWorkers(par, c.flops)
		if threads := max(got.Threads, 1); threads != c.want || (c.want == 1) != (got.For == nil) {
			t.Errorf("%d flops: %d threads (For set %v), want %d", c.flops, got.Threads, got.For != nil, c.want)
		}
	}
	// DenseNet's 1×1 from 512 channels to 128 at 2×2 (1 Mflop): serial.
	small := tgeom{N: 1, C: 512, H: 2, W: 2, M: 128, KH: 1, KW: 1}.normalised()
	// ResNet-18's 3×3 at 56², 64 channels (231 Mflop): every worker.
	big := tgeom{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1}.normalised()
	// A depthwise 3×3 over 128 channels of 14² (0.45 Mflop): every worker.
	dw := tgeom{N: 1, C: 128, H: 14, W: 14, M: 128, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 128}.normalised()
	for _, c := range []struct {
		name   string
		g      ConvGeom
		chunks int
	}{{"small", small, 1}, {"big", big, 4}, {"depthwise", dw, 4}} {
		conv, err := NewConv2D(c.g, true, nil, nil, par)
		if err != nil {
			t.Fatal(err)
		}
		if n := conv.c.N(); n != c.chunks {
			t.Errorf("%s: %d chunks, want %d", c.name, n, c.chunks)
		}
	}
}
