package graph

import (
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// buildMLP is a two-layer perceptron on [32, 784].
func buildMLP(g *Graph) *Node {
	x := g.Input("x", tensor.F32, 32, 784)
	h := g.Relu(g.Add(g.MatMul(x, g.Param("w1", tensor.F32, 784, 512)), g.Param("b1", tensor.F32, 512)))
	y := g.Add(g.MatMul(h, g.Param("w2", tensor.F32, 512, 10)), g.Param("b2", tensor.F32, 10))
	return g.LogSoftmax(y, -1)
}

// buildCNN is conv, batchnorm, relu, pool and a classifier head.
func buildCNN(g *Graph) *Node {
	x := g.Input("img", tensor.F32, 2, 3, 32, 32)
	c := g.Conv2D(x, g.Param("cw", tensor.F32, 16, 3, 3, 3), g.Param("cb", tensor.F32, 16), ConvOpts{Pads: []int{1, 1, 1, 1}})
	p := func(name string) *Node { return g.Param(name, tensor.F32, 16) }
	y := g.Relu(g.BatchNorm(c, p("s"), p("b"), p("m"), p("v"), 1e-5))
	y = g.MaxPool2D(y, PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}})
	y = g.Flatten(g.GlobalAvgPool(y), 1)
	return g.Gemm(y, g.Param("fw", tensor.F32, 10, 16), g.Param("fb", tensor.F32, 10), 1, 1, false, true)
}

// buildEncoder is one transformer encoder layer: self-attention with a
// mask, residuals, layer norms and a GELU MLP.
func buildEncoder(g *Graph) *Node {
	const b, s, d, h = 2, 8, 16, 4
	x := g.Input("x", tensor.F32, b, s, d)
	mask := g.Input("mask", tensor.Bool, s, s)
	lin := func(x *Node, name string, in, out int) *Node {
		return g.Add(g.MatMul(x, g.Param(name+".w", tensor.F32, in, out)), g.Param(name+".b", tensor.F32, out))
	}
	ln := func(x *Node, name string) *Node {
		return g.LayerNorm(x, g.Param(name+".s", tensor.F32, d), g.Param(name+".b", tensor.F32, d), -1, 1e-5)
	}
	qkv := g.SplitEqual(lin(x, "qkv", d, 3*d), -1, 3)
	heads := func(n *Node) *Node { return g.Transpose(g.Reshape(n, b, s, h, d/h), 0, 2, 1, 3) }
	att := g.Attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), mask, AttentionOpts{})
	att = g.Reshape(g.Transpose(att, 0, 2, 1, 3), b, s, d)
	x = ln(g.Add(x, lin(att, "o", d, d)), "ln1")
	mlp := lin(g.Gelu(lin(x, "up", d, 4*d)), "down", 4*d, d)
	return ln(g.Add(x, mlp), "ln2")
}

func TestVerifyGoodGraphs(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(*Graph) *Node
		want  tensor.Shape
	}{
		{"mlp", buildMLP, sh(32, 10)},
		{"cnn", buildCNN, sh(2, 10)},
		{"encoder", buildEncoder, sh(2, 8, 16)},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := New()
			out := c.build(g)
			g.Output(out)
			if err := Verify(g); err != nil {
				t.Fatal(err)
			}
			if out.DType != tensor.F32 || !out.Shape.Equal(c.want) {
				t.Errorf("output %v%v, want f32%v", out.DType, out.Shape, c.want)
			}
			order, err := g.TopoOrder()
			if err != nil || len(order) != len(g.Nodes) {
				t.Fatalf("TopoOrder: %d nodes, %v", len(order), err)
			}
			checkTopo(t, g)
		})
	}
}

// checkTopo checks IDs are positions and every input precedes its user.
func checkTopo(t *testing.T, g *Graph) {
	t.Helper()
	for i, n := range g.Nodes {
		if n.ID != i {
			t.Errorf("node %q at %d has ID %d", n.Name, i, n.ID)
		}
		for _, in := range n.Inputs {
			if in.ID >= n.ID {
				t.Errorf("node %q (%d) uses %q (%d) which does not precede it", n.Name, n.ID, in.Name, in.ID)
			}
		}
	}
}

// small builds x -> exp -> neg -> out, plus a second input y.
func small() (g *Graph, x, y, e, n *Node) {
	g = New()
	x = g.Input("x", tensor.F32, 2, 3)
	y = g.Input("y", tensor.F32, 2, 3)
	e = g.Exp(x)
	n = g.Neg(e)
	g.Output(n)
	return
}

func TestVerifyReports(t *testing.T) {
	foreign := New().Input("far", tensor.F32, 2, 3)
	cases := []struct {
		name   string
		tamper func(g *Graph, x, y, e, n *Node)
		words  []string
	}{
		{"cycle", func(g *Graph, x, y, e, n *Node) {
			if err := g.SetInput(e, 0, n); err != nil {
				panic(err)
			}
		}, []string{"cycle"}},
		{"self-loop", func(g *Graph, x, y, e, n *Node) { _ = g.SetInput(n, 0, n) }, []string{"cycle", negName}},
		{"dangling-replaced", func(g *Graph, x, y, e, n *Node) { n.Inputs[0] = foreign }, []string{"neg_3", "dangling"}},
		{"dangling-appended", func(g *Graph, x, y, e, n *Node) { e.Inputs = append(e.Inputs, foreign) }, []string{"exp_2", "dangling", "wrong number of inputs"}},
		{"nil-input", func(g *Graph, x, y, e, n *Node) { n.Inputs[0] = nil }, []string{"neg_3", "input 0"}},
		{"shape", func(g *Graph, x, y, e, n *Node) { e.Shape = sh(99) }, []string{"exp_2", "records f32 [99]", "gives f32 [2 3]"}},
		{"shape-propagates", func(g *Graph, x, y, e, n *Node) { x.Shape = sh(3, 2) }, []string{"exp_2", "[2 3]"}},
		{"dtype", func(g *Graph, x, y, e, n *Node) { n.DType = tensor.F64 }, []string{"neg_3", "records f64"}},
		{"no-outputs", func(g *Graph, x, y, e, n *Node) { g.outputs, g.outName = nil, nil }, []string{"no outputs"}},
		{"duplicate-name", func(g *Graph, x, y, e, n *Node) { n.Name = "x" }, []string{"duplicate name", `"x"`}},
		{"moved", func(g *Graph, x, y, e, n *Node) { g.Nodes[2], g.Nodes[3] = n, e }, []string{"not owned"}},
		{"nil-slot", func(g *Graph, x, y, e, n *Node) { g.Nodes[1] = nil }, []string{"node slot 1 is nil"}},
		{"invalid-op", func(g *Graph, x, y, e, n *Node) { e.Op = OpInvalid }, []string{"exp_2", "invalid op"}},
		{"unknown-op", func(g *Graph, x, y, e, n *Node) { e.Op = Op(222) }, []string{"exp_2", "invalid op"}},
		{"source-inputs", func(g *Graph, x, y, e, n *Node) { y.Inputs = []*Node{x} }, []string{`"y"`, "source has inputs"}},
		{"source-shape", func(g *Graph, x, y, e, n *Node) { y.Shape = sh(-1) }, []string{`"y"`, "shape"}},
		{"source-dtype", func(g *Graph, x, y, e, n *Node) { y.DType = tensor.Invalid }, []string{`"y"`, "dtype"}},
		{"wrong-arity", func(g *Graph, x, y, e, n *Node) { n.Op = OpAdd }, []string{"neg_3", "wrong number of inputs"}},
		{"two-problems", func(g *Graph, x, y, e, n *Node) {
			e.Shape = sh(5)
			n.DType = tensor.I32
		}, []string{"exp_2", "neg_3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, x, y, e, n := small()
			if err := Verify(g); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			c.tamper(g, x, y, e, n)
			mustContain(t, Verify(g), c.words...)
			_ = Dump(g) // must not panic on a broken graph
		})
	}
}

const negName = "neg_3"

func TestVerifyMore(t *testing.T) {
	mustContain(t, Verify(nil), "nil graph")

	g := New()
	s := g.Softmax(g.Input("x", tensor.F32, 2, 3), -1)
	r := g.ReduceSum(g.Input("y", tensor.F32, 2, 3, 4), false, 2, 0)
	g.Output(s, r)
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	s.Attrs.Axis = -1 // the builder stored 1
	mustContain(t, Verify(g), s.Name, "not normalised")
	s.Attrs.Axis = 1
	r.Attrs.Axes = []int{2, 0} // the builder stored [0 2]
	mustContain(t, Verify(g), r.Name, "not normalised")
	r.Attrs.Axes = []int{0, 2}

	c := g.Scalar(1)
	g.Output(c)
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	c.Value = nil
	mustContain(t, Verify(g), c.Name, "constant value")
}

func TestSetInput(t *testing.T) {
	g, x, y, e, n := small()
	other := New().Input("z", tensor.F32, 2, 3)
	mustContain(t, g.SetInput(e, 0, other), "SetInput", "not in this graph")
	mustContain(t, g.SetInput(other, 0, x), "SetInput", "not in this graph")
	mustContain(t, g.SetInput(e, 1, y), "SetInput", "no input 1")
	mustContain(t, g.SetInput(e, -1, y), "SetInput", "no input -1")
	if err := g.SetInput(e, 0, y); err != nil {
		t.Fatal(err)
	}
	if e.Inputs[0] != y || n.Inputs[0] != e {
		t.Fatal("SetInput did not rewire")
	}
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	// A cycle: every cycle-aware entry point reports it.
	if err := g.SetInput(e, 0, n); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"Verify": Verify(g), "Prune": g.Prune()} {
		if err == nil {
			t.Errorf("%s accepted a cycle", name)
		}
	}
	if _, err := g.TopoOrder(); err == nil {
		t.Error("TopoOrder accepted a cycle")
	}
}

func TestReplaceUses(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 2, 3)
	a := g.Exp(x)
	b := g.Neg(a)
	c := g.Add(a, b)
	g.Output(c, a)
	r := g.Relu(x)
	sq := g.Sqrt(a) // consumes a: must not become its own input

	other := New().Input("x", tensor.F32, 2, 3)
	mustContain(t, g.ReplaceUses(a, other), "ReplaceUses", "not in this graph")
	mustContain(t, g.ReplaceUses(a, g.Cast(x, tensor.F64)), "ReplaceUses", "differ")
	mustContain(t, g.ReplaceUses(a, g.Reshape(x, 3, 2)), "ReplaceUses", "differ")

	uses := g.Uses()
	if uses[a.ID] != 4 { // b, c, sq and one output slot
		t.Errorf("uses of a = %d, want 4", uses[a.ID])
	}
	if err := g.ReplaceUses(a, sq); err != nil {
		t.Fatal(err)
	}
	if b.Inputs[0] != sq || c.Inputs[0] != sq || g.Outputs()[1] != sq || sq.Inputs[0] != a {
		t.Fatalf("rewiring wrong: b<-%s c<-%s out1=%s sq<-%s", b.Inputs[0].Name, c.Inputs[0].Name, g.Outputs()[1].Name, sq.Inputs[0].Name)
	}
	if err := g.ReplaceUses(sq, r); err != nil {
		t.Fatal(err)
	}
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	if u := g.Uses(); u[a.ID] != 1 || u[sq.ID] != 0 || u[r.ID] != 3 { // b, c and the output slot
		t.Errorf("uses a=%d sq=%d r=%d, want 1 0 3", u[a.ID], u[sq.ID], u[r.ID])
	}
}

func TestPrune(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 4)
	unusedIn := g.Input("unused", tensor.F32, 4)
	w := g.Param("w", tensor.F32, 4)
	unusedP := g.Param("spare", tensor.F32, 1)
	dead := g.Exp(g.Sin(x)) // nothing uses these
	late := g.Neg(x)        // made after its future consumer
	early := g.Mul(x, w)
	out := g.Relu(early)
	g.Output(out)
	// early now consumes late, which has a higher ID: creation order is no
	// longer topological, and Prune must fix the numbering.
	if err := g.SetInput(early, 0, late); err != nil {
		t.Fatal(err)
	}
	deadName, sinName := dead.Name, dead.Inputs[0].Name
	if err := g.Prune(); err != nil {
		t.Fatal(err)
	}
	if err := Verify(g); err != nil {
		t.Fatalf("Verify after Prune: %v", err)
	}
	checkTopo(t, g)
	want := map[*Node]bool{x: true, unusedIn: true, w: true, unusedP: true, late: true, early: true, out: true}
	if len(g.Nodes) != len(want) {
		t.Errorf("%d nodes after Prune, want %d:\n%s", len(g.Nodes), len(want), Dump(g))
	}
	for _, n := range g.Nodes {
		if !want[n] {
			t.Errorf("Prune kept %s", n)
		}
	}
	if late.ID >= early.ID {
		t.Errorf("late %d not renumbered before early %d", late.ID, early.ID)
	}
	for _, name := range []string{deadName, sinName} {
		if _, ok := g.Lookup(name); ok {
			t.Errorf("pruned %q still found by Lookup", name)
		}
	}
	if len(g.Inputs()) != 2 || len(g.Params()) != 2 {
		t.Errorf("interface changed: %d inputs, %d params", len(g.Inputs()), len(g.Params()))
	}
	// A pruned node is no longer part of the graph.
	mustContain(t, g.SetInput(out, 0, dead), "not in this graph")
	g.Relu(dead)
	mustContain(t, g.Err(), "Relu", "another graph")
}

func TestPruneKeepsGoodGraphs(t *testing.T) {
	for _, build := range []func(*Graph) *Node{buildMLP, buildCNN, buildEncoder} {
		g := New()
		g.Output(build(g))
		before := len(g.Nodes)
		if err := g.Prune(); err != nil {
			t.Fatal(err)
		}
		if len(g.Nodes) != before {
			t.Errorf("Prune removed %d live nodes", before-len(g.Nodes))
		}
		if err := Verify(g); err != nil {
			t.Fatal(err)
		}
		checkTopo(t, g)
	}
}

func TestTopoOrderBrokenSlot(t *testing.T) {
	g, _, _, _, _ := small()
	g.Nodes[0] = nil
	if _, err := g.TopoOrder(); err == nil {
		t.Fatal("TopoOrder accepted a nil slot")
	}
	g, _, _, e, _ := small()
	e.ID = 99
	mustContain(t, g.Prune(), "slot 2")
}
