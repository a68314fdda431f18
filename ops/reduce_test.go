package ops

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// ewIota is 0, 1, ..., n-1.
func ewIota(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

type ewReduceFn = func(g *graph.Graph, x *graph.Node, keep bool, axes ...int) *graph.Node

func ewReduce(f ewReduceFn, keep bool, axes ...int) func(*graph.Graph, []*graph.Node) *graph.Node {
	return func(g *graph.Graph, xs []*graph.Node) *graph.Node { return f(g, xs[0], keep, axes...) }
}

// x[a][b][c] = 12a + 4b + c over [2 3 4]; the sums below follow from it
// by hand: over a and c, 32b + 60; over b, 36a + 12 + 3c.
func TestReduceSeveralAxes(t *testing.T) {
	s := []int{2, 3, 4}
	cases := []struct {
		name  string
		f     ewReduceFn
		keep  bool
		axes  []int
		shape []int
		want  []float64
	}{
		{"Sum/0,2", (*graph.Graph).ReduceSum, false, []int{0, 2}, []int{3}, []float64{60, 92, 124}},
		{"Sum/0,2/keep", (*graph.Graph).ReduceSum, true, []int{0, 2}, []int{1, 3, 1}, []float64{60, 92, 124}},
		{"Sum/-1,0", (*graph.Graph).ReduceSum, false, []int{-1, 0}, []int{3}, []float64{60, 92, 124}},
		{"Sum/1/keep", (*graph.Graph).ReduceSum, true, []int{1}, []int{2, 1, 4}, []float64{12, 15, 18, 21, 48, 51, 54, 57}},
		{"Sum/all", (*graph.Graph).ReduceSum, false, nil, []int{}, []float64{276}},
		{"Sum/all/keep", (*graph.Graph).ReduceSum, true, nil, []int{1, 1, 1}, []float64{276}},
		{"Max/0,2", (*graph.Graph).ReduceMax, false, []int{0, 2}, []int{3}, []float64{15, 19, 23}},
		{"Min/0,2", (*graph.Graph).ReduceMin, true, []int{0, 2}, []int{1, 3, 1}, []float64{0, 4, 8}},
		{"Max/1,2", (*graph.Graph).ReduceMax, false, []int{1, 2}, []int{2}, []float64{11, 23}},
		{"Min/0", (*graph.Graph).ReduceMin, false, []int{0}, []int{3, 4}, ewIota(12)},
		{"Prod/0,1", (*graph.Graph).ReduceProd, false, []int{0, 1}, []int{4},
			[]float64{0, 1 * 5 * 9 * 13 * 17 * 21, 2 * 6 * 10 * 14 * 18 * 22, 3 * 7 * 11 * 15 * 19 * 23}},
	}
	for _, c := range cases {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.I32, tensor.I64} {
			got := ewEval(t, ewReduce(c.f, c.keep, c.axes...), ewF(dt, s, ewIota(24)...))
			ewFloats(t, got, c.shape, c.want, 0)
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		got := ewEval(t, ewReduce((*graph.Graph).ReduceMean, false, 0, 2), ewF(dt, s, ewIota(24)...))
		ewFloats(t, got, []int{3}, []float64{7.5, 11.5, 15.5}, 0)
		got = ewEval(t, ewReduce((*graph.Graph).ReduceMean, true, 2), ewF(dt, s, ewIota(24)...))
		ewFloats(t, got, []int{2, 3, 1}, []float64{1.5, 5.5, 9.5, 13.5, 17.5, 21.5}, 0)
	}
}

func TestReduceSmall(t *testing.T) {
	m := []float64{1, 2, 3, 4, 5, 6} // [2 3]
	got := ewEval(t, ewReduce((*graph.Graph).ReduceProd, false, 0), ewF(tensor.F64, []int{2, 3}, m...))
	ewFloats(t, got, []int{3}, []float64{4, 10, 18}, 0)
	got = ewEval(t, ewReduce((*graph.Graph).ReduceProd, false, 1), ewF(tensor.U8, []int{2, 3}, m...))
	ewInts(t, got, []int{2}, []int64{6, 120})
	got = ewEval(t, ewReduce((*graph.Graph).ReduceProd, false), ewF(tensor.I8, []int{2, 3}, m...))
	ewInts(t, got, []int{}, []int64{int64(int8(720 - 768))}) // 720 wraps to -48
	// Integer sums wrap like the storage type.
	got = ewEval(t, ewReduce((*graph.Graph).ReduceSum, false), ewT[int8](tensor.I8, []int{3}, 100, 100, 100))
	ewInts(t, got, []int{}, []int64{44})
	got = ewEval(t, ewReduce((*graph.Graph).ReduceMax, false, 1), ewT[uint8](tensor.U8, []int{2, 2}, 0, 255, 7, 3))
	ewInts(t, got, []int{2}, []int64{255, 7})
	got = ewEval(t, ewReduce((*graph.Graph).ReduceMin, false, 0), ewT[int64](tensor.I64, []int{2}, math.MaxInt64, math.MinInt64))
	ewInts(t, got, []int{}, []int64{math.MinInt64})
	// A scalar reduced over no axes is itself.
	got = ewEval(t, ewReduce((*graph.Graph).ReduceSum, false), ewF(tensor.F32, nil, 2.5))
	ewFloats(t, got, []int{}, []float64{2.5}, 0)
}

func TestReduceNaNInf(t *testing.T) {
	nan, inf := ewNaN, ewInf
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		x := ewF(dt, []int{3, 3}, 1, nan, 3, inf, -inf, 0, 5, -inf, -2)
		got := ewEval(t, ewReduce((*graph.Graph).ReduceMax, false, 1), x)
		ewFloats(t, got, []int{3}, []float64{nan, inf, 5}, 0)
		got = ewEval(t, ewReduce((*graph.Graph).ReduceMin, false, 1), x)
		ewFloats(t, got, []int{3}, []float64{nan, -inf, -inf}, 0)
		got = ewEval(t, ewReduce((*graph.Graph).ReduceSum, false, 1), x)
		ewFloats(t, got, []int{3}, []float64{nan, nan, -inf}, 0)
		got = ewEval(t, ewReduce((*graph.Graph).ReduceMax, false, 0), x)
		ewFloats(t, got, []int{3}, []float64{inf, nan, 3}, 0)
	}
}

// F32 sums accumulate in float64: 1e8 + 1 - 1e8 is 1, where an F32
// accumulator gives 0.
func TestReduceF32Accumulates64(t *testing.T) {
	x := ewF(tensor.F32, []int{3}, 1e8, 1, -1e8)
	got := ewEval(t, ewReduce((*graph.Graph).ReduceSum, false), x)
	ewFloats(t, got, []int{}, []float64{1}, 0)
	got = ewEval(t, ewReduce((*graph.Graph).ReduceMean, false), x)
	ewFloats(t, got, []int{}, []float64{float64(float32(1.0 / 3))}, 0)
}

func TestReduceEmpty(t *testing.T) {
	x := ewF(tensor.F32, []int{0, 3})
	got := ewEval(t, ewReduce((*graph.Graph).ReduceSum, false, 0), x)
	ewFloats(t, got, []int{3}, []float64{0, 0, 0}, 0)
	got = ewEval(t, ewReduce((*graph.Graph).ReduceProd, true, 0), x)
	ewFloats(t, got, []int{1, 3}, []float64{1, 1, 1}, 0)
	got = ewEval(t, ewReduce((*graph.Graph).ReduceMean, false, 0), x)
	ewFloats(t, got, []int{3}, []float64{ewNaN, ewNaN, ewNaN}, 0)
	got = ewEval(t, ewReduce((*graph.Graph).ReduceMax, false, 1), x)
	ewShape(t, got, []int{0})
	got = ewEval(t, ewReduce((*graph.Graph).ReduceSum, false), ewF(tensor.I32, []int{2, 0}))
	ewInts(t, got, []int{}, []int64{0})
}

func TestArgMaxMin(t *testing.T) {
	arg := func(isMax bool, axis int, keep bool) func(*graph.Graph, []*graph.Node) *graph.Node {
		return func(g *graph.Graph, xs []*graph.Node) *graph.Node {
			if isMax {
				return g.ArgMax(xs[0], axis, keep)
			}
			return g.ArgMin(xs[0], axis, keep)
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		// Ties take the first index.
		x := ewF(dt, []int{5}, 1, 3, 3, 0, 0)
		ewInts(t, ewEval(t, arg(true, 0, false), x), []int{}, []int64{1})
		ewInts(t, ewEval(t, arg(false, 0, true), x), []int{1}, []int64{3})
		m := ewF(dt, []int{2, 3}, 1, 5, 2, 4, 5, 0)
		ewInts(t, ewEval(t, arg(true, 0, false), m), []int{3}, []int64{1, 0, 0})
		ewInts(t, ewEval(t, arg(false, 0, true), m), []int{1, 3}, []int64{0, 0, 1})
		ewInts(t, ewEval(t, arg(true, -1, false), m), []int{2}, []int64{1, 1})
		ewInts(t, ewEval(t, arg(false, 1, true), m), []int{2, 1}, []int64{0, 2})
	}
	// NaN counts as both the max and the min; the first one wins.
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		x := ewF(dt, []int{2, 4}, 1, ewNaN, 5, ewNaN, ewNaN, 7, ewNInf, 9)
		ewInts(t, ewEval(t, arg(true, 1, false), x), []int{2}, []int64{1, 0})
		ewInts(t, ewEval(t, arg(false, 1, false), x), []int{2}, []int64{1, 0})
		y := ewF(dt, []int{3}, ewNInf, ewNInf, ewInf)
		ewInts(t, ewEval(t, arg(true, 0, false), y), []int{}, []int64{2})
		ewInts(t, ewEval(t, arg(false, 0, false), y), []int{}, []int64{0})
	}
	// Large I64 values are compared exactly.
	z := ewT[int64](tensor.I64, []int{2}, 1<<60, 1<<60+1)
	ewInts(t, ewEval(t, arg(true, 0, false), z), []int{}, []int64{1})
	// Empty outer dims give an empty result.
	ewShape(t, ewEval(t, arg(true, 1, false), ewF(tensor.F32, []int{0, 3})), []int{0})
}

// ewSoftmaxDirect is exp(x_i) / Σ exp(x_j) without max subtraction.
func ewSoftmaxDirect(x []float64) []float64 {
	s := 0.0
	for _, v := range x {
		s += math.Exp(v)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Exp(v) / s
	}
	return out
}

func TestSoftmax(t *testing.T) {
	row := []float64{1, 2, 3, -0.5}
	direct := ewSoftmaxDirect(row)
	logDirect := make([]float64, len(direct))
	for i, p := range direct {
		logDirect[i] = math.Log(p)
	}
	// The second row is the first shifted by 1000: too large for the
	// direct formula, equal after max subtraction.
	in := append(append([]float64{}, row...), 1001, 1002, 1003, 999.5)
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		rel := 1e-14
		if dt == tensor.F32 {
			rel = 1.5e-7
		}
		x := ewF(dt, []int{2, 4}, in...)
		if dt == tensor.F32 { // the direct formula on the rounded input
			direct = ewSoftmaxDirect(x.Float64s()[:4])
		}
		got := ewEval(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Softmax(x, -1) }), x)
		ewFloats(t, got, []int{2, 4}, append(append([]float64{}, direct...), direct...), rel)
		v := got.Float64s()
		for r := range 2 {
			if s := v[4*r] + v[4*r+1] + v[4*r+2] + v[4*r+3]; approx.Far(s, 1, 4*rel) {
				t.Fatalf("%v row %d sums to %v", dt, r, s)
			}
		}
		if dt == tensor.F64 {
			got = ewEval(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.LogSoftmax(x, 1) }), x)
			ewFloats(t, got, []int{2, 4}, append(append([]float64{}, logDirect...), logDirect...), rel)
		}
	}
	// Along axis 0 of a [2 2]: columns [0 ln3] and [-Inf 5].
	x := ewF(tensor.F64, []int{2, 2}, 0, ewNInf, math.Log(3), 5)
	got := ewEval(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Softmax(x, 0) }), x)
	ewFloats(t, got, []int{2, 2}, []float64{0.25, 0, 0.75, 1}, 1e-15)
	got = ewEval(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.LogSoftmax(x, 0) }), x)
	ewFloats(t, got, []int{2, 2}, []float64{math.Log(0.25), ewNInf, math.Log(0.75), 0}, 1e-15)
	// A NaN poisons its line only.
	x = ewF(tensor.F32, []int{2, 2}, ewNaN, 1, 0, 0)
	got = ewEval(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Softmax(x, 1) }), x)
	ewFloats(t, got, []int{2, 2}, []float64{ewNaN, ewNaN, 0.5, 0.5}, 0)
}

func TestCumSum(t *testing.T) {
	cum := func(axis int, ex, rev bool) func(*graph.Graph, []*graph.Node) *graph.Node {
		return func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.CumSum(xs[0], axis, ex, rev) }
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		v := ewF(dt, []int{4}, 1, 2, 3, 4)
		ewFloats(t, ewEval(t, cum(0, false, false), v), []int{4}, []float64{1, 3, 6, 10}, 0)
		ewFloats(t, ewEval(t, cum(0, true, false), v), []int{4}, []float64{0, 1, 3, 6}, 0)
		ewFloats(t, ewEval(t, cum(0, false, true), v), []int{4}, []float64{10, 9, 7, 4}, 0)
		ewFloats(t, ewEval(t, cum(-1, true, true), v), []int{4}, []float64{9, 7, 4, 0}, 0)
		m := ewF(dt, []int{2, 3}, 1, 2, 3, 4, 5, 6)
		ewFloats(t, ewEval(t, cum(0, false, false), m), []int{2, 3}, []float64{1, 2, 3, 5, 7, 9}, 0)
		ewFloats(t, ewEval(t, cum(1, false, false), m), []int{2, 3}, []float64{1, 3, 6, 4, 9, 15}, 0)
		ewFloats(t, ewEval(t, cum(0, true, true), m), []int{2, 3}, []float64{4, 5, 6, 0, 0, 0}, 0)
		ewFloats(t, ewEval(t, cum(1, true, false), m), []int{2, 3}, []float64{0, 1, 3, 0, 4, 9}, 0)
	}
	got := ewEval(t, cum(0, false, false), ewT[int8](tensor.I8, []int{3}, 100, 100, 100))
	ewInts(t, got, []int{3}, []int64{100, -56, 44}) // wraps like int8
	// F32 accumulates in float64: the third sum is exactly 1.
	got = ewEval(t, cum(0, false, false), ewF(tensor.F32, []int{3}, 1e8, 1, -1e8))
	ewFloats(t, got, []int{3}, []float64{1e8, 1e8, 1}, 0)
	got = ewEval(t, cum(0, false, false), ewF(tensor.F64, []int{3}, 1, ewNaN, 2))
	ewFloats(t, got, []int{3}, []float64{1, ewNaN, ewNaN}, 0)
	ewShape(t, ewEval(t, cum(1, false, false), ewF(tensor.F32, []int{2, 0})), []int{2, 0})
}

// F16/BF16 nodes match the F32 kernel on the widened values.
func TestReduceHalfWidening(t *testing.T) {
	xv := []float64{-2.5, 0.3, 1, 7, 100, -0.01, 3.3, 3.3}
	builds := map[string]func(g *graph.Graph, xs []*graph.Node) *graph.Node{
		"ReduceSum":  ewReduce((*graph.Graph).ReduceSum, false, 1),
		"ReduceMean": ewReduce((*graph.Graph).ReduceMean, true, 0),
		"ReduceMax":  ewReduce((*graph.Graph).ReduceMax, false),
		"Softmax":    ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Softmax(x, 1) }),
		"LogSoftmax": ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.LogSoftmax(x, 0) }),
		"CumSum":     ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.CumSum(x, 1, true, false) }),
	}
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		x := ewF(dt, []int{2, 4}, xv...)
		x32 := ewF(tensor.F32, []int{2, 4}, x.Float64s()...)
		for name, b := range builds {
			ewHalfMatches(t, name, ewEval(t, b, x), ewEval(t, b, x32))
		}
		argmax := ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.ArgMax(x, 1, false) })
		ewInts(t, ewEval(t, argmax, x), []int{2}, []int64{3, 0})
	}
}

func TestReduceNoAllocs(t *testing.T) {
	x := ewF(tensor.F32, []int{3, 4, 5}, ewIota(60)...)
	xi := ewF(tensor.I32, []int{3, 4, 5}, ewIota(60)...)
	cases := []struct {
		build func(*graph.Graph, []*graph.Node) *graph.Node
		in    tensor.Tensor
	}{
		{ewReduce((*graph.Graph).ReduceSum, true, 0, 2), x},
		{ewReduce((*graph.Graph).ReduceMean, false, 1), x},
		{ewReduce((*graph.Graph).ReduceMax, false, 2), xi},
		{ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.ArgMin(x, 1, false) }), x},
		{ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Softmax(x, 1) }), x},
		{ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.CumSum(x, 2, false, true) }), xi},
	}
	for _, c := range cases {
		ins := []tensor.Tensor{c.in}
		k, n := ewPrepare(t, c.build, ins...)
		out := tensor.New(n.DType, n.Shape...)
		if a := testing.AllocsPerRun(20, func() { _ = k(ins, out) }); a != 0 {
			t.Fatalf("%v allocates %v times per run", n.Op, a)
		}
	}
}
