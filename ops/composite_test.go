package ops

import (
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The composite builders of graph/build_composite.go, run on the
// reference kernels, against values worked out by hand.

func TestCompositeReductions(t *testing.T) {
	x := ewF(tensor.F32, []int{2, 2}, 1, -2, 3, -4)
	ewFloats(t, ewEval(t, ewReduce((*graph.Graph).ReduceL1, false, 1), x), []int{2}, []float64{3, 7}, 1e-7)
	ewFloats(t, ewEval(t, ewReduce((*graph.Graph).ReduceSumSquare, true, -1), x), []int{2, 1}, []float64{5, 25}, 1e-7)
	ewFloats(t, ewEval(t, ewReduce((*graph.Graph).ReduceL2, false), x), []int{}, []float64{math.Sqrt(30)}, 1e-7)
	pos := ewF(tensor.F64, []int{2, 2}, 1, 2, 3, 4)
	ewFloats(t, ewEval(t, ewReduce((*graph.Graph).ReduceLogSum, true, 0), pos), []int{1, 2}, []float64{math.Log(4), math.Log(6)}, 1e-12)
	lse := ewReduce((*graph.Graph).ReduceLogSumExp, false, 1)
	ewFloats(t, ewEval(t, lse, ewF(tensor.F64, []int{1, 2}, 0, math.Log(3))), []int{1}, []float64{math.Log(4)}, 1e-12)
	// Shifted by the maximum: exp(1000) overflows, the result does not.
	ewFloats(t, ewEval(t, lse, ewF(tensor.F32, []int{1, 2}, 1000, 1000)), []int{1}, []float64{1000 + math.Ln2}, 1e-7)
	inf, nan := math.Inf(1), math.NaN()
	rows := ewF(tensor.F32, []int{4, 2}, inf, 1, -inf, -inf, nan, 1, -inf, 2)
	ewFloats(t, ewEval(t, lse, rows), []int{4}, []float64{inf, -inf, nan, 2}, 1e-7)
	keep := ewReduce((*graph.Graph).ReduceLogSumExp, true, 0)
	ewFloats(t, ewEval(t, keep, ewF(tensor.F64, []int{2, 1}, 2, 2)), []int{1, 1}, []float64{2 + math.Ln2}, 1e-12)
}

func TestCompositeHardmax(t *testing.T) {
	x := ewF(tensor.F32, []int{2, 3}, 1, 3, 3, math.NaN(), 0, 5)
	got := ewEval(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Hardmax(x, -1) }), x)
	ewFloats(t, got, []int{2, 3}, []float64{0, 1, 0, 1, 0, 0}, 0)
	got = ewEval(t, ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Hardmax(x, 0) }), x)
	ewFloats(t, got, []int{2, 3}, []float64{0, 1, 0, 1, 0, 1}, 0)
}

func TestCompositeTrilu(t *testing.T) {
	x := ewF(tensor.I64, []int{1, 3, 4}, ewIota(12)...) // x[i][j] = 4i + j
	tri := func(upper bool, k int) func(*graph.Graph, []*graph.Node) *graph.Node {
		return ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Trilu(x, upper, k) })
	}
	ewInts(t, ewEval(t, tri(true, 1), x), []int{1, 3, 4}, []int64{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11})
	ewInts(t, ewEval(t, tri(false, -1), x), []int{1, 3, 4}, []int64{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0})
	ewInts(t, ewEval(t, tri(false, 0), x), []int{1, 3, 4}, []int64{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0})
	ewInts(t, ewEval(t, tri(true, -9), x), []int{1, 3, 4}, ewIotaI(12))
	ewInts(t, ewEval(t, tri(true, 9), x), []int{1, 3, 4}, make([]int64, 12))
}

func ewIotaI(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(i)
	}
	return v
}

func TestCompositeEyeLikeOneHot(t *testing.T) {
	got := ewEval(t, func(g *graph.Graph, _ []*graph.Node) *graph.Node { return g.EyeLike(tensor.Shape{3, 4}, tensor.I32, 1) })
	ewInts(t, got, []int{3, 4}, []int64{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})
	got = ewEval(t, func(g *graph.Graph, _ []*graph.Node) *graph.Node {
		return g.EyeLike(tensor.Shape{3, 2}, tensor.F64, -1)
	})
	ewFloats(t, got, []int{3, 2}, []float64{0, 0, 1, 0, 0, 1}, 0)

	idx := ewT[int32](tensor.I32, []int{4}, 1, -1, 5, -4)
	oneHot := func(axis int) func(*graph.Graph, []*graph.Node) *graph.Node {
		return func(g *graph.Graph, xs []*graph.Node) *graph.Node {
			return g.OneHot(xs[0], 4, axis, g.Scalar(5), g.Scalar(-1))
		}
	}
	// 5 is out of range: a row of off. -1 is 3, -4 is 0.
	want := []float64{-1, 5, -1, -1, -1, -1, -1, 5, -1, -1, -1, -1, 5, -1, -1, -1}
	ewFloats(t, ewEval(t, oneHot(-1), idx), []int{4, 4}, want, 0)
	transposed := make([]float64, 16)
	for i := range 4 {
		for j := range 4 {
			transposed[j*4+i] = want[i*4+j]
		}
	}
	ewFloats(t, ewEval(t, oneHot(0), idx), []int{4, 4}, transposed, 0)
}

func TestCompositeNorms(t *testing.T) {
	// MVN over [1 2 3 4]: mean 2.5, biased variance 1.25.
	sd := math.Sqrt(1.25) + 1e-9
	mvn := ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.MeanVarianceNorm(x, 0) })
	ewFloats(t, ewEval(t, mvn, ewF(tensor.F64, []int{4}, 1, 2, 3, 4)), []int{4},
		[]float64{-1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd}, 1e-12)

	// LRN over three channels [1 2 3] with alpha/size = 1, beta 1, bias 1.
	lrn := func(size int) func(*graph.Graph, []*graph.Node) *graph.Node {
		return ewUnary(func(g *graph.Graph, x *graph.Node) *graph.Node { return g.LRN(x, size, float32(size), 1, 1) })
	}
	x := ewF(tensor.F64, []int{1, 3, 1, 1}, 1, 2, 3)
	// size 3: channel windows {0,1}, {0,1,2}, {1,2}.
	ewFloats(t, ewEval(t, lrn(3), x), []int{1, 3, 1, 1}, []float64{1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-12)
	// size 2: no channel before, one after: {0,1}, {1,2}, {2}.
	ewFloats(t, ewEval(t, lrn(2), x), []int{1, 3, 1, 1}, []float64{1.0 / 6, 2.0 / 14, 3.0 / 10}, 1e-12)
}

func TestCompositeErrors(t *testing.T) {
	for name, build := range map[string]func(g *graph.Graph, x *graph.Node){
		"Trilu":        func(g *graph.Graph, x *graph.Node) { g.Trilu(g.Reshape(x, 6), true, 0) },
		"EyeLike":      func(g *graph.Graph, x *graph.Node) { g.EyeLike(tensor.Shape{6}, tensor.F32, 0) },
		"OneHot":       func(g *graph.Graph, x *graph.Node) { g.OneHot(x, 3, 0, g.Scalar(1), g.Scalar(0)) },
		"InstanceNorm": func(g *graph.Graph, x *graph.Node) { g.InstanceNorm(x, g.Scalar(1), g.Scalar(0), 1e-5) },
		"LRN":          func(g *graph.Graph, x *graph.Node) { g.LRN(x, 0, 1, 1, 1) },
		"Hardmax":      func(g *graph.Graph, x *graph.Node) { g.Hardmax(x, 2) },
	} {
		g := graph.New()
		build(g, g.Input("x", tensor.F32, 2, 3))
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the op", name, err)
		}
	}
}
