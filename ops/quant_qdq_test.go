package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// qdqCase is one QDQMatMul or QDQConv check: the forms of w's
// quantization, the epilogue and x's zero point.
type qdqCase struct {
	wdt          tensor.DType
	perCh, bias  bool
	act          graph.Op
	xz           uint8
	nan          bool // x holds NaNs (quantized to the zero point)
	transB, conv bool
}

// TestQDQMatMul: the fused node's reference and fast kernels give the
// bits of the integer subgraph its epilogue documents (the fast one's
// activations other than Relu, on the vector kernels, within a few ulp
// of them), run by the
// reference interpreter: QuantizeLinear(x), MatMulInteger against w (its
// Transpose for TransB) with both zero points, Cast, times Mul(xScale,
// wScale), plus bias, then the activation. The sums are exact int32 in
// both; x's scale saturates some of x at 0 and 255; over I8 and U8
// weights, per-tensor and per-column zero points and scales, zero points
// of x at 0, 131 and 255, with NaNs in x.
func TestQDQMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 11))
	for _, s := range [][3]int{{1, 8, 3}, {5, 70, 9}, {33, 300, 64}} {
		for _, c := range []qdqCase{
			{wdt: tensor.I8, perCh: true, bias: true, act: graph.OpRelu, xz: 131},
			{wdt: tensor.I8, transB: true, xz: 0, nan: true},
			{wdt: tensor.U8, perCh: true, transB: true, bias: true, act: graph.OpGelu, xz: 255},
			{wdt: tensor.U8, act: graph.OpTanh, xz: 131},
		} {
			t.Run(fmt.Sprintf("%v/%+v", s, c), func(t *testing.T) {
				m, k, n := s[0], s[1], s[2]
				wdims := []int{k, n}
				if c.transB {
					wdims = []int{n, k}
				}
				checkQDQ(t, r, c, []int{m, k}, wdims, graph.ConvOpts{}, true)
			})
		}
	}
}

// TestQDQConv is TestQDQMatMul for QDQConv against ConvInteger: padded,
// strided and 1×1 windows on the fast kernel (im2col with x's zero point
// in the padding); a grouped one on the reference alone (the fast kernel
// leaves groups to it).
func TestQDQConv(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 12))
	for _, g := range []struct {
		x, w []int
		o    graph.ConvOpts
		fast bool
	}{
		{[]int{2, 3, 9, 8}, []int{4, 3, 3, 2}, graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 0, 2, 1}}, true},
		{[]int{1, 8, 12, 12}, []int{16, 8, 3, 3}, graph.ConvOpts{Pads: []int{1, 1, 1, 1}, Dilations: []int{2, 1}}, true},
		{[]int{1, 16, 7, 7}, []int{24, 16, 1, 1}, graph.ConvOpts{Strides: []int{2, 2}}, true},
		{[]int{2, 5, 9, 10}, []int{7, 5, 2, 3}, graph.ConvOpts{Dilations: []int{1, 2}, Pads: []int{0, 2, 1, 1}, Strides: []int{1, 3}}, true},
		{[]int{1, 4, 7, 7}, []int{6, 2, 2, 3}, graph.ConvOpts{Groups: 2, Pads: []int{1, 1, 1, 1}}, false},
	} {
		for _, c := range []qdqCase{
			{wdt: tensor.I8, perCh: true, bias: true, act: graph.OpRelu, xz: 131},
			{wdt: tensor.U8, xz: 0, nan: true},
			{wdt: tensor.I8, perCh: true, xz: 255, act: graph.OpSigmoid},
		} {
			c.conv = true
			t.Run(fmt.Sprintf("%v*%v/%+v", g.x, g.w, c), func(t *testing.T) { checkQDQ(t, r, c, g.x, g.w, g.o, g.fast) })
		}
	}
}

func checkQDQ(t *testing.T, r *rand.Rand, c qdqCase, xdims, wdims []int, o graph.ConvOpts, fast bool) {
	g := graph.New()
	ch := wdims[1]
	if c.transB || c.conv {
		ch = wdims[0]
	}
	cols := []int{}
	if c.perCh {
		cols = []int{ch}
	}
	x, xs, xz := g.Input("x", tensor.F32, xdims...), g.Input("xs", tensor.F32), g.Input("xz", tensor.U8)
	w, wz, ws := g.Param("w", c.wdt, wdims...), g.Input("wz", c.wdt, cols...), g.Input("ws", tensor.F32, cols...)
	feeds := map[string]tensor.Tensor{
		"x": tensor.New(tensor.F32, xdims...), "xs": tensor.New(tensor.F32), "xz": tensor.New(tensor.U8),
		"w": q8Rand(r, c.wdt, 0, wdims...), "wz": q8Rand(r, c.wdt, 0, cols...), "ws": tensor.New(tensor.F32, cols...),
	}
	xv := feeds["x"].F32()
	for i := range xv {
		xv[i] = float32(r.NormFloat64() * 2)
	}
	if c.nan {
		xv[0], xv[len(xv)/2] = float32(math.NaN()), float32(math.NaN())
	}
	feeds["xs"].F32()[0], feeds["xz"].Data[0] = 0.015, c.xz // |x| past ~2 saturates
	for i := range feeds["ws"].F32() {
		feeds["ws"].F32()[i] = float32(0.001 + 0.05*r.Float64())
	}
	q := g.QuantizeLinear(x, xs, xz, 0)
	var acc, sc *graph.Node
	if c.conv {
		acc = g.ConvInteger(q, w, xz, wz, o)
		sc = g.Mul(xs, ws)
		if c.perCh {
			sc = g.Reshape(sc, ch, 1, 1)
		}
	} else {
		wm := w
		if c.transB {
			wm = g.Transpose(w, 1, 0)
		}
		acc, sc = g.MatMulInteger(q, wm, xz, wz), g.Mul(xs, ws)
	}
	y := g.Mul(g.Cast(acc, tensor.F32), sc)
	ins := []*graph.Node{x, xs, xz, w, wz, ws}
	at := graph.Attrs{TransB: c.transB, Epilogue: graph.Epilogue{Bias: c.bias, Act: c.act}}
	if c.conv {
		at.Strides, at.Pads, at.Dilations, at.Groups = o.Strides, o.Pads, o.Dilations, o.Groups
	}
	if c.bias {
		b := g.Input("b", tensor.F32, ch)
		ins = append(ins, b)
		feeds["b"] = tensor.New(tensor.F32, ch)
		for i := range feeds["b"].F32() {
			feeds["b"].F32()[i] = float32(r.NormFloat64())
		}
		if c.conv {
			y = g.Add(y, g.Reshape(b, ch, 1, 1))
		} else {
			y = g.Add(y, b)
		}
	}
	if c.act != graph.OpInvalid {
		y = g.Apply(c.act, graph.Attrs{}, y)
	}
	g.Output(y)
	op := graph.OpQDQMatMul
	if c.conv {
		op = graph.OpQDQConv
	}
	fused, err := g.Insert(op, at, ins...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Interpret(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]tensor.Tensor, len(ins))
	for i, in := range ins {
		args[i] = feeds[in.Name]
	}
	ref := hcRun(t, fused, args...)
	wantBits := want[0].Float64s()
	for i, v := range wantBits {
		if math.Float32bits(float32(ref[i])) != math.Float32bits(float32(v)) {
			t.Fatalf("element %d: reference %v, want %v (the integer subgraph)", i, ref[i], v)
		}
	}
	if !fast {
		return
	}
	got, variant := fastRun(t, fused, parEnv(3), args...)
	if c.act == graph.OpInvalid || c.act == graph.OpRelu {
		for i, v := range wantBits {
			if math.Float32bits(float32(got[i])) != math.Float32bits(float32(v)) {
				t.Fatalf("element %d: %s %v, want %v (the integer subgraph)", i, variant, got[i], v)
			}
		}
		return
	}
	// The activation on the vector kernels: within a few ulp.
	approx.Slices(t, variant, got, wantBits, 1e-6, 1e-7)
}

// TestFastConvInteger runs ConvInteger on the int8 GEMM (im2col) against
// the reference, bit for bit, over every signedness of x and w, scalar
// and per-channel zero points of w, the extremes of both operands and
// zero points, padded, strided, dilated and 1×1 windows; grouped ones
// stay on the reference.
func TestFastConvInteger(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 13))
	geoms := []struct {
		x, w []int
		o    graph.ConvOpts
	}{
		{[]int{2, 3, 9, 8}, []int{4, 3, 3, 2}, graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 0, 2, 1}}},
		{[]int{1, 8, 12, 12}, []int{16, 8, 3, 3}, graph.ConvOpts{Pads: []int{1, 1, 1, 1}, Dilations: []int{2, 1}}},
		{[]int{1, 40, 5, 5}, []int{33, 40, 1, 1}, graph.ConvOpts{}},
		{[]int{2, 5, 9, 10}, []int{7, 5, 2, 3}, graph.ConvOpts{Dilations: []int{1, 2}, Pads: []int{0, 2, 1, 1}, Strides: []int{1, 3}}},
	}
	for gi, ge := range geoms {
		for _, xdt := range quant8 {
			for _, wdt := range quant8 {
				for _, perCh := range []bool{false, true} {
					for ext := range 3 { // 0 random; 1, 2 the extremes of x, w and both zero points
						t.Run(fmt.Sprintf("g%d/%v-%v/perCh=%v/ext%d", gi, xdt, wdt, perCh, ext), func(t *testing.T) {
							g := graph.New()
							zw := []int{}
							if perCh {
								zw = []int{ge.w[0]}
							}
							x, w := g.Input("x", xdt, ge.x...), g.Param("w", wdt, ge.w...)
							y := g.ConvInteger(x, w, g.Input("xz", xdt), g.Input("wz", wdt, zw...), ge.o)
							g.Output(y)
							if err := g.Err(); err != nil {
								t.Fatal(err)
							}
							feeds := []tensor.Tensor{q8Rand(r, xdt, ext, ge.x...), q8Rand(r, wdt, (3-ext)%3, ge.w...), q8Rand(r, xdt, (3-ext)%3), q8Rand(r, wdt, ext, zw...)}
							want := hcRun(t, y, feeds...)
							got, variant := fastRun(t, y, parEnv(3), feeds...)
							for i := range want {
								if got[i] != want[i] {
									t.Fatalf("%s: element %d = %v, want %v", variant, i, got[i], want[i])
								}
							}
						})
					}
				}
			}
		}
	}
}

// TestQDQAllocs: a run of QDQMatMul's, QDQConv's and ConvInteger's fast
// kernels allocates nothing (the weights packed on the first run).
func TestQDQAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 14))
	g := graph.New()
	xs, xz := g.Param("xs", tensor.F32), g.Param("xz", tensor.U8)
	ep := graph.Attrs{Epilogue: graph.Epilogue{Bias: true, Act: graph.OpRelu}}
	mm, err := g.Insert(graph.OpQDQMatMul, ep, g.Input("x", tensor.F32, 6, 40), xs, xz, g.Param("w", tensor.I8, 40, 24), g.Param("wz", tensor.I8, 24), g.Param("ws", tensor.F32, 24), g.Param("b", tensor.F32, 24))
	if err != nil {
		t.Fatal(err)
	}
	ep.Strides, ep.Pads = []int{1, 1}, []int{1, 1, 1, 1}
	cv, err := g.Insert(graph.OpQDQConv, ep, g.Input("img", tensor.F32, 1, 3, 8, 8), xs, xz, g.Param("cw", tensor.I8, 5, 3, 3, 3), g.Param("cz", tensor.I8, 5), g.Param("cs", tensor.F32, 5), g.Param("cb", tensor.F32, 5))
	if err != nil {
		t.Fatal(err)
	}
	ci := g.ConvInteger(g.Input("qi", tensor.I8, 1, 3, 8, 8), g.Param("ciw", tensor.I8, 5, 3, 3, 3), g.Param("cix", tensor.I8), g.Param("ciz", tensor.I8, 5), graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	f32 := func(dims ...int) tensor.Tensor {
		v := tensor.New(tensor.F32, dims...)
		for i := range v.F32() {
			v.F32()[i] = float32(r.NormFloat64() * 0.1)
		}
		return v
	}
	for _, c := range []struct {
		n   *graph.Node
		ins []tensor.Tensor
	}{
		{mm, []tensor.Tensor{f32(6, 40), f32(), q8Rand(r, tensor.U8, 0), q8Rand(r, tensor.I8, 0, 40, 24), q8Rand(r, tensor.I8, 0, 24), f32(24), f32(24)}},
		{cv, []tensor.Tensor{f32(1, 3, 8, 8), f32(), q8Rand(r, tensor.U8, 0), q8Rand(r, tensor.I8, 0, 5, 3, 3, 3), q8Rand(r, tensor.I8, 0, 5), f32(5), f32(5)}},
		{ci, []tensor.Tensor{q8Rand(r, tensor.I8, 0, 1, 3, 8, 8), q8Rand(r, tensor.I8, 0, 5, 3, 3, 3), q8Rand(r, tensor.I8, 0), q8Rand(r, tensor.I8, 0, 5)}},
	} {
		kern, variant, err := PrepareFast(c.n, parEnv(2))
		if err != nil || variant == "reference" {
			t.Fatalf("%v: %v (%s)", c.n.Op, err, variant)
		}
		out := tensor.New(c.n.DType, c.n.Shape...)
		if err := kern(c.ins, out); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(20, func() { _ = kern(c.ins, out) }); a != 0 {
			t.Errorf("%v: %v allocations a run", c.n.Op, a)
		}
	}
}

// TestFastQuantizeLinear: QuantizeLinear from F32 to U8 per tensor on
// the row kernels has the reference's bytes, over halves of the scale
// (ties both ways), saturation, NaN, ±Inf and ±0, zero points 0, 131 and
// 255, and a length the workers split.
func TestFastQuantizeLinear(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 15))
	const n = 3<<14 + 7
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e30, -1e30}
	for _, z := range []uint8{0, 131, 255} {
		g := graph.New()
		y := g.QuantizeLinear(g.Input("x", tensor.F32, n), g.Input("s", tensor.F32), g.Input("z", tensor.U8), 0)
		g.Output(y)
		x, s, zt := tensor.New(tensor.F32, n), tensor.New(tensor.F32), tensor.New(tensor.U8)
		s.F32()[0], zt.Data[0] = 0.04, z
		for i := range x.F32() {
			switch i % 4 {
			case 0:
				x.F32()[i] = 0.02 * float32(r.IntN(20001)-10000) // halves of the scale: ties
			case 1:
				x.F32()[i] = specials[r.IntN(len(specials))]
			default:
				x.F32()[i] = float32(r.NormFloat64() * 5)
			}
		}
		want := hcRun(t, y, x, s, zt)
		got, variant := fastRun(t, y, parEnv(3), x, s, zt)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("z %d, %s: QuantizeLinear(%v) = %v, want %v", z, variant, x.F32()[i], got[i], want[i])
			}
		}
	}
}
