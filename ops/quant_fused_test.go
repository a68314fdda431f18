package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// TestDynQuantMatMul: the fused node's reference and fast kernels give
// the bits of the subgraph it stands for (DynamicQuantizeLinear,
// MatMulInteger, Cast, the scales' Mul, Mul, Add) run by the reference
// interpreter, over I8 and U8 weights, scalar and per-column zero points
// and scales, with and without a bias, a batched x, an x holding a NaN
// (quantized to the zero point), a constant x (an empty range), a
// non-positive x with -0 elements and an x of signed zeros; the largest
// x is scanned for its range in chunks across the workers.
func TestDynQuantMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 3))
	for _, s := range [][3]int{{1, 8, 3}, {5, 70, 9}, {33, 300, 64}, {128, 768, 8}} {
		for _, wdt := range quant8 {
			for form := range 4 { // bit 0: per-column zero and scale; bit 1: bias
				for xk := range 5 { // 0 random, 1 with a NaN, 2 constant, 3 non-positive with -0, 4 signed zeros
					name := fmt.Sprintf("%v/%v/form%d/x%d", s, wdt, form, xk)
					t.Run(name, func(t *testing.T) { checkDynQuant(t, r, s[0], s[1], s[2], wdt, form&1 != 0, form&2 != 0, xk) })
				}
			}
		}
	}
}

func checkDynQuant(t *testing.T, r *rand.Rand, m, k, n int, wdt tensor.DType, perCol, bias bool, xk int) {
	g := graph.New()
	xdims := []int{m, k}
	if m == 5 {
		xdims = []int{1, m, k}
	}
	x := g.Input("x", tensor.F32, xdims...)
	w := g.Param("w", wdt, k, n)
	cols := []int{}
	if perCol {
		cols = []int{n}
	}
	wz, ws := g.Input("wz", wdt, cols...), g.Input("ws", tensor.F32, cols...)
	q, xs, xz := g.DynamicQuantizeLinear(x)
	y := g.Mul(g.Cast(g.MatMulInteger(q, w, xz, wz), tensor.F32), g.Mul(xs, ws))
	ins := []*graph.Node{x, w, wz, ws}
	feeds := map[string]tensor.Tensor{
		"x": tensor.New(tensor.F32, xdims...), "w": q8Rand(r, wdt, 0, k, n), "wz": q8Rand(r, wdt, 0, cols...),
		"ws": tensor.New(tensor.F32, cols...),
	}
	for i := range feeds["x"].F32() {
		switch xk {
		case 2:
			feeds["x"].F32()[i] = 0.75
		case 3:
			feeds["x"].F32()[i] = float32(-math.Abs(r.NormFloat64() * 3))
			if i%5 == 0 {
				feeds["x"].F32()[i] = float32(math.Copysign(0, -1))
			}
		case 4:
			feeds["x"].F32()[i] = float32(math.Copysign(0, float64(i%2)-0.5))
		default:
			feeds["x"].F32()[i] = float32(r.NormFloat64() * 3)
		}
	}
	if xk == 1 {
		xv := feeds["x"].F32()
		xv[k/2], xv[len(xv)-1-k/3] = float32(math.NaN()), float32(math.NaN()) // in the first and last chunks
	}
	for i := range feeds["ws"].F32() {
		feeds["ws"].F32()[i] = float32(0.001 + 0.05*r.Float64())
	}
	if bias {
		b := g.Input("b", tensor.F32, n)
		y = g.Add(y, b)
		ins = append(ins, b)
		feeds["b"] = tensor.New(tensor.F32, n)
		for i := range feeds["b"].F32() {
			feeds["b"].F32()[i] = float32(r.NormFloat64())
		}
	}
	g.Output(y)
	fused, err := g.Insert(graph.OpDynQuantMatMul, graph.Attrs{}, ins...)
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
	fast, variant := fastRun(t, fused, parEnv(3), args...)
	for i, v := range want[0].F32() {
		w := math.Float32bits(v)
		if math.Float32bits(float32(ref[i])) != w || math.Float32bits(float32(fast[i])) != w {
			t.Fatalf("element %d: reference %v, fast (%s) %v, want %v (the unfused subgraph)", i, ref[i], variant, fast[i], v)
		}
	}
}

// BenchmarkDynQuantMatMul runs the fused dynamically quantized product
// next to the float32 MatMul of the same shape (the fast kernels, one
// thread) at BERT-base-like shapes; x-f32 is the f32 product's time over
// the fused one's, measured just before it (>1: the int8 path is faster).
func BenchmarkDynQuantMatMul(b *testing.B) {
	r := rand.New(rand.NewPCG(24, 4))
	for _, s := range [][3]int{{128, 384, 384}, {128, 384, 1536}, {128, 1536, 384}, {1, 768, 768}} {
		m, k, n := s[0], s[1], s[2]
		x := tensor.New(tensor.F32, m, k)
		for i := range x.F32() {
			x.F32()[i] = float32(r.NormFloat64())
		}
		wf := tensor.New(tensor.F32, k, n)
		for i := range wf.F32() {
			wf.F32()[i] = float32(r.NormFloat64() * 0.05)
		}
		g := graph.New()
		xi, wfi := g.Input("x", tensor.F32, m, k), g.Param("wf", tensor.F32, k, n)
		mm := g.MatMul(xi, wfi)
		w8, wz, ws := g.Param("w", tensor.I8, k, n), g.Param("wz", tensor.I8), g.Param("ws", tensor.F32)
		dq, err := g.Insert(graph.OpDynQuantMatMul, graph.Attrs{}, xi, w8, wz, ws)
		if err != nil {
			b.Fatal(err)
		}
		var f32ns float64
		for _, c := range []struct {
			name string
			n    *graph.Node
			ins  []tensor.Tensor
			out  tensor.Tensor
		}{
			{"f32", mm, []tensor.Tensor{x, wf}, tensor.New(tensor.F32, m, n)},
			{"int8", dq, []tensor.Tensor{x, q8Rand(r, tensor.I8, 0, k, n), q8Rand(r, tensor.I8, 0), tensor.New(tensor.F32)}, tensor.New(tensor.F32, m, n)},
		} {
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, k, n, c.name), func(b *testing.B) {
				kern, _, err := PrepareFast(c.n, Serial)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if err := kern(c.ins, c.out); err != nil {
						b.Fatal(err)
					}
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if c.name == "f32" {
					f32ns = ns
				} else if f32ns > 0 {
					b.ReportMetric(f32ns/ns, "x-f32")
				}
				b.ReportMetric(2*float64(m*k*n)/ns, "GOPS")
			})
		}
	}
}

// TestQuantizeRow: the float32 rounding of asm.QuantizeU8 (the best
// variant; asm's TestQuantizeU8 holds every variant to its twin) agrees with
// quantizeOne (float64 math.RoundToEven) on every float32 quotient's
// neighbourhood that matters: all halves and their float32 neighbours up
// to ±600, a sweep of random quotients, ±Inf, NaN, ±0, over zero points
// 0, 1, 128, 254 and 255.
func TestQuantizeRow(t *testing.T) {
	var xs []float32
	for h := -1200; h <= 1200; h++ {
		v := float32(h) / 2
		xs = append(xs, v, math.Nextafter32(v, float32(math.Inf(1))), math.Nextafter32(v, float32(math.Inf(-1))))
	}
	r := rand.New(rand.NewPCG(24, 5))
	for range 20000 {
		xs = append(xs, float32(r.NormFloat64()*300), math.Float32frombits(r.Uint32()))
	}
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), 1e30, -1e30, 4194303.5, -4194303.5)
	q := make([]uint8, len(xs))
	for _, z := range []uint8{0, 1, 128, 254, 255} {
		if err := asm.QuantizeU8(nil, q, xs, 1, z); err != nil {
			t.Fatal(err)
		}
		for i, v := range xs {
			if want := uint8(quantizeOne(float64(v), float64(z), 0, 255)); q[i] != want {
				t.Fatalf("z %d: QuantizeU8(%v) = %d, want %d", z, v, q[i], want)
			}
		}
	}
}

// TestDynQuantMatMulAllocs: a run of the fast kernel allocates nothing
// (the weights packed on the first run).
func TestDynQuantMatMulAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 7))
	g := graph.New()
	x, w := g.Input("x", tensor.F32, 6, 40), g.Param("w", tensor.I8, 40, 24)
	n, err := g.Insert(graph.OpDynQuantMatMul, graph.Attrs{}, x, w, g.Param("wz", tensor.I8, 24), g.Param("ws", tensor.F32, 24), g.Param("b", tensor.F32, 24))
	if err != nil {
		t.Fatal(err)
	}
	kern, _, err := PrepareFast(n, Serial)
	if err != nil {
		t.Fatal(err)
	}
	xs := tensor.New(tensor.F32, 6, 40)
	for i := range xs.F32() {
		xs.F32()[i] = float32(r.NormFloat64())
	}
	ins := []tensor.Tensor{xs, q8Rand(r, tensor.I8, 0, 40, 24), q8Rand(r, tensor.I8, 0, 24), tensor.New(tensor.F32, 24), tensor.New(tensor.F32, 24)}
	out := tensor.New(tensor.F32, 6, 24)
	if err := kern(ins, out); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { _ = kern(ins, out) }); a != 0 {
		t.Errorf("%v allocations a run", a)
	}
}
