package fuse_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// session compiles with every pass (fused) or none, with the fast kernels
// or only the reference ones.
func session(fused, reference bool) *kiln.Session {
	fo := fuse.Options{Off: !fused}
	return kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fo, Exec: exec.Options{Reference: reference}})
}

// compiledRun compiles g, sets every param and runs it on feeds.
func compiledRun(t testing.TB, s *kiln.Session, g *graph.Graph, feeds map[string]tensor.Tensor) ([]tensor.Tensor, *kiln.CompiledGraph) {
	t.Helper()
	cg, err := s.Compile(g)
	if err != nil {
		t.Fatalf("Compile: %v\n%s", err, graph.Dump(g))
	}
	t.Cleanup(func() { cg.Close() })
	for _, p := range cg.Params() {
		f := feeds[p.Name]
		if err := cg.SetParamTyped(p.Name, f.Data, f.DType); err != nil {
			t.Fatal(err)
		}
	}
	var in []kiln.TypedInput
	for _, n := range g.Inputs() {
		f := feeds[n.Name]
		in = append(in, kiln.TypedInput{Name: n.Name, Data: f.Data, DType: f.DType})
	}
	outs, err := cg.RunTyped(in...)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, cg.Report())
	}
	res := make([]tensor.Tensor, len(outs))
	for i, o := range outs {
		res[i] = tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: o.Data}
	}
	return res, cg
}

// agree checks got against want: |got-want| <= tol·max(1, max|want|) per
// output, NaN only against NaN.
func agree(got, want []tensor.Tensor, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i].Float64s(), want[i].Float64s()
		if got[i].DType != want[i].DType || !got[i].Shape.Equal(want[i].Shape) {
			return fmt.Errorf("output %d is %v, want %v", i, got[i], want[i])
		}
		scale := 1.0
		for _, x := range w {
			if !math.IsInf(x, 0) && !math.IsNaN(x) {
				scale = max(scale, math.Abs(x))
			}
		}
		for j := range w {
			if math.IsNaN(w[j]) && math.IsNaN(g[j]) || g[j] == w[j] {
				continue
			}
			if d := math.Abs(g[j] - w[j]); !(d <= tol*scale) {
				return fmt.Errorf("output %d element %d: got %v, want %v (|diff| %.3g > %.3g)", i, j, g[j], w[j], d, tol*scale)
			}
		}
	}
	return nil
}

func interpret(t testing.TB, g *graph.Graph, feeds map[string]tensor.Tensor) []tensor.Tensor {
	t.Helper()
	want, err := ops.Interpret(g, feeds)
	if err != nil {
		t.Fatalf("Interpret: %v", err)
	}
	return want
}

func feedsFor(t testing.TB, g *graph.Graph, seed uint64) map[string]tensor.Tensor {
	t.Helper()
	f, err := testmodels.RandomFeeds(g, seed)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
