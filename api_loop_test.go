package kiln_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// halvingLoop is a run-time loop: acc ← acc·0.5 + w while sum(acc) >
// 12.3, at most n times (n an input), with w a param the body captures.
// Outputs: the final acc, the scan of every acc (bound 4 rows), the scan
// of the iteration numbers, and the iteration count.
func halvingLoop(t *testing.T) *graph.Graph { return halvingLoopOf(t, false) }

// halvingLoopOf is halvingLoop, with n an F32 input cast to the trip
// count when f32Trip is set (so RunSlots can feed it).
func halvingLoopOf(t *testing.T, f32Trip bool) *graph.Graph {
	t.Helper()
	b := graph.New()
	b.Input("iter", tensor.I64)
	b.Input("cond", tensor.Bool)
	acc := b.Input("acc", tensor.F32, 3)
	w := b.Input("w", tensor.F32, 3)
	next := b.Add(b.Mul(acc, b.Scalar(0.5)), w)
	it, _ := b.Lookup("iter")
	b.Output(b.Greater(b.ReduceSum(next, false), b.Scalar(12.3)), next, next, it)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	g := graph.New()
	var n *graph.Node
	if f32Trip {
		n = g.Cast(g.Input("n", tensor.F32), tensor.I64)
	} else {
		n = g.Input("n", tensor.I64)
	}
	x := g.Input("x", tensor.F32, 3)
	pw := g.Param("w", tensor.F32, 3)
	loop := g.Loop(&graph.LoopSpec{Body: b, HasTrip: true, Carried: 1, Bound: 4}, n, x, pw)
	for i := range 4 {
		g.Output(g.LoopOutput(loop, i))
	}
	if g.Err() != nil {
		t.Fatal(g.Err())
	}
	return g
}

// TestLoopRunTime checks a Loop whose trip count is an input and whose
// condition the body computes, against values worked out by hand (halving
// integers is exact in float32): from x = [8 4 2], w = [1 2 3] the sums
// are 13, 12.5, 12.25, so the body stops itself after 3 iterations.
func TestLoopRunTime(t *testing.T) {
	g := halvingLoop(t)
	w := mustF32(t, []float32{1, 2, 3}, 3)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, map[string]tensor.Tensor{"w": w})
	for _, c := range []struct {
		n     int64
		acc   []float32
		scan  []float32
		iters []int64
		count int64
	}{
		{0, []float32{8, 4, 2}, make([]float32, 12), []int64{0, 0, 0, 0}, 0},
		{2, []float32{3.5, 4, 5}, []float32{5, 4, 4, 3.5, 4, 5, 0, 0, 0, 0, 0, 0}, []int64{0, 1, 0, 0}, 2},
		{5, []float32{2.75, 4, 5.5}, []float32{5, 4, 4, 3.5, 4, 5, 2.75, 4, 5.5, 0, 0, 0}, []int64{0, 1, 2, 0}, 3},
	} {
		feeds := map[string]tensor.Tensor{"n": i64Scalar(t, c.n), "x": mustF32(t, []float32{8, 4, 2}, 3), "w": w}
		want := []tensor.Tensor{mustF32(t, c.acc, 3), mustF32(t, c.scan, 4, 3), i64s(t, c.iters, 4), i64Scalar(t, c.count)}
		got, err := cg.RunTyped(typedInputs(g, feeds)...)
		if err != nil {
			t.Fatalf("n=%d: %v", c.n, err)
		}
		checkOutputs(t, got, want)
		ref, err := ops.Interpret(g, feeds)
		if err != nil {
			t.Fatalf("n=%d: Interpret: %v", c.n, err)
		}
		for i := range want {
			if diff := cmp.Diff(want[i].Data, ref[i].Data); diff != "" {
				t.Errorf("n=%d: Interpret output %d differs (-want +got):\n%s", c.n, i, diff)
			}
		}
	}
}

// TestLoopRunTimeErrors: a negative trip count and a loop that would pass
// its bound fail the run with an error saying so, on the CPU and in the
// reference interpreter.
func TestLoopRunTimeErrors(t *testing.T) {
	g := halvingLoop(t)
	w := mustF32(t, []float32{1, 2, 3}, 3)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, map[string]tensor.Tensor{"w": w})
	for _, c := range []struct {
		n    int64
		x    []float32
		want string
	}{
		{-1, []float32{8, 4, 2}, "trip count -1 is negative"},
		{9, []float32{80, 40, 20}, "exceeds the loop's bound of 4"}, // the sums stay above 12.3 for 5 iterations
	} {
		feeds := map[string]tensor.Tensor{"n": i64Scalar(t, c.n), "x": mustF32(t, c.x, 3), "w": w}
		if _, err := cg.RunTyped(typedInputs(g, feeds)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("n=%d: Run error %v, want one containing %q", c.n, err, c.want)
		}
		if _, err := ops.Interpret(g, feeds); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("n=%d: Interpret error %v, want one containing %q", c.n, err, c.want)
		}
	}
}

func i64Scalar(t *testing.T, v int64) tensor.Tensor { return i64s(t, []int64{v}) }

func i64s(t *testing.T, v []int64, dims ...int) tensor.Tensor {
	t.Helper()
	x, err := tensor.FromI64(tensor.Shape(dims), v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestLoopRunSlotsZeroAllocs: a run of a graph with a run-time loop
// allocates nothing (the body program, the driver's scalars and the
// closures are prepared at Compile), and still gives the hand-computed
// final acc of TestLoopRunTime.
func TestLoopRunSlotsZeroAllocs(t *testing.T) {
	g := halvingLoopOf(t, true)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, map[string]tensor.Tensor{"w": mustF32(t, []float32{1, 2, 3}, 3)})
	n, x := []float32{5}, []float32{8, 4, 2}
	if _, err := cg.RunSlots(n, x); err != nil {
		t.Fatal(err)
	}
	var runErr error
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := cg.RunSlots(n, x); err != nil {
			runErr = err
		}
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	if allocs != 0 {
		t.Errorf("RunSlots allocates %v times per run, want 0", allocs)
	}
	got, err := cg.Run(kiln.In("n", n), kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float32{2.75, 4, 5.5}, got[0]); diff != "" {
		t.Errorf("final acc (-want +got):\n%s", diff)
	}
}
