package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestConv2DCases(t *testing.T) {
	x33 := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9} // [[1 2 3] [4 5 6] [7 8 9]]
	w1234 := []float64{1, 2, 3, 4}              // [[1 2] [3 4]]
	cases := []struct {
		name   string
		xs, ws tensor.Shape
		x, w   []float64
		bias   []float64 // nil: none
		o      graph.ConvOpts
		out    tensor.Shape
		want   []float64
	}{
		// out[i j] = x[i j] + 2x[i j+1] + 3x[i+1 j] + 4x[i+1 j+1].
		{"plain", tensor.Shape{1, 1, 3, 3}, tensor.Shape{1, 1, 2, 2}, x33, w1234, nil, graph.ConvOpts{},
			tensor.Shape{1, 1, 2, 2}, []float64{37, 47, 67, 77}},
		{"bias", tensor.Shape{1, 1, 3, 3}, tensor.Shape{1, 1, 2, 2}, x33, w1234, []float64{1}, graph.ConvOpts{},
			tensor.Shape{1, 1, 2, 2}, []float64{38, 48, 68, 78}},
		// Ones kernel, pad 1, stride 2: windows hold {1}, {2 3}, {4 7}, {5 6 8 9}.
		{"stride pad", tensor.Shape{1, 1, 3, 3}, tensor.Shape{1, 1, 2, 2}, x33, []float64{1, 1, 1, 1}, nil,
			graph.ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}, tensor.Shape{1, 1, 2, 2}, []float64{1, 5, 11, 28}},
		// Pads top 1, right 2 on [[1 2] [3 4]]: padded rows [0 0 0 0], [1 2 0 0], [3 4 0 0].
		{"asymmetric pads", tensor.Shape{1, 1, 2, 2}, tensor.Shape{1, 1, 2, 2}, w1234, w1234, nil,
			graph.ConvOpts{Pads: []int{1, 0, 0, 2}}, tensor.Shape{1, 1, 2, 3}, []float64{11, 6, 0, 30, 14, 0}},
		// Dilation 2: taps x[0 0], x[0 2], x[2 0], x[2 2].
		{"dilation", tensor.Shape{1, 1, 3, 3}, tensor.Shape{1, 1, 2, 2}, x33, w1234, nil,
			graph.ConvOpts{Dilations: []int{2, 2}}, tensor.Shape{1, 1, 1, 1}, []float64{1 + 6 + 21 + 36}},
		// Dilation [1 2]: taps x[i 0], x[i 2], x[i+1 0], x[i+1 2].
		{"dilation w only", tensor.Shape{1, 1, 3, 3}, tensor.Shape{1, 1, 2, 2}, x33, w1234, nil,
			graph.ConvOpts{Dilations: []int{1, 2}}, tensor.Shape{1, 1, 2, 1}, []float64{43, 73}},
		// Stride [1 2] with dilation 1 on a 2x3 input, 1x1 kernel: picks columns 0 and 2.
		{"stride w only", tensor.Shape{1, 1, 2, 3}, tensor.Shape{1, 1, 1, 1}, x33[:6], []float64{2}, nil,
			graph.ConvOpts{Strides: []int{1, 2}}, tensor.Shape{1, 1, 2, 2}, []float64{2, 6, 8, 12}},
		// Two groups of two channels: m0 sees channels 0 1, m1 channels 2 3.
		{"groups", tensor.Shape{1, 4, 1, 1}, tensor.Shape{2, 2, 1, 1}, []float64{1, 2, 3, 4}, []float64{1, 10, 100, 1000},
			[]float64{0.5, -0.5}, graph.ConvOpts{Groups: 2}, tensor.Shape{1, 2, 1, 1}, []float64{21.5, 4299.5}},
		// Two groups, two outputs each: sums and differences within each group.
		{"groups 2 out each", tensor.Shape{1, 4, 1, 1}, tensor.Shape{4, 2, 1, 1}, []float64{1, 2, 3, 4},
			[]float64{1, 1, 1, -1, 1, 1, 1, -1}, nil, graph.ConvOpts{Groups: 2}, tensor.Shape{1, 4, 1, 1}, []float64{3, -1, 7, -1}},
		// Depthwise: channel 0 [[1 2] [3 4]] takes its top-left, channel 1 [[5 6] [7 8]] its bottom-right.
		{"depthwise", tensor.Shape{1, 2, 2, 2}, tensor.Shape{2, 1, 2, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8},
			[]float64{1, 0, 0, 0, 0, 0, 0, 1}, nil, graph.ConvOpts{Groups: 2}, tensor.Shape{1, 2, 1, 1}, []float64{1, 8}},
		// Depthwise with pad 1 and a 1x1 kernel of 10 and -1: the border is zero.
		{"depthwise pad", tensor.Shape{1, 2, 1, 1}, tensor.Shape{2, 1, 1, 1}, []float64{3, 5}, []float64{10, -1}, nil,
			graph.ConvOpts{Groups: 2, Pads: []int{1, 0, 0, 1}}, tensor.Shape{1, 2, 2, 2}, []float64{0, 0, 30, 0, 0, 0, -5, 0}},
		// Two images, two input channels summed by a 1x1 kernel [1 1].
		{"batch", tensor.Shape{2, 2, 1, 2}, tensor.Shape{1, 2, 1, 1}, []float64{1, 2, 10, 20, 3, 4, 30, 40}, []float64{1, 1}, nil,
			graph.ConvOpts{}, tensor.Shape{2, 1, 1, 2}, []float64{11, 22, 33, 44}},
	}
	for _, dt := range hcDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				ins := []tensor.Tensor{hcT(t, dt, c.xs, c.x...), hcT(t, dt, c.ws, c.w...)}
				var bn *graph.Node
				if c.bias != nil {
					bn = g.Input("bias", dt, len(c.bias))
					ins = append(ins, hcT(t, dt, tensor.Shape{len(c.bias)}, c.bias...))
				}
				n := g.Conv2D(g.Input("x", dt, c.xs...), g.Input("w", dt, c.ws...), bn, c.o)
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				if !n.Shape.Equal(c.out) {
					t.Fatalf("shape %v, want %v", n.Shape, c.out)
				}
				hcClose(t, "conv", hcRun(t, n, ins...), c.want, hcTol(dt))
			})
		}
	}
}

// TestConv2DIm2Col checks Conv2D on random shapes and attributes against
// an im2col lowering written here (explicitly zero-padded input, one
// column per output cell) multiplied per group by the MatMul kernel.
func TestConv2DIm2Col(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 40 {
		groups := 1 + r.IntN(3)
		if iter%5 == 0 {
			groups = 2 // with cpg 1 below: depthwise
		}
		cpg, mpg := 1+r.IntN(3), 1+r.IntN(3)
		if iter%5 == 0 {
			cpg = 1
		}
		nb, c, m := 1+r.IntN(2), groups*cpg, groups*mpg
		kh, kw := 1+r.IntN(3), 1+r.IntN(3)
		o := graph.ConvOpts{
			Strides:   []int{1 + r.IntN(2), 1 + r.IntN(3)},
			Dilations: []int{1 + r.IntN(2), 1 + r.IntN(2)},
			Pads:      []int{r.IntN(3), r.IntN(3), r.IntN(3), r.IntN(3)},
			Groups:    groups,
		}
		h := o.Dilations[0]*(kh-1) + 1 + r.IntN(4)
		w := o.Dilations[1]*(kw-1) + 1 + r.IntN(4)
		xv, wv, bv := hcRand(r, nb*c*h*w), hcRand(r, m*cpg*kh*kw), hcRand(r, m)
		for _, dt := range hcDTypes {
			g := graph.New()
			n := g.Conv2D(g.Input("x", dt, nb, c, h, w), g.Input("w", dt, m, cpg, kh, kw), g.Input("b", dt, m), o)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			xt, wt, bt := hcT(t, dt, tensor.Shape{nb, c, h, w}, xv...), hcT(t, dt, tensor.Shape{m, cpg, kh, kw}, wv...), hcT(t, dt, tensor.Shape{m}, bv...)
			got := hcRun(t, n, xt, wt, bt)
			oh, ow := n.Shape[2], n.Shape[3]
			// Zero-padded input planes.
			ph, pw := h+o.Pads[0]+o.Pads[2], w+o.Pads[1]+o.Pads[3]
			xs := xt.Float64s()
			padded := make([]float64, nb*c*ph*pw)
			for i := range nb * c {
				for y := range h {
					for x := range w {
						padded[(i*ph+y+o.Pads[0])*pw+x+o.Pads[1]] = xs[(i*h+y)*w+x]
					}
				}
			}
			want := make([]float64, nb*m*oh*ow)
			rows := cpg * kh * kw
			for b := range nb {
				for gi := range groups {
					cols := make([]float64, rows*oh*ow) // [cpg·kh·kw, oh·ow]
					for ci := range cpg {
						plane := padded[(b*c+gi*cpg+ci)*ph*pw:]
						for ky := range kh {
							for kx := range kw {
								row := (ci*kh+ky)*kw + kx
								for y := range oh {
									for x := range ow {
										py, px := y*o.Strides[0]+ky*o.Dilations[0], x*o.Strides[1]+kx*o.Dilations[1]
										cols[row*oh*ow+y*ow+x] = plane[py*pw+px]
									}
								}
							}
						}
					}
					mg := graph.New()
					mm := mg.MatMul(mg.Input("w", tensor.F64, mpg, rows), mg.Input("c", tensor.F64, rows, oh*ow))
					wg := wt.Float64s()[gi*mpg*rows : (gi+1)*mpg*rows]
					prod := hcRun(t, mm, hcT(t, tensor.F64, tensor.Shape{mpg, rows}, wg...), hcT(t, tensor.F64, tensor.Shape{rows, oh * ow}, cols...))
					bs := bt.Float64s()
					for mi := range mpg {
						for i := range oh * ow {
							want[((b*m+gi*mpg+mi)*oh*ow)+i] = prod[mi*oh*ow+i] + bs[gi*mpg+mi]
						}
					}
				}
			}
			hcClose(t, "conv vs im2col", got, want, hcTol(dt))
		}
	}
}

func TestPoolCases(t *testing.T) {
	x := []float64{1, 5, 2, 7, 3, 9, 4, 8, 6} // [[1 5 2] [7 3 9] [4 8 6]]
	neg := make([]float64, len(x))
	for i, v := range x {
		neg[i] = -v
	}
	k2 := []int{2, 2}
	cases := []struct {
		name     string
		max      bool
		x        []float64
		o        graph.PoolOpts
		out      tensor.Shape
		want     []float64
		countPad bool
	}{
		{"max", true, x, graph.PoolOpts{Kernel: k2}, tensor.Shape{1, 1, 2, 2}, []float64{7, 9, 8, 9}, false},
		// Pad 1 stride 2: windows hold {1}, {5 2}, {7 4}, {3 9 8 6}.
		{"max stride pad", true, x, graph.PoolOpts{Kernel: k2, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}},
			tensor.Shape{1, 1, 2, 2}, []float64{1, 5, 7, 9}, false},
		// All negative: padding (which would be 0) never wins.
		{"max pad never wins", true, neg, graph.PoolOpts{Kernel: k2, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}},
			tensor.Shape{1, 1, 2, 2}, []float64{-1, -2, -4, -3}, false},
		// Pads left 1, bottom 1; windows listed in the comment of the avg case below.
		{"max asymmetric", true, neg, graph.PoolOpts{Kernel: k2, Pads: []int{0, 1, 1, 0}},
			tensor.Shape{1, 1, 3, 3}, []float64{-1, -1, -2, -4, -3, -3, -4, -4, -6}, false},
		{"max 1x3 stride", true, x, graph.PoolOpts{Kernel: []int{1, 3}, Strides: []int{2, 1}},
			tensor.Shape{1, 1, 2, 1}, []float64{5, 8}, false},
		{"avg", false, x, graph.PoolOpts{Kernel: k2}, tensor.Shape{1, 1, 2, 2}, []float64{4, 4.75, 5.5, 6.5}, false},
		{"avg pad excluded", false, x, graph.PoolOpts{Kernel: k2, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}},
			tensor.Shape{1, 1, 2, 2}, []float64{1, 3.5, 5.5, 6.5}, false},
		{"avg pad counted", false, x, graph.PoolOpts{Kernel: k2, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, CountPad: true},
			tensor.Shape{1, 1, 2, 2}, []float64{0.25, 1.75, 2.75, 6.5}, true},
		// Windows (real cells): {1 7} {1 5 7 3} {5 2 3 9} / {7 4} {7 3 4 8} {3 9 8 6} / {4} {4 8} {8 6}.
		{"avg asymmetric excluded", false, x, graph.PoolOpts{Kernel: k2, Pads: []int{0, 1, 1, 0}},
			tensor.Shape{1, 1, 3, 3}, []float64{4, 4, 4.75, 5.5, 5.5, 6.5, 4, 6, 7}, false},
		{"avg asymmetric counted", false, x, graph.PoolOpts{Kernel: k2, Pads: []int{0, 1, 1, 0}, CountPad: true},
			tensor.Shape{1, 1, 3, 3}, []float64{2, 4, 4.75, 2.75, 5.5, 6.5, 1, 3, 3.5}, true},
	}
	for _, dt := range hcDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				in := g.Input("x", dt, 1, 1, 3, 3)
				var n *graph.Node
				if c.max {
					n = g.MaxPool2D(in, c.o)
				} else {
					n = g.AvgPool2D(in, c.o)
				}
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				if !n.Shape.Equal(c.out) {
					t.Fatalf("shape %v, want %v", n.Shape, c.out)
				}
				tol := hcTol(dt)
				if c.max {
					tol = 0
				}
				hcClose(t, "pool", hcRun(t, n, hcT(t, dt, tensor.Shape{1, 1, 3, 3}, c.x...)), c.want, tol)
			})
		}
	}
}

func TestPoolPlanesAndSpecials(t *testing.T) {
	for _, dt := range hcDTypes {
		// Two images of two channels: each plane is pooled on its own.
		g := graph.New()
		x := g.Input("x", dt, 2, 2, 1, 2)
		vals := []float64{1, 2, -3, -4, 5, 6, 7, -8}
		got := hcRun(t, g.MaxPool2D(x, graph.PoolOpts{Kernel: []int{1, 2}}), hcT(t, dt, tensor.Shape{2, 2, 1, 2}, vals...))
		hcClose(t, "max planes", got, []float64{2, -3, 6, 7}, 0)
		got = hcRun(t, g.AvgPool2D(x, graph.PoolOpts{Kernel: []int{1, 2}}), hcT(t, dt, tensor.Shape{2, 2, 1, 2}, vals...))
		hcClose(t, "avg planes", got, []float64{1.5, -3.5, 5.5, -0.5}, hcTol(dt))
		// NaN propagates through max, wherever it sits in the window.
		nan, inf := math.NaN(), math.Inf(1)
		got = hcRun(t, g.MaxPool2D(x, graph.PoolOpts{Kernel: []int{1, 2}}), hcT(t, dt, tensor.Shape{2, 2, 1, 2}, nan, 2, -3, nan, inf, 6, -inf, -inf))
		hcClose(t, "max specials", got, []float64{nan, nan, inf, -inf}, 0)
	}
}

func TestGlobalAvgPoolCases(t *testing.T) {
	for _, dt := range hcDTypes {
		g := graph.New()
		n := g.GlobalAvgPool(g.Input("x", dt, 1, 2, 3))
		if !n.Shape.Equal(tensor.Shape{1, 2, 1}) {
			t.Fatalf("shape %v", n.Shape)
		}
		hcClose(t, "rank 3", hcRun(t, n, hcT(t, dt, tensor.Shape{1, 2, 3}, 1, 2, 3, 4, 5, 9)), []float64{2, 6}, hcTol(dt))
		n = g.GlobalAvgPool(g.Input("x4", dt, 2, 1, 2, 2))
		hcClose(t, "rank 4", hcRun(t, n, hcT(t, dt, tensor.Shape{2, 1, 2, 2}, 1, 2, 3, 4, -1, -1, -1, 7)), []float64{2.5, 1}, hcTol(dt))
		n = g.GlobalAvgPool(g.Input("x5", dt, 1, 2, 2, 1, 2))
		hcClose(t, "rank 5", hcRun(t, n, hcT(t, dt, tensor.Shape{1, 2, 2, 1, 2}, 1, 2, 3, 4, 0, 0, 0, 0.5)), []float64{2.5, 0.125}, hcTol(dt))
	}
}

func TestConvNoAllocs(t *testing.T) {
	g := graph.New()
	x, w, b := g.Input("x", tensor.F32, 2, 4, 7, 6), g.Input("w", tensor.F32, 6, 2, 3, 2), g.Input("b", tensor.F32, 6)
	xv := tensor.New(tensor.F32, 2, 4, 7, 6)
	o := graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 0, 2, 1}, Dilations: []int{1, 2}, Groups: 2}
	hcNoAllocs(t, g.Conv2D(x, w, b, o), xv, tensor.New(tensor.F32, 6, 2, 3, 2), tensor.New(tensor.F32, 6))
	p := graph.PoolOpts{Kernel: []int{3, 2}, Strides: []int{2, 2}, Pads: []int{1, 1, 0, 1}}
	hcNoAllocs(t, g.MaxPool2D(x, p), xv)
	hcNoAllocs(t, g.AvgPool2D(x, p), xv)
	hcNoAllocs(t, g.GlobalAvgPool(x), xv)
}

// TestConv2DPaddingTimesWeight pins the padding semantics: a padding cell
// is a zero the weight multiplies, so a NaN or infinite weight that only
// ever meets padding still gives NaN (0·NaN, 0·Inf), as ONNX Runtime and
// PyTorch compute it. The reference skipped padded taps and gave finite
// values where every fast kernel gave NaN. The fast kernel must agree,
// dense and depthwise.
func TestConv2DPaddingTimesWeight(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	// x = [[1 2] [3 4]] per channel, 3×3 kernels, pad 1. Channel 0's
	// kernel has +Inf in its top-left corner, which reads input
	// (oy-1, ox-1): real data only for output (1,1). Channel 1's has +Inf
	// in its bottom-right corner, reading (oy+1, ox+1): real only for
	// output (0,0). Both centres are 1.
	x := []float64{1, 2, 3, 4, 1, 2, 3, 4}
	w := []float64{inf, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, inf}
	for _, c := range []struct {
		name   string
		groups int
		ws     tensor.Shape
		wv     []float64
		want   []float64
	}{
		// Channels summed: every output meets an Inf through padding.
		{"dense", 1, tensor.Shape{1, 2, 3, 3}, w, []float64{nan, nan, nan, nan}},
		// Per channel: +Inf where the corner reads data, NaN elsewhere.
		{"depthwise", 2, tensor.Shape{2, 1, 3, 3}, w, []float64{nan, nan, nan, inf, inf, nan, nan, nan}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			n := g.Conv2D(g.Input("x", tensor.F32, 1, 2, 2, 2), g.Input("w", tensor.F32, c.ws...), nil,
				graph.ConvOpts{Pads: []int{1, 1, 1, 1}, Groups: c.groups})
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			feeds := map[string]tensor.Tensor{"x": hcT(t, tensor.F32, tensor.Shape{1, 2, 2, 2}, x...), "w": hcT(t, tensor.F32, c.ws, c.wv...)}
			hcClose(t, "reference", hcRun(t, n, feeds["x"], feeds["w"]), c.want, 1e-6)
			checkFast(t, n, feeds, 1e-6)
		})
	}
}
