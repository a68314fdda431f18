package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// rsSpec is a ResizeSpec from dims in to out, scales out/in.
func rsSpec(mode graph.ResizeMode, coord graph.ResizeCoord, in, out []int) graph.ResizeSpec {
	s := graph.ResizeSpec{Mode: mode, Coord: coord, Sizes: out, CubicA: -0.75}
	for i := range in {
		s.Scales = append(s.Scales, float64(out[i])/float64(in[i]))
	}
	return s
}

// rsRun runs the reference kernel of a one-node graph on x.
func rsRun(t *testing.T, n *graph.Node, ins ...tensor.Tensor) []float64 {
	t.Helper()
	k, err := PrepareReference(n)
	if err != nil {
		t.Fatal(err)
	}
	out := tensor.New(n.DType, n.Shape...)
	if err := k(ins, out); err != nil {
		t.Fatal(err)
	}
	return out.Float64s()
}

// TestResizeReferenceByHand checks the reference against values worked
// out by hand from ONNX's formulas.
func TestResizeReferenceByHand(t *testing.T) {
	x, err := tensor.FromFloat64s(tensor.F64, tensor.Shape{1, 4}, []float64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec graph.ResizeSpec
		want []float64
	}{
		// half_pixel 2x: x_in = (o + 0.5)/2 - 0.5 = -0.25, 0.25, 0.75, ...;
		// -0.25 clamps both taps to sample 0.
		{"linear half_pixel", rsSpec(graph.ResizeLinear, graph.CoordHalfPixel, []int{1, 4}, []int{1, 8}),
			[]float64{1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4}},
		// align_corners 4 → 3: x_in = o·3/2 = 0, 1.5, 3.
		{"linear align_corners", rsSpec(graph.ResizeLinear, graph.CoordAlignCorners, []int{1, 4}, []int{1, 3}),
			[]float64{1, 2.5, 4}},
		// asymmetric 4 → 6 (scale 1.5): x_in = 0, 2/3, 4/3, 2, 8/3, 10/3;
		// round_prefer_floor rounds 2/3 up, 4/3 down.
		{"nearest asymmetric", rsSpec(graph.ResizeNearest, graph.CoordAsymmetric, []int{1, 4}, []int{1, 6}),
			[]float64{1, 2, 2, 3, 4, 4}},
		// half_pixel 4 → 2: x_in = 0.5, 2.5: prefer_ceil takes 1 and 3.
		{"nearest prefer_ceil", func() graph.ResizeSpec {
			s := rsSpec(graph.ResizeNearest, graph.CoordHalfPixel, []int{1, 4}, []int{1, 2})
			s.Nearest = graph.NearestRoundPreferCeil
			return s
		}(), []float64{2, 4}},
		// Cubic, align_corners 4 → 7: x_in = o/2. With A = -0.75 the
		// weights at t = 0.5 are w(1.5) = -0.09375, w(0.5) = 0.59375,
		// 0.59375, -0.09375; taps clamp to the ends (x_in 0.5 reads
		// samples 1, 1, 2, 3; 2.5 reads 2, 3, 4, 4).
		{"cubic", rsSpec(graph.ResizeCubic, graph.CoordAlignCorners, []int{1, 4}, []int{1, 7}),
			[]float64{1, 1.40625, 2, 2.5, 3, 3.59375, 4}},
	} {
		g := graph.New()
		n := g.Resize(g.Input("x", tensor.F64, 1, 4), c.spec)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		approx.Slices(t, c.name, rsRun(t, n, x), c.want, 1e-12, 1e-12)
	}
	// tf_crop_and_resize: ROI [0.5, 1.25] of 4 samples is x_in 1.5 .. 3.75
	// over 4 outputs (steps of 0.75); 3.75 > 3 extrapolates.
	s := rsSpec(graph.ResizeLinear, graph.CoordTFCropAndResize, []int{1, 4}, []int{1, 4})
	s.ROI, s.Extrapolation = []float64{0, 0.5, 1, 1.25}, -9
	g := graph.New()
	n := g.Resize(g.Input("x", tensor.F64, 1, 4), s)
	approx.Slices(t, "tf_crop_and_resize", rsRun(t, n, x), []float64{2.5, 3.25, 4, -9}, 1e-12, 1e-12)
}

// TestResizeFast compares the fast kernel with the reference, NaN and
// infinities included, serially and over 3 workers.
func TestResizeFast(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name    string
		in, out []int
		mode    graph.ResizeMode
		coord   graph.ResizeCoord
	}{
		{"nearest 2x", []int{2, 3, 5, 7}, []int{2, 3, 10, 14}, graph.ResizeNearest, graph.CoordAsymmetric},
		{"nearest 3x1", []int{1, 2, 5, 7}, []int{1, 2, 15, 7}, graph.ResizeNearest, graph.CoordHalfPixel},
		{"nearest 4x", []int{1, 2, 3, 5}, []int{1, 2, 12, 20}, graph.ResizeNearest, graph.CoordAsymmetric},
		{"nearest odd", []int{3, 9, 7}, []int{3, 5, 11}, graph.ResizeNearest, graph.CoordHalfPixel},
		{"bilinear 2x", []int{2, 3, 6, 9}, []int{2, 3, 12, 18}, graph.ResizeLinear, graph.CoordHalfPixel},
		{"bilinear down", []int{1, 4, 9, 8}, []int{1, 4, 5, 3}, graph.ResizeLinear, graph.CoordAlignCorners},
		{"bilinear 2-D", []int{7, 6}, []int{13, 11}, graph.ResizeLinear, graph.CoordPytorchHalfPixel},
		{"bilinear down wide", []int{1, 2, 40, 70}, []int{1, 2, 19, 35}, graph.ResizeLinear, graph.CoordHalfPixel},
		{"bilinear down align", []int{2, 1, 40, 80}, []int{2, 1, 21, 48}, graph.ResizeLinear, graph.CoordAlignCorners},
		{"linear rows only", []int{2, 5, 6}, []int{2, 9, 6}, graph.ResizeLinear, graph.CoordHalfPixel},
		{"linear columns only", []int{2, 5, 6}, []int{2, 5, 13}, graph.ResizeLinear, graph.CoordAlignCorners},
	} {
		rsCompare(t, r, c.name, c.in, c.out, c.mode, c.coord)
	}
}

// rsCompare runs the fast kernel on random data, without and with NaN
// and infinities, serially and over 3 workers, against the reference.
func rsCompare(t *testing.T, r *rand.Rand, name string, in, out []int, mode graph.ResizeMode, coord graph.ResizeCoord) {
	t.Helper()
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0}
	for _, withSpecials := range []bool{false, true} {
		g := graph.New()
		n := g.Resize(g.Input("x", tensor.F32, in...), rsSpec(mode, coord, in, out))
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		x := tensor.New(tensor.F32, in...)
		for i := range x.F32() {
			x.F32()[i] = float32(4*r.Float64() - 2)
			if withSpecials && i%5 == 2 {
				x.F32()[i] = specials[i%len(specials)]
			}
		}
		want := rsRun(t, n, x)
		for _, env := range []Env{Serial, parEnv(3)} {
			got, _ := fastRun(t, n, env, x)
			for i := range want {
				if approx.Far(got[i], want[i], 1e-6*(1+math.Abs(want[i]))) {
					t.Fatalf("%s (specials %v, %d threads): element %d is %v, reference %v", name, withSpecials, env.Threads, i, got[i], want[i])
				}
			}
		}
	}
}

// TestResizeFastWidths sweeps row widths across the vector kernels'
// steps and tails (8 and 16 lanes) for the cases with row kernels:
// nearest by 2 and 4 (Repeat), 3 (the twin), and linear 2× under
// half_pixel and pytorch_half_pixel (Lerp2), against the reference.
func TestResizeFastWidths(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	widths := []int{1, 2, 3}
	for w := 7; w <= 41; w++ {
		widths = append(widths, w)
	}
	widths = append(widths, 63, 64, 65, 129)
	for _, w := range widths {
		for _, s := range []int{2, 3, 4} {
			in, out := []int{2, 3, w}, []int{2, 3 * s, w * s}
			rsCompare(t, r, fmt.Sprintf("nearest %dx width %d", s, w), in, out, graph.ResizeNearest, graph.CoordAsymmetric)
		}
		for _, coord := range []graph.ResizeCoord{graph.CoordHalfPixel, graph.CoordPytorchHalfPixel, graph.CoordAlignCorners} {
			in, out := []int{2, 3, w}, []int{2, 6, 2 * w}
			rsCompare(t, r, fmt.Sprintf("linear 2x width %d coord %v", w, coord), in, out, graph.ResizeLinear, coord)
		}
	}
}

// TestResizeFastBands cuts every plane into bands of two to five source
// rows (the buffer of interpolated rows made that small), so that bands
// start and end mid-plane, share source rows, and meet the workers'
// shares of rows, against the reference.
func TestResizeFastBands(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	defer func(b int) { resizeBandBytes = b }(resizeBandBytes)
	for _, rows := range []int{1, 2, 3, 5} {
		for _, c := range []struct {
			in, out []int
			coord   graph.ResizeCoord
		}{
			{[]int{2, 3, 11, 17}, []int{2, 3, 22, 34}, graph.CoordHalfPixel},      // Lerp2 pairs
			{[]int{1, 3, 11, 17}, []int{1, 3, 22, 34}, graph.CoordAlignCorners},   // LerpTaps
			{[]int{1, 2, 4, 5}, []int{1, 2, 32, 40}, graph.CoordPytorchHalfPixel}, // 8×
			{[]int{1, 2, 23, 19}, []int{1, 2, 9, 7}, graph.CoordHalfPixel},        // down
			{[]int{1, 2, 9, 19}, []int{1, 2, 20, 19}, graph.CoordAsymmetric},      // rows only
		} {
			resizeBandBytes = rows * 4 * c.out[3]
			rsCompare(t, r, fmt.Sprintf("%v→%v %v band of %d rows", c.in, c.out, c.coord, rows), c.in, c.out, graph.ResizeLinear, c.coord)
		}
	}
}

// TestResizeLerpPairs checks which linear axes take the Lerp2 kernel:
// 2× under half_pixel (weights 0.75, 0.25, worked out by hand: output
// 2i+1 sits at input i + 0.25) but not align_corners (weights vary) nor
// 3×.
func TestResizeLerpPairs(t *testing.T) {
	for _, c := range []struct {
		coord graph.ResizeCoord
		w, ow int
		ok    bool
		a, b  float32
	}{
		{graph.CoordHalfPixel, 9, 18, true, 0.75, 0.25},
		{graph.CoordPytorchHalfPixel, 33, 66, true, 0.75, 0.25},
		{graph.CoordAlignCorners, 9, 18, false, 0, 0},
		{graph.CoordHalfPixel, 9, 27, false, 0, 0},
	} {
		g := graph.New()
		n := g.Resize(g.Input("x", tensor.F32, 1, c.w), rsSpec(graph.ResizeLinear, c.coord, []int{1, c.w}, []int{1, c.ow}))
		p, err := newResizePlan(n)
		if err != nil {
			t.Fatal(err)
		}
		x0, x1, w0, w1 := splitTaps(p.axes[1])
		ok, a, b := lerpPairs(c.w, c.ow, x0, x1, w0, w1)
		if ok != c.ok || a != c.a || b != c.b {
			t.Errorf("%v %d→%d: lerpPairs = %v, %v, %v; want %v, %v, %v", c.coord, c.w, c.ow, ok, a, b, c.ok, c.a, c.b)
		}
	}
}

// TestResizeFusedTaps checks which linear resizes run vertical pass first
// through BlendTaps: downsampling and up to 2× (no source row serves
// more than two output rows), not beyond, and only where the row kernels
// run BlendTaps vectorised (AVX-512; AVX2 for narrow taps only).
func TestResizeFusedTaps(t *testing.T) {
	vector := asm.BestRows().BlendTapsVector(mustTaps(t))
	up := asm.BestRows().BlendTapsVector(upTaps(t)) // AVX2 too
	for _, c := range []struct {
		in, out []int
		fused   bool
	}{
		{[]int{1, 2, 20, 40}, []int{1, 2, 40, 80}, up},
		{[]int{1, 2, 40, 70}, []int{1, 2, 19, 35}, vector},
		{[]int{1, 2, 40, 80}, []int{1, 2, 21, 48}, vector},
		{[]int{1, 2, 20, 70}, []int{1, 2, 40, 35}, vector},
		{[]int{1, 2, 20, 40}, []int{1, 2, 41, 80}, false},
	} {
		g := graph.New()
		n := g.Resize(g.Input("x", tensor.F32, c.in...), rsSpec(graph.ResizeLinear, graph.CoordAlignCorners, c.in, c.out))
		f, err := newResizeFast(n, Serial)
		if err != nil || f == nil {
			t.Fatalf("%v→%v: no fast kernel (%v)", c.in, c.out, err)
		}
		if got := f.fusedTaps; got != c.fused {
			t.Errorf("%v→%v: fused %v, want %v", c.in, c.out, got, c.fused)
		}
	}
}

// upTaps is a 32-output upsampling by 2 (align_corners), whose taps the
// window layouts take.
func upTaps(t *testing.T) *asm.Taps {
	i0, i1, w0, w1 := make([]int32, 32), make([]int32, 32), make([]float32, 32), make([]float32, 32)
	for o := range i0 {
		s := o * 15 / 31
		i0[o], i1[o], w0[o], w1[o] = int32(s), int32(min(s+1, 15)), 0.5, 0.5
	}
	tp, err := asm.NewTaps(i0, i1, w0, w1, 16)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// mustTaps is a 16-output downsampling by 2, which the permute layout
// takes.
func mustTaps(t *testing.T) *asm.Taps {
	i0, i1, w0, w1 := make([]int32, 16), make([]int32, 16), make([]float32, 16), make([]float32, 16)
	for o := range i0 {
		i0[o], i1[o], w0[o], w1[o] = int32(2*o), int32(2*o+1), 0.5, 0.5
	}
	tp, err := asm.NewTaps(i0, i1, w0, w1, 32)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}
