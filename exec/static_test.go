package exec_test

import (
	"testing"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// staticGraph is y = tanh(relu(x + c) · 3) · w2 + out2 with c = (w1ᵀ·2)
// reshaped — c computed from params and constants only — and a long
// chain after its use, so the planner reuses c's arena slot.
func staticGraph() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 2)
	w1 := g.Param("w1", tensor.F32, 2, 3)
	c := g.Reshape(g.Mul(g.Transpose(w1, 1, 0), g.Scalar(2)), 3, 2) // static, then a static view
	y := g.Add(x, c)
	for range 4 {
		y = g.Tanh(g.Mul(g.Relu(y), g.Scalar(3)))
	}
	g.Output(y)
	g.Output(g.Neg(g.Param("w2", tensor.F32, 4))) // static but an output: runs every time
	return g
}

func lowerStatic(t *testing.T, g *graph.Graph) *exec.Program {
	t.Helper()
	p, err := plan.Make(g, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := exec.Lower(g, p, exec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	return pr
}

func staticNode(g *graph.Graph, name string) *graph.Node {
	n, _ := g.Lookup(name)
	return n
}

// TestStaticSteps checks that steps computed from weights only run on the
// first Run and again only after a param write, and that results stay
// right in between although the arena slot of the static value is reused.
func TestStaticSteps(t *testing.T) {
	g := staticGraph()
	pr := lowerStatic(t, g)
	calls := map[graph.Op]int{}
	static := map[graph.Op]bool{}
	for i := range pr.Steps {
		s := &pr.Steps[i]
		op := s.Node.Op
		static[op] = static[op] || s.Static
		count := func(k ops.Kernel) ops.Kernel {
			return func(ins []tensor.Tensor, out tensor.Tensor) error { calls[op]++; return k(ins, out) }
		}
		s.Kernel = count(s.Kernel)
		if s.Serial != nil { // the kernel of inline runs
			s.Serial = count(s.Serial)
		}
	}
	if !static[graph.OpTranspose] || !static[graph.OpMul] || static[graph.OpNeg] || static[graph.OpAdd] {
		t.Fatalf("static marks %v", static)
	}
	feeds := map[string]tensor.Tensor{}
	set := func(name string, v ...float32) {
		n := staticNode(g, name)
		x, err := tensor.FromF32(n.Shape, v)
		if err != nil {
			t.Fatal(err)
		}
		feeds[name] = x
		if err := pr.Write(n, x.Data); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		want, err := ops.Interpret(g, feeds)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range g.Outputs() {
			got := pr.Values[o.ID].F32()
			for j, w := range want[i].F32() {
				if got[j] != w {
					t.Fatalf("%s: output %d = %v, want %v", when, i, got, want[i].F32())
				}
			}
		}
	}
	set("w1", 0.5, -0.25, 1, 2, -1, 0.125)
	set("w2", 1, 2, 3, 4)
	for run := range 3 {
		set("x", 1, -2, 3, -4, 5, -6) // the arena reuses input buffers: feed every run
		if err := pr.Run(); err != nil {
			t.Fatal(err)
		}
		check("run")
		if calls[graph.OpTranspose] != 1 || calls[graph.OpNeg] != run+1 {
			t.Fatalf("after run %d: calls %v", run, calls)
		}
	}
	set("w1", 2, 2, 2, -1, -1, -1) // a weight write: static steps run once more
	for range 2 {
		set("x", 0.5, -0.5, 0.5, 0.5, 0.5, 0.5)
		if err := pr.Run(); err != nil {
			t.Fatal(err)
		}
		check("after SetParam")
	}
	if calls[graph.OpTranspose] != 2 || calls[graph.OpMul] != 2+5*4 {
		t.Errorf("calls %v: static steps should have run twice", calls)
	}
	// A clone computes its own static values on its first run.
	c, err := pr.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cp := c.(*exec.Program)
	set("x", 0.25, 1, -1, 0.5, 2, 0)
	if err := pr.Run(); err != nil {
		t.Fatal(err)
	}
	if err := cp.Write(staticNode(g, "x"), feeds["x"].Data); err != nil {
		t.Fatal(err)
	}
	if err := cp.Run(); err != nil {
		t.Fatal(err)
	}
	y := g.Outputs()[0]
	for j, v := range pr.Values[y.ID].F32() {
		if cp.Values[y.ID].F32()[j] != v {
			t.Fatalf("clone output %v, want %v", cp.Values[y.ID].F32(), pr.Values[y.ID].F32())
		}
	}
}
