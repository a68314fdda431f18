package plan_test

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

func always(*graph.Node) bool { return true }

// mustPlan makes a plan and checks it two ways: Check and the tagged
// memory simulation.
func mustPlan(t *testing.T, g *graph.Graph, opt plan.Options) *plan.Plan {
	t.Helper()
	p, err := plan.Make(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := simulate(g, p); err != nil {
		t.Fatalf("simulate: %v", err)
	}
	return p
}

func skipIfNaiveEnv(t *testing.T) {
	if plan.FromEnv().Naive {
		t.Skip("KILN_PLAN=naive turns reuse off")
	}
}

func TestViewsAlias(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 4) // step 0
	w := g.Param("w", tensor.F32, 4, 6)    // 1
	a := g.Exp(x)                          // 2
	r := g.Reshape(a, 6, 4)                // 3
	s := g.Unsqueeze(r, 0)                 // 4: [1 6 4]
	f := g.Flatten(s, 2)                   // 5: [6 4]
	w1 := g.Reshape(w, 24)                 // 6
	w2 := g.Reshape(w1, 4, 6)              // 7
	m := g.MatMul(f, w2)                   // 8: [6 6]
	u := g.Unsqueeze(m, 1)                 // 9
	q := g.Squeeze(u, 1)                   // 10
	out := g.Neg(q)                        // 11
	g.Output(out)
	p := mustPlan(t, g, plan.Options{InPlace: never})

	sa := p.Slots[a.ID]
	if sa.Alias != nil || sa.Region != plan.Arena || sa.Start != 2 || sa.End != 8 {
		t.Errorf("a: %+v, want its own arena buffer over steps [2, 8] (read through f at 8)", sa)
	}
	for _, c := range []struct{ n, parent, root *graph.Node }{
		{r, a, a}, {s, r, a}, {f, s, a}, {w1, w, w}, {w2, w1, w}, {u, m, m}, {q, u, m},
	} {
		sl, sr := p.Slots[c.n.ID], p.Slots[c.root.ID]
		if sl.Alias != c.parent || sl.Region != sr.Region || sl.Offset != sr.Offset || sl.Bytes != sr.Bytes {
			t.Errorf("%s: %+v, want an alias of %s at %v+%d", c.n.Name, sl, c.parent.Name, sr.Region, sr.Offset)
		}
		if got := p.Root(c.n); got != c.root {
			t.Errorf("Root(%s) = %s, want %s", c.n.Name, got.Name, c.root.Name)
		}
		if !p.FreeView(c.n) {
			t.Errorf("FreeView(%s) = false for an exact alias", c.n.Name)
		}
	}
	if p.FreeView(a) || p.FreeView(m) {
		t.Error("FreeView is true for a computed value")
	}
	if p.Slots[w2.ID].Region != plan.Weights {
		t.Errorf("a view of a weight left the weights region")
	}
	if sm := p.Slots[m.ID]; sm.End != 11 {
		t.Errorf("m ends at %d, want 11 (read through two views)", sm.End)
	}
	if !strings.Contains(p.Report(), "7 views, 0 in place") {
		t.Errorf("report %q does not count 7 views", p.Report())
	}
}

func TestViewOutputKeepsRootAlive(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4, 4)
	a := g.Exp(x)         // 1
	v := g.Reshape(a, 16) // 2
	b := g.Exp(g.Neg(x))  // 3, 4
	g.Output(b)           // output0
	g.OutputNamed("v", v) // a view is an output
	p := mustPlan(t, g, plan.Options{InPlace: never})
	if end := p.Slots[a.ID].End; end != len(p.Order)-1 {
		t.Errorf("a ends at %d, want the last step %d", end, len(p.Order)-1)
	}
}

func TestInPlaceRules(t *testing.T) {
	skipIfNaiveEnv(t)
	type built struct {
		g    *graph.Graph
		n    *graph.Node // the node whose aliasing is checked
		want bool
	}
	cases := []struct {
		name  string
		opt   plan.Options
		build func() built
	}{
		{"last use of an intermediate", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.Neg(g.Exp(g.Input("x", tensor.F32, 4, 16)))
			g.Output(b)
			return built{g, b, true}
		}},
		{"through a view", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.Neg(g.Reshape(g.Exp(g.Input("x", tensor.F32, 4, 16)), 64))
			g.Output(b)
			return built{g, b, true}
		}},
		{"the same value twice", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 4, 16))
			b := g.Mul(a, a)
			g.Output(b)
			return built{g, b, true}
		}},
		{"graph input", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.Neg(g.Input("x", tensor.F32, 4, 16))
			g.Output(b)
			return built{g, b, false}
		}},
		{"view of a graph input", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.Neg(g.Reshape(g.Input("x", tensor.F32, 4, 16), 64))
			g.Output(b)
			return built{g, b, false}
		}},
		{"param", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.Add(g.Param("w", tensor.F32, 4, 16), g.Input("x", tensor.F32, 4, 16))
			g.Output(b)
			return built{g, b, false}
		}},
		{"constant", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.Add(g.ConstF32(tensor.Shape{2}, []float32{1, 2}), g.Input("x", tensor.F32, 2))
			g.Output(b)
			return built{g, b, false}
		}},
		{"graph output", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 4, 16))
			b := g.Neg(a)
			g.Output(a, b)
			return built{g, b, false}
		}},
		{"a view of it is an output", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 4, 16))
			v := g.Reshape(a, 64)
			b := g.Neg(a)
			g.Output(v, b)
			return built{g, b, false}
		}},
		{"used later", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 4, 16))
			b := g.Neg(a)
			g.Output(g.Add(b, a))
			return built{g, b, false}
		}},
		{"the consumer that reads it last", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 4, 16))
			c := g.Add(g.Neg(a), a) // input 0 (the Neg) dies here
			g.Output(c)
			return built{g, c, true}
		}},
		{"used later through a view", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 4, 16))
			v := g.Reshape(a, 64)
			b := g.Neg(a)
			g.Output(g.Add(g.Reshape(b, 64), v))
			return built{g, b, false}
		}},
		{"output larger (broadcast)", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 1, 16))
			b := g.Add(a, g.Input("y", tensor.F32, 4, 16))
			g.Output(b)
			return built{g, b, false}
		}},
		{"output smaller", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.ReduceSum(g.Exp(g.Input("x", tensor.F32, 4, 16)), false, 1)
			g.Output(b)
			return built{g, b, false}
		}},
		{"same bytes, other dtype", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			b := g.Cast(g.Exp(g.Input("x", tensor.F32, 4, 16)), tensor.I32)
			g.Output(b)
			return built{g, b, false}
		}},
		{"another input views the buffer with another shape", plan.Options{InPlace: always}, func() built {
			g := graph.New()
			a := g.Exp(g.Input("x", tensor.F32, 1, 16))
			b := g.Add(a, g.Reshape(a, 16))
			g.Output(b)
			return built{g, b, false}
		}},
		{"predicate says no", plan.Options{InPlace: never}, func() built {
			g := graph.New()
			b := g.Neg(g.Exp(g.Input("x", tensor.F32, 4, 16)))
			g.Output(b)
			return built{g, b, false}
		}},
		{"naive", plan.Options{InPlace: always, Naive: true}, func() built {
			g := graph.New()
			b := g.Neg(g.Exp(g.Input("x", tensor.F32, 4, 16)))
			g.Output(b)
			return built{g, b, false}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.build()
			if err := b.g.Err(); err != nil {
				t.Fatal(err)
			}
			p := mustPlan(t, b.g, c.opt)
			s := p.Slots[b.n.ID]
			in0 := b.n.Inputs[0]
			switch {
			case b.want && s.Alias != in0:
				t.Errorf("%s has its own buffer, want it in place over %s", b.n.Name, in0.Name)
			case !b.want && s.Alias != nil:
				t.Errorf("%s is in place over %s, want its own buffer", b.n.Name, s.Alias.Name)
			case b.want && s.Offset != p.Slots[in0.ID].Offset:
				t.Errorf("%s at %d, its input at %d", b.n.Name, s.Offset, p.Slots[in0.ID].Offset)
			}
		})
	}
}

func TestWeightsRegion(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 16)
	p1 := g.Param("p1", tensor.F32, 3)                         // 12 bytes: a 64-byte slot
	c := g.ConstF32(tensor.Shape{5}, []float32{1, 2, 3, 4, 5}) // 20: 64
	p2 := g.Param("p2", tensor.F32, 16)                        // 64: 64
	p3 := g.Param("p3", tensor.F32, 17)                        // 68: 128
	cat := g.Concat(0, p1, c, g.Reshape(p3, 17))               // 25 elements, an arena value
	g.Output(g.Add(x, p2), cat)
	g.OutputNamed("p1", p1) // a param output stays a weight
	p := mustPlan(t, g, plan.Options{InPlace: never})

	want := map[*graph.Node]int{p1: 0, c: 64, p2: 128, p3: 192}
	for n, off := range want {
		s := p.Slots[n.ID]
		if s.Region != plan.Weights || s.Offset != off || s.Start != 0 || s.End != len(p.Order)-1 {
			t.Errorf("%s: %+v, want weights+%d over the whole run", n.Name, s, off)
		}
	}
	if p.WeightBytes != 320 {
		t.Errorf("WeightBytes %d, want 64+64+64+128 = 320", p.WeightBytes)
	}
	// Arena: x (64), add (64), cat (100 -> 128); naive is their sum.
	if p.NaiveBytes != 256 {
		t.Errorf("NaiveBytes %d, want 64+64+128 = 256", p.NaiveBytes)
	}
	if s := p.Slots[x.ID]; s.Region != plan.Arena {
		t.Errorf("input in %v", s.Region)
	}
}

// chain is x -> exp -> exp -> exp -> exp with 100 f32 (400 bytes, 448
// aligned) per value: steps 0..4.
func chain() (*graph.Graph, []*graph.Node) {
	g := graph.New()
	ns := []*graph.Node{g.Input("x", tensor.F32, 100)}
	for range 4 {
		ns = append(ns, g.Exp(ns[len(ns)-1]))
	}
	g.Output(ns[len(ns)-1])
	return g, ns
}

func TestChainSizesByHand(t *testing.T) {
	skipIfNaiveEnv(t)
	g, ns := chain()
	p := mustPlan(t, g, plan.Options{InPlace: never})
	// Each step reads one value and writes the next: two live at a time.
	if p.LowerBound != 2*448 || p.ArenaBytes != 2*448 || p.NaiveBytes != 5*448 {
		t.Errorf("arena %d, lower bound %d, naive %d; want 896, 896, 2240", p.ArenaBytes, p.LowerBound, p.NaiveBytes)
	}
	for i, n := range ns {
		s := p.Slots[n.ID]
		wantEnd := i + 1
		if i == 4 {
			wantEnd = 4
		}
		if s.Offset%64 != 0 || s.Start != i || s.End != wantEnd {
			t.Errorf("%s: %+v, want aligned, live [%d, %d]", n.Name, s, i, wantEnd)
		}
	}
	want := "plan: 5 nodes; arena 896 B (1.00x of lower bound 896 B, 0.40x of naive 2.19 KiB); weights 0 B; 0 views, 0 in place"
	if got := p.Report(); got != want {
		t.Errorf("Report:\n got %s\nwant %s", got, want)
	}

	// In place: exps 2..4 reuse exp 1's buffer (x is an input and keeps
	// its own), so two buffers overlap only at step 1.
	p = mustPlan(t, g, plan.Options{InPlace: always})
	for i := 2; i <= 4; i++ {
		if p.Slots[ns[i].ID].Alias != ns[i-1] {
			t.Errorf("%s not in place", ns[i].Name)
		}
	}
	if p.Slots[ns[1].ID].Alias != nil {
		t.Errorf("exp over the graph input went in place")
	}
	if r := p.Slots[ns[1].ID]; r.Start != 1 || r.End != 4 {
		t.Errorf("shared buffer lives over [%d, %d], want [1, 4]", r.Start, r.End)
	}
	if p.ArenaBytes != 896 || p.LowerBound != 896 || p.NaiveBytes != 2240 {
		t.Errorf("in place: arena %d, lower bound %d, naive %d; want 896, 896, 2240", p.ArenaBytes, p.LowerBound, p.NaiveBytes)
	}
	if !strings.HasSuffix(p.Report(), "0 views, 3 in place") {
		t.Errorf("Report %q", p.Report())
	}
}

func TestNaiveBackToBack(t *testing.T) {
	g, ns := chain()
	p := mustPlan(t, g, plan.Options{Naive: true, InPlace: always})
	for i, n := range ns {
		if s := p.Slots[n.ID]; s.Offset != 448*i || s.Alias != nil {
			t.Errorf("%s: %+v, want its own buffer at %d", n.Name, s, 448*i)
		}
	}
	if p.ArenaBytes != 2240 || p.NaiveBytes != 2240 || p.LowerBound != 896 {
		t.Errorf("naive: arena %d, naive %d, lower bound %d; want 2240, 2240, 896", p.ArenaBytes, p.NaiveBytes, p.LowerBound)
	}
}

func TestZeroBytes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 0, 3)
	y := g.Input("y", tensor.F32, 3)
	a := g.Add(g.Exp(x), y) // [0 3]: no bytes
	b := g.Neg(y)
	g.Output(a, b)
	p := mustPlan(t, g, plan.Options{InPlace: never})
	if p.Slots[a.ID].Bytes != 0 || p.Slots[x.ID].Bytes != 0 {
		t.Errorf("empty values take bytes")
	}
	// y and b (12 bytes each, 64 aligned) are live together at b's step.
	if p.ArenaBytes != 128 || p.LowerBound != 128 {
		t.Errorf("arena %d, lower bound %d, want 128, 128", p.ArenaBytes, p.LowerBound)
	}
}

func TestMakeErrors(t *testing.T) {
	if _, err := plan.Make(nil, plan.Options{}); err == nil {
		t.Error("nil graph planned")
	}
	g := graph.New()
	g.Reshape(g.Input("x", tensor.F32, 4), 3)
	if _, err := plan.Make(g, plan.Options{}); err == nil {
		t.Error("graph with a build error planned")
	}
	g = graph.New()
	g.Neg(g.Input("x", tensor.F32, 4))
	if _, err := plan.Make(g, plan.Options{}); err == nil {
		t.Error("graph without outputs planned")
	}
}

// TestCatalogueInPlace uses the session's predicate, ops.InPlace:
// whatever the ops catalogue says, a step goes in place exactly when its
// entry is flagged, and never over a graph input; without a predicate no
// step does.
func TestCatalogueInPlace(t *testing.T) {
	skipIfNaiveEnv(t)
	g := graph.New()
	x := g.Input("x", tensor.F32, 8, 8)
	a := g.Exp(x)
	b := g.Relu(a)
	c := g.Tanh(g.Reshape(b, 64))
	g.Output(c)
	p := mustPlan(t, g, plan.Options{InPlace: ops.InPlace})
	flagged := func(op graph.Op) bool {
		e, err := ops.Lookup(op)
		return err == nil && e.InPlace
	}
	none := mustPlan(t, g, plan.Options{})
	for _, n := range []*graph.Node{a, b, c} {
		s := p.Slots[n.ID]
		want := flagged(n.Op) && n != a // a reads the graph input
		if got := s.Alias != nil; got != want {
			t.Errorf("%s (%v): in place %v, want %v (catalogue flag %v)", n.Name, n.Op, got, want, flagged(n.Op))
		}
		if s := none.Slots[n.ID]; s.Alias != nil && !n.Op.IsView() {
			t.Errorf("%s (%v): in place with no InPlace predicate", n.Name, n.Op)
		}
	}
}
