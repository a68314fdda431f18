package ops

import (
	"errors"
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

type ewBuild2 = func(g *graph.Graph, x, y *graph.Node) *graph.Node

func ewBinary(f ewBuild2) func(*graph.Graph, []*graph.Node) *graph.Node {
	return func(g *graph.Graph, xs []*graph.Node) *graph.Node { return f(g, xs[0], xs[1]) }
}

func TestBinaryBroadcastShapes(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6} // [2 3]
	cases := []struct {
		name   string
		xs, ys []int
		xv, yv []float64
		shape  []int
		want   []float64
	}{
		{"same", []int{2, 3}, []int{2, 3}, x, []float64{10, 20, 30, 40, 50, 60}, []int{2, 3}, []float64{11, 22, 33, 44, 55, 66}},
		{"scalar", []int{2, 3}, nil, x, []float64{10}, []int{2, 3}, []float64{11, 12, 13, 14, 15, 16}},
		{"scalar-left", nil, []int{2, 3}, []float64{10}, x, []int{2, 3}, []float64{11, 12, 13, 14, 15, 16}},
		{"row", []int{2, 3}, []int{3}, x, []float64{10, 20, 30}, []int{2, 3}, []float64{11, 22, 33, 14, 25, 36}},
		{"column", []int{2, 3}, []int{2, 1}, x, []float64{10, 20}, []int{2, 3}, []float64{11, 12, 13, 24, 25, 26}},
		{"outer", []int{2, 1}, []int{1, 3}, []float64{10, 20}, []float64{1, 2, 3}, []int{2, 3}, []float64{11, 12, 13, 21, 22, 23}},
		{"rank-up", []int{3}, []int{2, 1, 1}, []float64{1, 2, 3}, []float64{10, 20}, []int{2, 1, 3}, []float64{11, 12, 13, 21, 22, 23}},
		{"zero-rows", []int{0, 3}, []int{3}, nil, []float64{1, 2, 3}, []int{0, 3}, nil},
		{"zero-cols", []int{2, 0}, []int{2, 1}, nil, []float64{1, 2}, []int{2, 0}, nil},
		{"zero-bcast", []int{0, 1}, []int{1, 4}, nil, []float64{1, 2, 3, 4}, []int{0, 4}, nil},
	}
	for _, c := range cases {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.I32, tensor.U8} {
			got := ewEval(t, ewBinary((*graph.Graph).Add), ewF(dt, c.xs, c.xv...), ewF(dt, c.ys, c.yv...))
			if dt.IsFloat() {
				ewFloats(t, got, c.shape, c.want, 0)
			} else {
				want := make([]int64, len(c.want))
				for i, w := range c.want {
					want[i] = int64(w)
				}
				ewInts(t, got, c.shape, want)
			}
		}
	}
}

// A 4-D broadcast against an index-by-index expectation.
func TestBinaryBroadcast4D(t *testing.T) {
	xs, ys, os := []int{2, 1, 3, 1}, []int{4, 1, 5}, []int{2, 4, 3, 5}
	xv := make([]float64, 6)
	yv := make([]float64, 20)
	for i := range xv {
		xv[i] = float64(i + 1)
	}
	for i := range yv {
		yv[i] = float64(100 * (i + 1))
	}
	var want []float64
	for a := range os[0] {
		for b := range os[1] {
			for c := range os[2] {
				for d := range os[3] {
					want = append(want, xv[a*3+c]-yv[b*5+d])
				}
			}
		}
	}
	got := ewEval(t, ewBinary((*graph.Graph).Sub), ewF(tensor.F64, xs, xv...), ewF(tensor.F64, ys, yv...))
	ewFloats(t, got, os, want, 0)
}

func TestBinaryFloatOps(t *testing.T) {
	nan, inf := ewNaN, ewInf
	cases := []struct {
		name string
		f    ewBuild2
		x, y []float64
		want []float64
	}{
		{"Add", (*graph.Graph).Add, []float64{1.5, inf, inf, nan}, []float64{2.25, -inf, 1, 1}, []float64{3.75, nan, inf, nan}},
		{"Sub", (*graph.Graph).Sub, []float64{1.5, inf, 0}, []float64{2.25, inf, -0.5}, []float64{-0.75, nan, 0.5}},
		{"Mul", (*graph.Graph).Mul, []float64{1.5, 0, -2, nan}, []float64{-4, inf, -inf, 0}, []float64{-6, nan, inf, nan}},
		{"Div", (*graph.Graph).Div, []float64{1, -1, 0, 7, 1}, []float64{0, 0, 0, 2, inf}, []float64{inf, -inf, nan, 3.5, 0}},
		{"Pow", (*graph.Graph).Pow, []float64{2, 4, -2, nan, 1, 2, 0}, []float64{10, 0.5, 3, 0, nan, -2, -1},
			[]float64{1024, 2, -8, 1, 1, 0.25, inf}},
		{"Max", (*graph.Graph).Max, []float64{1, nan, 3, -inf}, []float64{2, 1, nan, -5}, []float64{2, nan, nan, -5}},
		{"Min", (*graph.Graph).Min, []float64{1, nan, 3, inf}, []float64{2, 1, nan, 5}, []float64{1, nan, nan, 5}},
	}
	for _, c := range cases {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
			s := []int{len(c.x)}
			got := ewEval(t, ewBinary(c.f), ewF(dt, s, c.x...), ewF(dt, s, c.y...))
			ewFloats(t, got, s, c.want, 0)
		}
	}
}

// F32 arithmetic must be the correctly rounded F32 result, which Go's
// float32 operators give.
func TestBinaryF32Rounding(t *testing.T) {
	x := []float32{1, 0.1, 3, 16777216, 1e30}
	y := []float32{3, 0.2, 7, 1, 1e10}
	ops := map[string]struct {
		f  ewBuild2
		op func(a, b float32) float32
	}{
		"Add": {(*graph.Graph).Add, func(a, b float32) float32 { return a + b }},
		"Sub": {(*graph.Graph).Sub, func(a, b float32) float32 { return a - b }},
		"Mul": {(*graph.Graph).Mul, func(a, b float32) float32 { return a * b }},
		"Div": {(*graph.Graph).Div, func(a, b float32) float32 { return a / b }},
	}
	for name, o := range ops {
		got := ewEval(t, ewBinary(o.f), ewT(tensor.F32, []int{5}, x...), ewT(tensor.F32, []int{5}, y...))
		for i, g := range got.F32() {
			if w := o.op(x[i], y[i]); g != w {
				t.Fatalf("%s(%v, %v) = %v, want %v", name, x[i], y[i], g, w)
			}
		}
	}
}

func TestBinaryInts(t *testing.T) {
	s := []int{4}
	got := ewEval(t, ewBinary((*graph.Graph).Add), ewT[int8](tensor.I8, s, 127, -128, 5, -3), ewT[int8](tensor.I8, s, 1, -1, 6, 3))
	ewInts(t, got, s, []int64{-128, 127, 11, 0})
	got = ewEval(t, ewBinary((*graph.Graph).Sub), ewT[uint8](tensor.U8, s, 0, 10, 255, 3), ewT[uint8](tensor.U8, s, 1, 3, 255, 4))
	ewInts(t, got, s, []int64{255, 7, 0, 255})
	got = ewEval(t, ewBinary((*graph.Graph).Mul), ewT[int32](tensor.I32, s, 1<<16, -3, 7, 0), ewT[int32](tensor.I32, s, 1<<16, 5, -7, 9))
	ewInts(t, got, s, []int64{0, -15, -49, 0})
	got = ewEval(t, ewBinary((*graph.Graph).Max), ewT[int64](tensor.I64, s, -5, 3, 1<<50, 0), ewT[int64](tensor.I64, nil, 2))
	ewInts(t, got, s, []int64{2, 3, 1 << 50, 2})
	got = ewEval(t, ewBinary((*graph.Graph).Min), ewT[uint8](tensor.U8, s, 5, 200, 0, 100), ewT[uint8](tensor.U8, nil, 100))
	ewInts(t, got, s, []int64{5, 100, 0, 100})
}

func TestBinaryIntDiv(t *testing.T) {
	s := []int{6}
	got := ewEval(t, ewBinary((*graph.Graph).Div),
		ewT[int32](tensor.I32, s, 7, -7, 7, -7, 0, math.MinInt32), ewT[int32](tensor.I32, s, 2, 2, -2, -2, 5, -1))
	ewInts(t, got, s, []int64{3, -3, -3, 3, 0, math.MinInt32}) // truncation toward zero; MinInt/-1 wraps
	got = ewEval(t, ewBinary((*graph.Graph).Div), ewT[uint8](tensor.U8, []int{2}, 255, 7), ewT[uint8](tensor.U8, []int{2}, 2, 8))
	ewInts(t, got, []int{2}, []int64{127, 0})
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		_, err := ewEvalErr(ewBinary((*graph.Graph).Div), ewF(dt, []int{3}, 1, 2, 3), ewF(dt, []int{3}, 1, 0, 1))
		if !errors.Is(err, errIntDivZero) {
			t.Fatalf("%v division by zero: err %v", dt, err)
		}
	}
	// A zero divisor with nothing to divide is no error.
	got = ewEval(t, ewBinary((*graph.Graph).Div), ewF(tensor.I64, []int{0, 2}), ewF(tensor.I64, []int{2}, 0, 0))
	ewShape(t, got, []int{0, 2})
}

func TestBinaryIntPow(t *testing.T) {
	s := []int{6}
	got := ewEval(t, ewBinary((*graph.Graph).Pow),
		ewT[int64](tensor.I64, s, 3, 2, -2, 0, 5, -1), ewT[int64](tensor.I64, s, 4, 62, 3, 0, 1, 1001))
	ewInts(t, got, s, []int64{81, 1 << 62, -8, 1, 5, -1})
	_, err := ewEvalErr(ewBinary((*graph.Graph).Pow), ewF(tensor.I32, []int{2}, 2, 2), ewF(tensor.I32, []int{2}, 1, -1))
	if !errors.Is(err, errIntNegPow) {
		t.Fatalf("negative exponent: err %v", err)
	}
	// Every I8 and U8 base with small exponents against repeated
	// multiplication (wrapping).
	var bi, ei []int8
	var bu, eu []uint8
	for b := -128; b < 128; b++ {
		for e := 0; e < 10; e++ {
			bi, ei = append(bi, int8(b)), append(ei, int8(e))
			bu, eu = append(bu, uint8(b)), append(eu, uint8(e))
		}
	}
	n := []int{len(bi)}
	gi := ewEval(t, ewBinary((*graph.Graph).Pow), ewT(tensor.I8, n, bi...), ewT(tensor.I8, n, ei...)).I8()
	gu := ewEval(t, ewBinary((*graph.Graph).Pow), ewT(tensor.U8, n, bu...), ewT(tensor.U8, n, eu...)).U8()
	for i := range bi {
		wi, wu := int8(1), uint8(1)
		for range ei[i] {
			wi *= bi[i]
			wu *= bu[i]
		}
		if gi[i] != wi || gu[i] != wu {
			t.Fatalf("Pow(%d, %d): i8 %d want %d, u8 %d want %d", bi[i], ei[i], gi[i], wi, gu[i], wu)
		}
	}
}

func TestBinaryCompare(t *testing.T) {
	cmps := []struct {
		name string
		f    ewBuild2
		want []bool // for x = [1 2 3 NaN], y = [2 2 2 NaN]
	}{
		{"Equal", (*graph.Graph).Equal, []bool{false, true, false, false}},
		{"Less", (*graph.Graph).Less, []bool{true, false, false, false}},
		{"LessOrEqual", (*graph.Graph).LessOrEqual, []bool{true, true, false, false}},
		{"Greater", (*graph.Graph).Greater, []bool{false, false, true, false}},
		{"GreaterOrEqual", (*graph.Graph).GreaterOrEqual, []bool{false, true, true, false}},
	}
	for _, c := range cmps {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.F16, tensor.BF16} {
			got := ewEval(t, ewBinary(c.f), ewF(dt, []int{4}, 1, 2, 3, ewNaN), ewF(dt, []int{4}, 2, 2, 2, ewNaN))
			ewBools(t, got, []int{4}, c.want)
		}
		// Integers without the NaN; y broadcast as a scalar.
		for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
			got := ewEval(t, ewBinary(c.f), ewF(dt, []int{3}, 1, 2, 3), ewF(dt, nil, 2))
			ewBools(t, got, []int{3}, c.want[:3])
		}
	}
	// Large I64 values must not go through float64.
	got := ewEval(t, ewBinary((*graph.Graph).Less), ewT[int64](tensor.I64, []int{1}, 1<<60), ewT[int64](tensor.I64, []int{1}, 1<<60+1))
	ewBools(t, got, []int{1}, []bool{true})
	// Equal on Bool, with a non-canonical true byte.
	got = ewEval(t, ewBinary((*graph.Graph).Equal), ewT[uint8](tensor.Bool, []int{4}, 0, 0, 1, 5), ewT[uint8](tensor.Bool, []int{4}, 0, 1, 0, 1))
	ewBools(t, got, []int{4}, []bool{true, false, false, true})
}

func TestBinaryLogic(t *testing.T) {
	x := ewT[uint8](tensor.Bool, []int{2, 1}, 0, 1)
	y := ewT[uint8](tensor.Bool, []int{2}, 0, 3)
	got := ewEval(t, ewBinary((*graph.Graph).And), x, y)
	ewBools(t, got, []int{2, 2}, []bool{false, false, false, true})
	got = ewEval(t, ewBinary((*graph.Graph).Or), x, y)
	ewBools(t, got, []int{2, 2}, []bool{false, true, true, true})
}

func TestWhere(t *testing.T) {
	where := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.Where(xs[0], xs[1], xs[2]) }
	cond := ewT[uint8](tensor.Bool, []int{2, 1}, 1, 0)
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.F16, tensor.BF16, tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		got := ewEval(t, where, cond, ewF(dt, []int{3}, 1, 2, 3), ewF(dt, nil, 9))
		ewFloats(t, got, []int{2, 3}, []float64{1, 2, 3, 9, 9, 9}, 0)
	}
	got := ewEval(t, where, cond, ewT[uint8](tensor.Bool, []int{1, 2}, 1, 0), ewT[uint8](tensor.Bool, nil, 1))
	ewBools(t, got, []int{2, 2}, []bool{true, false, true, true})
	// Three-way broadcast: cond [3], x [2 1], y [2 3].
	got = ewEval(t, where, ewT[uint8](tensor.Bool, []int{3}, 1, 0, 1), ewF(tensor.F32, []int{2, 1}, -1, -2),
		ewF(tensor.F32, []int{2, 3}, 10, 20, 30, 40, 50, 60))
	ewFloats(t, got, []int{2, 3}, []float64{-1, 20, -1, -2, 50, -2}, 0)
	got = ewEval(t, where, ewT[uint8](tensor.Bool, []int{0, 1}), ewF(tensor.F32, []int{3}, 1, 2, 3), ewF(tensor.F32, nil, 0))
	ewShape(t, got, []int{0, 3})
	// Any non-zero condition byte is true.
	got = ewEval(t, where, ewT[uint8](tensor.Bool, []int{3}, 2, 0, 255), ewF(tensor.I64, nil, 1), ewF(tensor.I64, nil, 0))
	ewInts(t, got, []int{3}, []int64{1, 0, 1})
	// NaN payloads are moved, not computed on.
	got = ewEval(t, where, ewT[uint8](tensor.Bool, nil, 1), ewF(tensor.F64, []int{2}, ewNaN, ewInf), ewF(tensor.F64, nil, 0))
	ewFloats(t, got, []int{2}, []float64{ewNaN, ewInf}, 0)
}

func TestCast(t *testing.T) {
	cast := func(to tensor.DType) func(*graph.Graph, []*graph.Node) *graph.Node {
		return func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.Cast(xs[0], to) }
	}
	got := ewEval(t, cast(tensor.I32), ewF(tensor.F32, []int{5}, 2.7, -2.7, 0.5, 3e9, ewNaN))
	ewInts(t, got, []int{5}, []int64{2, -2, 0, math.MaxInt32, 0})
	got = ewEval(t, cast(tensor.Bool), ewF(tensor.F32, []int{4}, 0, math.Copysign(0, -1), 0.1, ewNaN))
	ewBools(t, got, []int{4}, []bool{false, false, true, true})
	got = ewEval(t, cast(tensor.F32), ewT[int64](tensor.I64, []int{2}, 1<<24+1, -3))
	ewFloats(t, got, []int{2}, []float64{1 << 24, -3}, 0) // 2^24+1 ties to even
	got = ewEval(t, cast(tensor.U8), ewT[int32](tensor.I32, []int{2}, 300, -1))
	ewInts(t, got, []int{2}, []int64{44, 255})
	got = ewEval(t, cast(tensor.F64), ewF(tensor.F16, []int{2}, 1.5, -65504))
	ewFloats(t, got, []int{2}, []float64{1.5, -65504}, 0)
	got = ewEval(t, cast(tensor.F16), ewF(tensor.F32, []int{2}, 1+1.0/2048, 70000))
	ewFloats(t, got, []int{2}, []float64{1, ewInf}, 0) // tie to even; past the range
	got = ewEval(t, cast(tensor.F32), ewT[uint8](tensor.Bool, []int{2}, 1, 0))
	ewFloats(t, got, []int{2}, []float64{1, 0}, 0)
	// Every dtype has a native Cast kernel.
	for _, from := range tensor.DTypes() {
		got = ewEval(t, cast(tensor.I64), ewF(from, []int{2}, 1, 0))
		ewInts(t, got, []int{2}, []int64{1, 0})
	}
}

// F16/BF16 binary nodes match the F32 kernel on the widened values.
func TestBinaryHalfWidening(t *testing.T) {
	xv := []float64{-2.5, 0.3, 1, 7, 100, -0.01}
	yv := []float64{0.7, -3}
	for name, f := range map[string]ewBuild2{
		"Add": (*graph.Graph).Add, "Mul": (*graph.Graph).Mul, "Div": (*graph.Graph).Div,
		"Max": (*graph.Graph).Max, "Pow": func(g *graph.Graph, x, y *graph.Node) *graph.Node { return g.Pow(g.Abs(x), y) },
	} {
		for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
			x, y := ewF(dt, []int{3, 2}, xv...), ewF(dt, []int{2}, yv...)
			got := ewEval(t, ewBinary(f), x, y)
			wide := ewEval(t, ewBinary(f), ewF(tensor.F32, []int{3, 2}, x.Float64s()...), ewF(tensor.F32, []int{2}, y.Float64s()...))
			ewHalfMatches(t, name, got, wide)
		}
	}
}

func TestBinaryInPlace(t *testing.T) {
	fs := map[string]ewBuild2{
		"Add": (*graph.Graph).Add, "Sub": (*graph.Graph).Sub, "Mul": (*graph.Graph).Mul, "Div": (*graph.Graph).Div,
		"Pow": (*graph.Graph).Pow, "Max": (*graph.Graph).Max, "Min": (*graph.Graph).Min,
	}
	xv := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for name, f := range fs {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.I32, tensor.U8} {
			// y is broadcast; x has the output's shape, as in-place needs.
			ewInPlaceSame(t, name, ewBinary(f), ewF(dt, []int{3, 4}, xv...), ewF(dt, []int{3, 1}, 2, 1, 3))
			ewInPlaceSame(t, name, ewBinary(f), ewF(dt, []int{2, 1, 6}, xv...), ewF(dt, []int{6}, xv[6:]...))
		}
	}
	b := ewT[uint8](tensor.Bool, []int{2, 2}, 0, 1, 1, 0)
	c := ewT[uint8](tensor.Bool, []int{2}, 1, 0)
	ewInPlaceSame(t, "And", ewBinary((*graph.Graph).And), b, c)
	ewInPlaceSame(t, "Or", ewBinary((*graph.Graph).Or), b, c)
	ewInPlaceSame(t, "Equal", ewBinary((*graph.Graph).Equal), b, c)
}

func TestBinaryNoAllocs(t *testing.T) {
	where := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.Where(xs[0], xs[1], xs[2]) }
	cast := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.Cast(xs[0], tensor.F16) }
	x := ewF(tensor.F32, []int{2, 3, 4}, make([]float64, 24)...)
	cases := []struct {
		build func(*graph.Graph, []*graph.Node) *graph.Node
		ins   []tensor.Tensor
	}{
		{ewBinary((*graph.Graph).Add), []tensor.Tensor{x, ewF(tensor.F32, []int{3, 1}, 1, 2, 3)}},
		{ewBinary((*graph.Graph).Less), []tensor.Tensor{x, x}},
		{ewBinary((*graph.Graph).Div), []tensor.Tensor{ewF(tensor.I32, []int{2, 2}, 1, 2, 3, 4), ewF(tensor.I32, []int{2}, 1, 2)}},
		{where, []tensor.Tensor{ewT[uint8](tensor.Bool, []int{4}, 1, 0, 1, 0), x, ewF(tensor.F32, nil, 0)}},
		{cast, []tensor.Tensor{x}},
	}
	for _, c := range cases {
		k, n := ewPrepare(t, c.build, c.ins...)
		out := tensor.New(n.DType, n.Shape...)
		if a := testing.AllocsPerRun(20, func() { _ = k(c.ins, out) }); a != 0 {
			t.Fatalf("%v allocates %v times per run", n.Op, a)
		}
	}
}
