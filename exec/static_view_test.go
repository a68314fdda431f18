package exec_test

import (
	"math"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// A view of a param (a reshaped bias) feeding a run-time op used to get a
// slice of the static buffer that was never sized for it.
func TestViewOfParamFeedsRun(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 4)
	b := g.Param("b", tensor.F32, 1, 4)
	g.Output(g.Add(x, g.Reshape(g.Reshape(b, 4, 1), 4)))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := cg.SetParam("b", []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	out, err := cg.Run(kiln.In("x", []float32{10, 20, 30, 40, 50, 60, 70, 80}))
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{11, 22, 33, 44, 51, 62, 73, 84}
	for i := range want {
		if out[0][i] != want[i] {
			t.Fatalf("got %v, want %v", out[0], want)
		}
	}
}

// A static value that a run-time step reads is kept out of the arena; a
// view of it that only static steps read used to keep pointing at the
// value's old arena slot, which nothing writes any more, so the ReduceMin
// below saw zeros (cmd/fuzz seed 7730782863684993710). With the fast and
// the reference kernels, planned and naive.
func TestViewOfKeptStaticValue(t *testing.T) {
	build := func() *graph.Graph {
		g := graph.New()
		p := g.Param("p", tensor.F32, 4)
		x := g.Input("x", tensor.F32)
		ls := g.LogSoftmax(p, 0)
		g.Output(g.Sub(x, g.ReduceMin(g.Reshape(ls, 1, 4), false, 0))) // static steps read the view
		g.Output(g.Mul(ls, x))                                         // a run-time step reads ls: kept
		return g
	}
	ps := []float32{0.3, -1.2, 2, 0.5}
	var sum float64
	for _, v := range ps {
		sum += math.Exp(float64(v))
	}
	for _, ref := range []bool{false, true} {
		for _, naive := range []bool{false, true} {
			s := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Plan: &plan.Options{Naive: naive}, Exec: exec.Options{Reference: ref}})
			cg, err := s.Compile(build())
			if err != nil {
				t.Fatal(err)
			}
			if err := cg.SetParam("p", ps); err != nil {
				t.Fatal(err)
			}
			for run := range 2 { // the second run skips the static steps
				out, err := cg.Run(kiln.In("x", []float32{1}))
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range ps {
					want := 1 - (float64(v) - math.Log(sum))
					if approx.Far(float64(out[0][i]), want, 1e-5) {
						t.Fatalf("reference %v, naive %v, run %d: got %v, want element %d = %v", ref, naive, run+1, out[0], i, want)
					}
				}
			}
		}
	}
}
