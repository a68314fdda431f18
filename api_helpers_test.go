package kiln_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// refTol is the agreement required with the reference interpreter:
// max|got-ref| <= refTol * max(1, max|ref|).
const refTol = 1e-5

// compileSet compiles g on s and sets every param from feeds.
func compileSet(t testing.TB, s *kiln.Session, g *graph.Graph, feeds map[string]tensor.Tensor) *kiln.CompiledGraph {
	t.Helper()
	cg, err := s.Compile(g)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	t.Cleanup(func() { cg.Close() })
	for _, p := range cg.Params() {
		f, ok := feeds[p.Name]
		if !ok {
			t.Fatalf("no feed for param %q", p.Name)
		}
		if err := cg.SetParamTyped(p.Name, f.Data, f.DType); err != nil {
			t.Fatalf("SetParamTyped(%q): %v", p.Name, err)
		}
	}
	return cg
}

// randomFeeds makes deterministic inputs and params for g.
func randomFeeds(t testing.TB, g *graph.Graph, seed uint64) map[string]tensor.Tensor {
	t.Helper()
	f, err := testmodels.RandomFeeds(g, seed)
	if err != nil {
		t.Fatalf("RandomFeeds: %v", err)
	}
	return f
}

// typedInputs picks g's inputs out of feeds, in slot order.
func typedInputs(g *graph.Graph, feeds map[string]tensor.Tensor) []kiln.TypedInput {
	var in []kiln.TypedInput
	for _, n := range g.Inputs() {
		f := feeds[n.Name]
		in = append(in, kiln.TypedInput{Name: n.Name, Data: f.Data, DType: f.DType})
	}
	return in
}

// interpret runs the reference interpreter on the uncompiled graph.
func interpret(t testing.TB, g *graph.Graph, feeds map[string]tensor.Tensor) []tensor.Tensor {
	t.Helper()
	want, err := ops.Interpret(g, feeds)
	if err != nil {
		t.Fatalf("Interpret: %v", err)
	}
	return want
}

// closeTo reports how got differs from want beyond tol relative to the
// scale of want (nil when it does not). NaN on either side is a mismatch.
func closeTo(got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	scale, worst, at := 1.0, 0.0, -1
	for i := range want {
		scale = math.Max(scale, math.Abs(float64(want[i])))
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) {
			return fmt.Errorf("element %d: got %v, want %v", i, got[i], want[i])
		}
		if d > worst {
			worst, at = d, i
		}
	}
	if worst > tol*scale {
		return fmt.Errorf("max |diff| %.3g at %d (got %v, want %v) > %.3g", worst, at, got[at], want[at], tol*scale)
	}
	return nil
}

// checkOutputs compares typed outputs with the interpreter's tensors.
func checkOutputs(t testing.TB, got []kiln.TypedOutput, want []tensor.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		gt, err := tensor.View(got[i].DType, got[i].Shape, got[i].Data)
		if err != nil {
			t.Fatalf("output %d: %v", i, err)
		}
		if err := testmodels.CheckClose(gt, want[i], refTol); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}

// seq returns n float32 values a, a+step, ...
func seq(n int, a, step float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = a + float32(i)*step
	}
	return v
}

// mustF32 wraps values as an F32 tensor of shape dims.
func mustF32(t testing.TB, v []float32, dims ...int) tensor.Tensor {
	t.Helper()
	x, err := tensor.FromF32(tensor.Shape(dims), v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// smallMLP is relu(x·w1 + b1)·w2 + b2 with x [2, 3], hidden 4, out 2, and
// weights chosen so that the answer can be worked out by hand.
func smallMLP(t testing.TB) (*graph.Graph, map[string]tensor.Tensor) {
	t.Helper()
	g := testmodels.MLP(2, 3, 4, 2)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	feeds := map[string]tensor.Tensor{
		"x":  mustF32(t, []float32{1, 2, 3, -1, 0, 1}, 2, 3),
		"w1": mustF32(t, []float32{1, 0, 0, -1, 0, 1, 0, 1, 0, 0, 1, 1}, 3, 4),
		"b1": mustF32(t, []float32{0, 0, -2, 0}, 4),
		"w2": mustF32(t, []float32{1, 0, 0, 1, 1, 1, 2, -1}, 4, 2),
		"b2": mustF32(t, []float32{0.5, -0.5}, 2),
	}
	return g, feeds
}

// smallMLPWant is smallMLP's output for its x, worked out by hand:
// row 0: x·w1 = [1, 2, 3, 4]; +b1 = [1, 2, 1, 4]; relu same;
// ·w2 = [1+1+8, 2+1-4] = [10, -1]; +b2 = [10.5, -1.5].
// row 1: x·w1 = [-1, 0, 1, 2]; +b1 = [-1, 0, -1, 2]; relu [0, 0, 0, 2];
// ·w2 = [4, -2]; +b2 = [4.5, -2.5].
var smallMLPWant = []float32{10.5, -1.5, 4.5, -2.5}
