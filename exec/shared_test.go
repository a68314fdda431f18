package exec

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// sharedMLP is x [rows, 2] · w [2, 2] + b [2]; swap declares b first.
func sharedMLP(rows int, swap bool, extra string) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, rows, 2)
	var w, b *graph.Node
	if swap {
		b = g.Param("b", tensor.F32, 2)
		w = g.Param("w", tensor.F32, 2, 2)
	} else {
		w = g.Param("w", tensor.F32, 2, 2)
		b = g.Param("b", tensor.F32, 2)
	}
	y := g.Add(g.MatMul(x, w), b)
	if extra != "" {
		y = g.Mul(y, g.Param(extra, tensor.F32, 2))
	}
	g.Output(y)
	return g
}

func lowerPlain(t *testing.T, g *graph.Graph) *Program {
	t.Helper()
	p, err := plan.Make(g, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Lower(g, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func lowerOver(t *testing.T, g *graph.Graph, base *Program) (*Program, *Mirror, error) {
	t.Helper()
	p, err := plan.Make(g, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return LowerShared(g, p, Options{}, base)
}

// runRow writes x = [1, 2] into row 0 (other rows 0), runs and returns
// output row 0.
func runRow(t *testing.T, pr *Program) []float32 {
	t.Helper()
	in := pr.Graph.Inputs()[0]
	x := make([]float32, in.Shape.NumElements())
	x[0], x[1] = 1, 2
	if err := pr.Write(in, tensor.Bytes(x)); err != nil {
		t.Fatal(err)
	}
	if err := pr.Run(); err != nil {
		t.Fatal(err)
	}
	return pr.Values[pr.Graph.Outputs()[0].ID].F32()[:2]
}

func setParam(t *testing.T, pr *Program, name string, v []float32) {
	t.Helper()
	n, _ := pr.Graph.Lookup(name)
	if err := pr.Write(n, tensor.Bytes(v)); err != nil {
		t.Fatal(err)
	}
}

func TestLowerSharedSharesWeights(t *testing.T) {
	base := lowerPlain(t, sharedMLP(64, false, ""))
	pr, m, err := lowerOver(t, sharedMLP(3, false, ""), base)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Shared() || &pr.Weights[0] != &base.Weights[0] {
		t.Fatal("same layout, but the weight region is not shared")
	}
	// Params written to the base after lowering are seen by the program:
	// [1 2]·[[1 2] [3 4]] + [10 20] = [17 30].
	setParam(t, base, "w", []float32{1, 2, 3, 4})
	setParam(t, base, "b", []float32{10, 20})
	if got := runRow(t, pr); got[0] != 17 || got[1] != 30 {
		t.Fatalf("got %v, want [17 30]", got)
	}
	if len(pr.Arena) == len(base.Arena) {
		t.Errorf("3-row program has the 64-row arena size %d", len(pr.Arena))
	}
}

func TestLowerSharedMirrors(t *testing.T) {
	base := lowerPlain(t, sharedMLP(64, false, ""))
	setParam(t, base, "w", []float32{1, 2, 3, 4})
	setParam(t, base, "b", []float32{10, 20})
	pr, m, err := lowerOver(t, sharedMLP(3, true, ""), base)
	if err != nil {
		t.Fatal(err)
	}
	if m.Shared() || &pr.Weights[0] == &base.Weights[0] {
		t.Fatal("different layouts share a weight region")
	}
	if got := runRow(t, pr); got[0] != 17 || got[1] != 30 {
		t.Fatalf("params copied at lowering: got %v, want [17 30]", got)
	}
	setParam(t, base, "b", []float32{0, 0})
	m.Sync()
	if got := runRow(t, pr); got[0] != 7 || got[1] != 10 {
		t.Fatalf("after Sync: got %v, want [7 10]", got)
	}
	// A run between a base write and Sync must not leave a packed copy of
	// the old weights behind: after Sync the new w is used.
	setParam(t, base, "w", []float32{1, 0, 0, 1})
	runRow(t, pr)
	m.Sync()
	if got := runRow(t, pr); got[0] != 1 || got[1] != 2 {
		t.Fatalf("after a run, a write of w and Sync: got %v, want [1 2]", got)
	}
	if n := testing.AllocsPerRun(10, m.Sync); n != 0 {
		t.Errorf("Sync allocates %v times", n)
	}

	_, _, err = lowerOver(t, sharedMLP(3, false, "scale"), base)
	if err == nil || !strings.Contains(err.Error(), "scale") {
		t.Errorf("param missing from the base: %v", err)
	}
}
