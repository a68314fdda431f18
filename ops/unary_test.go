package ops

import (
	"fmt"
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// Hand-computed tests of the elementwise, reduction and softmax reference
// kernels. Helpers carry an ew prefix to stay clear of
// other test files in the package.

var (
	ewNaN  = math.NaN()
	ewInf  = math.Inf(1)
	ewNInf = math.Inf(-1)
)

// ewT makes a tensor of dtype dt holding vals (T must match dt's storage).
func ewT[T any](dt tensor.DType, shape []int, vals ...T) tensor.Tensor {
	t := tensor.New(dt, shape...)
	if len(vals) != t.NumElements() {
		panic(fmt.Sprintf("ewT: %d values for shape %v", len(vals), shape))
	}
	copy(tensor.Elems[T](t.Data), vals)
	return t
}

// ewF makes a float tensor (F32, F64, F16 or BF16) from float64 values.
func ewF(dt tensor.DType, shape []int, vals ...float64) tensor.Tensor {
	t, err := tensor.FromFloat64s(dt, shape, vals)
	if err != nil {
		panic(err)
	}
	return t
}

// ewEvalErr feeds ins as inputs in0, in1, ... of a graph whose single
// output build makes, and interprets it.
func ewEvalErr(build func(g *graph.Graph, xs []*graph.Node) *graph.Node, ins ...tensor.Tensor) (tensor.Tensor, error) {
	g := graph.New()
	xs := make([]*graph.Node, len(ins))
	feeds := map[string]tensor.Tensor{}
	for i, in := range ins {
		name := fmt.Sprintf("in%d", i)
		xs[i] = g.Input(name, in.DType, in.Shape...)
		feeds[name] = in
	}
	g.Output(build(g, xs))
	if err := g.Err(); err != nil {
		return tensor.Tensor{}, err
	}
	outs, err := Interpret(g, feeds)
	if err != nil {
		return tensor.Tensor{}, err
	}
	return outs[0], nil
}

func ewEval(t *testing.T, build func(g *graph.Graph, xs []*graph.Node) *graph.Node, ins ...tensor.Tensor) tensor.Tensor {
	t.Helper()
	out, err := ewEvalErr(build, ins...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ewShape fails unless got has the wanted shape.
func ewShape(t *testing.T, got tensor.Tensor, shape []int) {
	t.Helper()
	if !got.Shape.Equal(shape) {
		t.Fatalf("shape %v, want %v", got.Shape, tensor.Shape(shape))
	}
}

// ewClose compares within a relative tolerance; NaN matches NaN and
// infinities must be equal.
func ewClose(got, want, rel float64) bool {
	return approx.Close(got, want, rel*math.Abs(want))
}

// ewFloats checks a float tensor (any float dtype) against want.
func ewFloats(t *testing.T, got tensor.Tensor, shape []int, want []float64, rel float64) {
	t.Helper()
	ewShape(t, got, shape)
	g := got.Float64s()
	for i := range want {
		if !ewClose(g[i], want[i], rel) {
			t.Fatalf("%v: element %d = %v, want %v (all: %v)", got, i, g[i], want[i], g)
		}
	}
}

// ewInts checks an integer tensor exactly.
func ewInts(t *testing.T, got tensor.Tensor, shape []int, want []int64) {
	t.Helper()
	ewShape(t, got, shape)
	wide := tensor.New(tensor.I64, got.Shape...)
	if err := tensor.Convert(wide, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range wide.I64() {
		if v != want[i] {
			t.Fatalf("%v: element %d = %d, want %d (all: %v)", got, i, v, want[i], wide.I64())
		}
	}
}

// ewBools checks a Bool tensor exactly (bytes must be 0 or 1).
func ewBools(t *testing.T, got tensor.Tensor, shape []int, want []bool) {
	t.Helper()
	ewShape(t, got, shape)
	if got.DType != tensor.Bool {
		t.Fatalf("dtype %v, want bool", got.DType)
	}
	for i, b := range got.Data {
		if b != boolByte(want[i]) {
			t.Fatalf("element %d = %d, want %v (all: %v)", i, b, want[i], got.Data)
		}
	}
}

func ewUnary(f func(g *graph.Graph, x *graph.Node) *graph.Node) func(*graph.Graph, []*graph.Node) *graph.Node {
	return func(g *graph.Graph, xs []*graph.Node) *graph.Node { return f(g, xs[0]) }
}

// ewPhi is the standard normal CDF, from the complementary error function
// (a different route than Gelu's erf).
func ewPhi(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }

func TestUnaryFloatCases(t *testing.T) {
	ln3 := math.Log(3)
	cases := []struct {
		name string
		f    func(g *graph.Graph, x *graph.Node) *graph.Node
		in   []float64
		want []float64
		rel  float64 // for F32; F64 uses 1e-15 where rel > 0
	}{
		{"Neg", (*graph.Graph).Neg, []float64{1.5, -2, 0, ewInf, ewNaN}, []float64{-1.5, 2, 0, ewNInf, ewNaN}, 0},
		{"Abs", (*graph.Graph).Abs, []float64{-1.5, 2, ewNInf, ewNaN}, []float64{1.5, 2, ewInf, ewNaN}, 0},
		{"Exp", (*graph.Graph).Exp, []float64{0, 1, -1, ewNInf, ewInf, ewNaN, 1000}, []float64{1, math.E, 1 / math.E, 0, ewInf, ewNaN, ewInf}, 3e-7},
		{"Log", (*graph.Graph).Log, []float64{1, math.E, 0, -1, ewInf, 0.125}, []float64{0, 1, ewNInf, ewNaN, ewInf, -3 * math.Ln2}, 3e-7},
		{"Sqrt", (*graph.Graph).Sqrt, []float64{4, 2.25, 0, -1, ewInf}, []float64{2, 1.5, 0, ewNaN, ewInf}, 0},
		{"Rsqrt", (*graph.Graph).Rsqrt, []float64{4, 0.25, 0, ewInf, -4}, []float64{0.5, 2, ewInf, 0, ewNaN}, 0},
		{"Reciprocal", (*graph.Graph).Reciprocal, []float64{4, -0.5, 0, math.Copysign(0, -1), ewInf}, []float64{0.25, -2, ewInf, ewNInf, 0}, 0},
		{"Tanh", (*graph.Graph).Tanh, []float64{0, ln3, -ln3, 30, ewNInf, ewNaN}, []float64{0, 0.8, -0.8, 1, -1, ewNaN}, 3e-7},
		{"Sigmoid", (*graph.Graph).Sigmoid, []float64{0, ln3, -ln3, ewInf, ewNInf, -800, ewNaN}, []float64{0.5, 0.75, 0.25, 1, 0, 0, ewNaN}, 3e-7},
		{"Relu", (*graph.Graph).Relu, []float64{-3, 0, 2.5, ewNInf, ewInf, ewNaN}, []float64{0, 0, 2.5, 0, ewInf, ewNaN}, 0},
		{"Gelu", (*graph.Graph).Gelu, []float64{0, 1, -1, 2.5, 10, ewNaN}, []float64{0, ewPhi(1), -ewPhi(-1), 2.5 * ewPhi(2.5), 10, ewNaN}, 3e-7},
		{"Silu", (*graph.Graph).Silu, []float64{0, ln3, -ln3, 50, -1000}, []float64{0, 0.75 * ln3, -0.25 * ln3, 50, 0}, 3e-7},
		{"Erf", (*graph.Graph).Erf, []float64{0, 0.5, -0.5, ewInf, ewNInf, ewNaN}, []float64{0, 1 - math.Erfc(0.5), math.Erfc(0.5) - 1, 1, -1, ewNaN}, 3e-7},
		{"Sin", (*graph.Graph).Sin, []float64{0, math.Pi / 2, math.Pi / 6, -math.Pi / 2, ewInf}, []float64{0, 1, 0.5, -1, ewNaN}, 3e-7},
		{"Cos", (*graph.Graph).Cos, []float64{0, math.Pi, math.Pi / 3, ewNaN}, []float64{1, -1, 0.5, ewNaN}, 3e-7},
		{"Floor", (*graph.Graph).Floor, []float64{2.5, -2.5, 3, -0.1, ewInf, ewNaN}, []float64{2, -3, 3, -1, ewInf, ewNaN}, 0},
		{"Ceil", (*graph.Graph).Ceil, []float64{2.5, -2.5, 3, 0.1, ewNInf}, []float64{3, -2, 3, 1, ewNInf}, 0},
		{"Round", (*graph.Graph).Round, []float64{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -2.6, 0.49999997, ewNaN},
			[]float64{-2, -2, 0, 0, 2, 2, 3, -3, 0, ewNaN}, 0},
		{"LeakyRelu", func(g *graph.Graph, x *graph.Node) *graph.Node { return g.LeakyRelu(x, 0.25) },
			[]float64{-4, 0, 3, ewNInf, ewNaN}, []float64{-1, 0, 3, ewNInf, ewNaN}, 0},
		{"Clip", func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Clip(x, -1, 2) },
			[]float64{-5, -1, 0.5, 2, 7, ewNaN, ewInf}, []float64{-1, -1, 0.5, 2, 2, ewNaN, 2}, 0},
		{"ClipMin", func(g *graph.Graph, x *graph.Node) *graph.Node { return g.ClipMin(x, 0) },
			[]float64{-5, 3, ewInf}, []float64{0, 3, ewInf}, 0},
	}
	for _, c := range cases {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				rel := c.rel
				if dt == tensor.F64 && rel > 0 {
					rel = 1e-15
				}
				want := make([]float64, len(c.want))
				for i, w := range c.want {
					want[i] = w
					if dt == tensor.F32 {
						want[i] = float64(float32(w))
					}
				}
				got := ewEval(t, ewUnary(c.f), ewF(dt, []int{len(c.in)}, c.in...))
				ewFloats(t, got, []int{len(c.in)}, want, rel)
			})
		}
	}
}

// GeluTanh is checked against the identity (1 + tanh z)/2 = sigmoid(2z).
func TestUnaryGeluTanh(t *testing.T) {
	in := []float64{0, 1, -1, 0.3, 3, -3, 8}
	want := make([]float64, len(in))
	for i, x := range in {
		z := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
		want[i] = x / (1 + math.Exp(-2*z))
	}
	got := ewEval(t, ewUnary((*graph.Graph).GeluTanh), ewF(tensor.F64, []int{len(in)}, in...))
	ewFloats(t, got, []int{len(in)}, want, 1e-14)
	if approx.Far(got.F64()[1], 0.8411919906082768, 1e-12) {
		t.Fatalf("GeluTanh(1) = %v", got.F64()[1])
	}
}

func TestUnaryRoundTiesF32(t *testing.T) {
	// Ties at magnitudes where F32 still has fractional bits, and values
	// past 2^23 that are already integers.
	in := []float64{0.5, 1.5, 2.5, 3.5, 4.5, 1<<22 + 0.5, 1<<22 + 1.5, 1 << 24}
	want := []float64{0, 2, 2, 4, 4, 1 << 22, 1<<22 + 2, 1 << 24}
	got := ewEval(t, ewUnary((*graph.Graph).Round), ewF(tensor.F32, []int{len(in)}, in...))
	ewFloats(t, got, []int{len(in)}, want, 0)
}

func TestUnaryInts(t *testing.T) {
	got := ewEval(t, ewUnary((*graph.Graph).Neg), ewT[int8](tensor.I8, []int{4}, 5, -7, 0, -128))
	ewInts(t, got, []int{4}, []int64{-5, 7, 0, -128}) // -(-128) wraps
	got = ewEval(t, ewUnary((*graph.Graph).Abs), ewT[int32](tensor.I32, []int{3}, -5, 6, math.MinInt32))
	ewInts(t, got, []int{3}, []int64{5, 6, math.MinInt32})
	got = ewEval(t, ewUnary((*graph.Graph).Relu), ewT[int64](tensor.I64, []int{2, 2}, -1<<40, 1<<40, 0, -1))
	ewInts(t, got, []int{2, 2}, []int64{0, 1 << 40, 0, 0})

	clip := func(lo, hi float32) func(*graph.Graph, []*graph.Node) *graph.Node {
		return ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Clip(x, lo, hi) })
	}
	// Bounds convert like a Cast: truncated toward zero, saturated.
	got = ewEval(t, clip(-1.5, 2.7), ewT[int32](tensor.I32, []int{6}, -5, -1, 0, 2, 3, 9))
	ewInts(t, got, []int{6}, []int64{-1, -1, 0, 2, 2, 2})
	got = ewEval(t, clip(float32(math.Inf(-1)), 200), ewT[uint8](tensor.U8, []int{4}, 0, 199, 200, 255))
	ewInts(t, got, []int{4}, []int64{0, 199, 200, 200})
	got = ewEval(t, clip(-1000, 1000), ewT[int8](tensor.I8, []int{3}, -128, 0, 127))
	ewInts(t, got, []int{3}, []int64{-128, 0, 127})
	got = ewEval(t, clip(-3e9, 5), ewT[int64](tensor.I64, []int{3}, -1<<40, 5, 6))
	ewInts(t, got, []int{3}, []int64{-3e9, 5, 5})
}

func TestUnaryNot(t *testing.T) {
	x := ewT[uint8](tensor.Bool, []int{3}, 0, 1, 7) // 7: any non-zero byte is true
	got := ewEval(t, ewUnary((*graph.Graph).Not), x)
	ewBools(t, got, []int{3}, []bool{true, false, false})
}

func TestUnaryEmpty(t *testing.T) {
	got := ewEval(t, ewUnary((*graph.Graph).Exp), ewF(tensor.F32, []int{0, 3}))
	ewShape(t, got, []int{0, 3})
	got = ewEval(t, ewUnary((*graph.Graph).Neg), ewF(tensor.F64, nil, 2))
	ewFloats(t, got, nil, []float64{-2}, 0)
}

// F16 and BF16 nodes run the F32 kernel on widened inputs; the result must
// be the F32 result on the same (exactly widened) values, rounded.
func TestUnaryHalfWidening(t *testing.T) {
	in := []float64{-3.5, -1, -0.3, 0, 0.7, 2, 9.75}
	builds := map[string]func(g *graph.Graph, x *graph.Node) *graph.Node{
		"Exp": (*graph.Graph).Exp, "Gelu": (*graph.Graph).Gelu, "Tanh": (*graph.Graph).Tanh,
		"Round": (*graph.Graph).Round, "Neg": (*graph.Graph).Neg,
		"Clip": func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Clip(x, -1, 1) },
	}
	for name, f := range builds {
		for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
			x := ewF(dt, []int{len(in)}, in...)
			got := ewEval(t, ewUnary(f), x)
			wide := ewEval(t, ewUnary(f), ewF(tensor.F32, []int{len(in)}, x.Float64s()...))
			ewHalfMatches(t, name, got, wide)
		}
	}
}

// ewHalfMatches checks that a half tensor equals an F32 tensor rounded to
// its dtype, bit for bit.
func ewHalfMatches(t *testing.T, name string, got, wide tensor.Tensor) {
	t.Helper()
	if !got.Shape.Equal(wide.Shape) {
		t.Fatalf("%s %v: shape %v, want %v", name, got.DType, got.Shape, wide.Shape)
	}
	w := wide.F32()
	for i := range w {
		var g, want uint16
		if got.DType == tensor.F16 {
			g, want = got.F16()[i], tensor.F32ToF16(w[i])
		} else {
			g, want = got.BF16()[i], tensor.F32ToBF16(w[i])
		}
		if g != want {
			t.Fatalf("%s %v element %d: bits %#04x, want %#04x", name, got.DType, i, g, want)
		}
	}
}

// ewPrepare builds the node that build makes from inputs shaped like ins
// and prepares its reference kernel.
func ewPrepare(t *testing.T, build func(g *graph.Graph, xs []*graph.Node) *graph.Node, ins ...tensor.Tensor) (Kernel, *graph.Node) {
	t.Helper()
	g := graph.New()
	xs := make([]*graph.Node, len(ins))
	for i, in := range ins {
		xs[i] = g.Input(fmt.Sprintf("in%d", i), in.DType, in.Shape...)
	}
	n := build(g, xs)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	k, err := PrepareReference(n)
	if err != nil {
		t.Fatal(err)
	}
	return k, n
}

// ewInPlaceSame runs k once into a fresh output and once with the output
// aliasing input 0, and checks both agree (and the flag is set).
func ewInPlaceSame(t *testing.T, name string, build func(g *graph.Graph, xs []*graph.Node) *graph.Node, ins ...tensor.Tensor) {
	t.Helper()
	k, n := ewPrepare(t, build, ins...)
	if e, _ := Lookup(n.Op); !e.InPlace {
		t.Fatalf("%s: %v is not flagged InPlace", name, n.Op)
	}
	sep := tensor.New(n.DType, n.Shape...)
	if err := k(ins, sep); err != nil {
		t.Fatal(err)
	}
	alias := append([]tensor.Tensor(nil), ins...)
	alias[0] = ins[0].Clone()
	out := tensor.Tensor{DType: n.DType, Shape: n.Shape, Data: alias[0].Data}
	if err := k(alias, out); err != nil {
		t.Fatal(err)
	}
	if string(out.Data) != string(sep.Data) {
		t.Fatalf("%s %v: in place %v, separate %v", name, ins[0].DType, out.Data, sep.Data)
	}
}

func TestUnaryInPlace(t *testing.T) {
	in := []float64{-2.5, -1, -0.25, 0, 0.5, 1.5, 3, 7.25, 0.1, 2}
	for _, op := range graph.Ops() {
		if !op.IsUnary() || op == graph.OpNot {
			continue
		}
		build := ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node {
			switch op {
			case graph.OpLeakyRelu:
				return g.LeakyRelu(x, 0.1)
			case graph.OpClip:
				return g.Clip(x, -1, 1)
			case graph.OpElu, graph.OpCelu, graph.OpThresholdedRelu:
				return g.Apply(op, graph.Attrs{Alpha: 0.5}, x)
			case graph.OpSelu, graph.OpShrink:
				return g.Apply(op, graph.Attrs{Alpha: 0.5, Beta: 1.5}, x)
			}
			return ewUnaryNode(g, op, x)
		})
		for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.BF16} {
			ewInPlaceSame(t, op.String(), build, ewF(dt, []int{2, 5}, in...))
		}
	}
	ewInPlaceSame(t, "Neg", ewUnary((*graph.Graph).Neg), ewT[int32](tensor.I32, []int{3}, 1, -2, 3))
	ewInPlaceSame(t, "Not", ewUnary((*graph.Graph).Not), ewT[uint8](tensor.Bool, []int{2}, 0, 1))
}

// ewUnaryNode applies an attribute-free unary op by kind.
func ewUnaryNode(g *graph.Graph, op graph.Op, x *graph.Node) *graph.Node {
	m := map[graph.Op]func(*graph.Graph, *graph.Node) *graph.Node{
		graph.OpNeg: (*graph.Graph).Neg, graph.OpAbs: (*graph.Graph).Abs, graph.OpExp: (*graph.Graph).Exp,
		graph.OpLog: (*graph.Graph).Log, graph.OpSqrt: (*graph.Graph).Sqrt, graph.OpRsqrt: (*graph.Graph).Rsqrt,
		graph.OpReciprocal: (*graph.Graph).Reciprocal, graph.OpTanh: (*graph.Graph).Tanh,
		graph.OpSigmoid: (*graph.Graph).Sigmoid, graph.OpRelu: (*graph.Graph).Relu, graph.OpGelu: (*graph.Graph).Gelu,
		graph.OpGeluTanh: (*graph.Graph).GeluTanh, graph.OpSilu: (*graph.Graph).Silu, graph.OpErf: (*graph.Graph).Erf,
		graph.OpSin: (*graph.Graph).Sin, graph.OpCos: (*graph.Graph).Cos, graph.OpFloor: (*graph.Graph).Floor,
		graph.OpCeil: (*graph.Graph).Ceil, graph.OpRound: (*graph.Graph).Round, graph.OpNot: (*graph.Graph).Not,
	}
	if f, ok := m[op]; ok {
		return f(g, x)
	}
	return g.Apply(op, graph.Attrs{}, x)
}

// Kernels must not allocate when they run (the widening path excepted:
// it belongs to widen.go).
func TestUnaryNoAllocs(t *testing.T) {
	x := ewF(tensor.F32, []int{4, 8}, make([]float64, 32)...)
	for _, build := range []func(*graph.Graph, *graph.Node) *graph.Node{
		(*graph.Graph).Exp, (*graph.Graph).Round,
		func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Clip(x, 0, 1) },
	} {
		k, n := ewPrepare(t, ewUnary(build), x)
		out := tensor.New(n.DType, n.Shape...)
		ins := []tensor.Tensor{x}
		if a := testing.AllocsPerRun(20, func() { _ = k(ins, out) }); a != 0 {
			t.Fatalf("%v allocates %v times per run", n.Op, a)
		}
	}
	ins := []tensor.Tensor{ewT[int8](tensor.I8, []int{3}, 1, 2, 3)}
	k, n := ewPrepare(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Clip(x, 0, 2) }), ins...)
	out := tensor.New(n.DType, n.Shape...)
	if a := testing.AllocsPerRun(20, func() { _ = k(ins, out) }); a != 0 {
		t.Fatalf("int Clip allocates %v times per run", a)
	}
}

// A buffer of the wrong size is an error, not a panic.
func TestUnaryBadBuffer(t *testing.T) {
	x := ewF(tensor.F32, []int{4}, 1, 2, 3, 4)
	k, _ := ewPrepare(t, ewUnary((*graph.Graph).Exp), x)
	if err := k([]tensor.Tensor{x}, tensor.New(tensor.F32, 3)); err == nil {
		t.Fatal("short output accepted")
	}
	if err := k(nil, tensor.New(tensor.F32, 4)); err == nil {
		t.Fatal("missing input accepted")
	}
}
