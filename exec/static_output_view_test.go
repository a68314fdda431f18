package exec_test

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestStaticViewOfOutput: a view of a graph output computed from weights
// alone is not static, since the output itself runs every time. Lowering
// used to mark the view static and keep it in a static buffer it had not
// sized (a panic, found by cmd/fuzz seed 92), and a kept copy would never
// have been refreshed anyway.
func TestStaticViewOfOutput(t *testing.T) {
	g := graph.New()
	w := g.Param("w", tensor.F32, 2, 2)
	o := g.Neg(w)
	g.Output(o)
	y := g.Add(g.Input("x", tensor.F32, 4), g.Reshape(o, 4))
	g.Output(y)
	pr := lowerStatic(t, g)
	x := []float32{10, 20, 30, 40}
	for run, wv := range [][]float32{{1, 2, 3, 4}, {5, 6, 7, 8}} {
		wt, err := tensor.FromF32(tensor.Shape{2, 2}, wv)
		if err != nil {
			t.Fatal(err)
		}
		xt, err := tensor.FromF32(tensor.Shape{4}, x)
		if err != nil {
			t.Fatal(err)
		}
		if err := pr.Write(staticNode(g, "w"), wt.Data); err != nil {
			t.Fatal(err)
		}
		if err := pr.Write(staticNode(g, "x"), xt.Data); err != nil {
			t.Fatal(err)
		}
		if err := pr.Run(); err != nil {
			t.Fatal(err)
		}
		got := pr.Values[y.ID].F32()
		for i := range x {
			if want := x[i] - wv[i]; got[i] != want {
				t.Fatalf("run %d: y[%d] = %v, want %v", run, i, got[i], want)
			}
		}
	}
}
