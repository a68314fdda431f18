package exec_test

import (
	"slices"
	"testing"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// bindGraph has three inputs: x, read by two steps (the first may write
// over x's slot once x is dead); w, reshaped in place (a free view); u,
// also a graph output. Outputs: exp(x+1)·x, the reshaped w + 1, and u.
func bindGraph() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 64)
	w := g.Input("w", tensor.F32, 8, 8)
	u := g.Input("u", tensor.F32, 4)
	g.Output(g.Mul(g.Exp(g.Add(x, g.Scalar(1))), x))
	g.Output(g.Add(g.Reshape(w, 64), g.Scalar(1)))
	g.Output(u)
	return g
}

func bindRun(t *testing.T, pr *exec.Program, g *graph.Graph, bind bool, vals map[string][]float32) [][]float32 {
	t.Helper()
	for _, name := range []string{"x", "w", "u"} {
		n := node(g, name)
		data := tensor.Bytes(vals[name])
		if bind {
			ok, err := pr.BindInput(n, data)
			if err != nil {
				t.Fatal(err)
			}
			if want := name == "x"; ok != want {
				t.Fatalf("BindInput(%s) = %v, want %v", name, ok, want)
			}
			if ok {
				continue
			}
		}
		if err := pr.Write(n, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := pr.Run(); err != nil {
		t.Fatal(err)
	}
	pr.UnbindInputs()
	var outs [][]float32
	for _, o := range g.Outputs() {
		outs = append(outs, slices.Clone(pr.Values[o.ID].F32()))
	}
	return outs
}

// TestBindInput: a bound input gives the results a written one gives,
// bit for bit (new data the slot never held: reading the slot would give
// the old results), leaves the caller's data untouched,
// and is refused for an input a view or an output shares, and for bytes
// of the program's own arena; after UnbindInputs the program reads its
// slots again.
func TestBindInput(t *testing.T) {
	g := bindGraph()
	pr := lower(t, g, exec.Options{})
	vals := map[string][]float32{"x": make([]float32, 64), "w": make([]float32, 64), "u": {1, 2, 3, 4}}
	for i := range 64 {
		vals["x"][i] = float32(i%9)/4 - 1
		vals["w"][i] = float32(i) / 8
	}
	want := bindRun(t, pr, g, false, vals)
	xIn := slices.Clone(vals["x"])
	for i := range vals["x"] {
		vals["x"][i] = -vals["x"][i] // new data, seen only through the binding
	}
	wantNeg := bindRun(t, lower(t, g, exec.Options{}), g, false, vals)
	got := bindRun(t, pr, g, true, vals)
	for i := range want {
		if !slices.EqualFunc(got[i], wantNeg[i], func(a, b float32) bool { return a == b }) {
			t.Fatalf("output %d bound %v, written %v", i, got[i], wantNeg[i])
		}
	}
	for i, v := range vals["x"] {
		if v != -xIn[i] {
			t.Fatalf("the caller's x changed at %d", i)
		}
	}
	// Unbound again: a written x is read from the slot.
	vals["x"] = xIn
	again := bindRun(t, pr, g, false, vals)
	if !slices.Equal(again[0], want[0]) {
		t.Fatalf("after UnbindInputs: %v, want %v", again[0], want[0])
	}
	// The program's own memory (an output) is written, never bound.
	if ok, err := pr.BindInput(node(g, "x"), tensor.Bytes(pr.Values[g.Outputs()[1].ID].F32())); ok || err != nil {
		t.Fatalf("binding arena bytes: %v, %v", ok, err)
	}
	if _, err := pr.BindInput(node(g, "x"), make([]byte, 8)); err == nil {
		t.Fatal("binding 8 bytes to a 256-byte input: no error")
	}
	pr.UnbindInputs()
}
