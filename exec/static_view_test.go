package exec_test

import (
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
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
