package plan_test

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// joinOpts is the CPU session's planning: the catalogue-like in-place
// rule and joined concats.
var joinOpts = plan.Options{InPlace: elementwise, JoinConcat: true}

// planJoin plans g with opt, checks the plan both ways and returns it.
func planJoin(t *testing.T, g *graph.Graph, opt plan.Options) *plan.Plan {
	t.Helper()
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Make(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatalf("Check: %v\n%s", err, graph.Dump(g))
	}
	if err := simulate(g, p); err != nil {
		t.Fatalf("simulate: %v\n%s", err, graph.Dump(g))
	}
	return p
}

// wantAt checks that part lives at off bytes into joined concat c (and,
// under KILN_PLAN=naive, which joins nothing, that c is not joined).
func wantAt(t *testing.T, p *plan.Plan, c, part *graph.Node, off int) {
	t.Helper()
	sc, sp := p.Slots[c.ID], p.Slots[part.ID]
	if plan.FromEnv().Naive {
		if sc.Joined || p.Free(c) || sp.Alias != nil {
			t.Fatalf("%s joined under KILN_PLAN=naive", c.Name)
		}
		return
	}
	if !sc.Joined || !p.Free(c) {
		t.Fatalf("%s not joined", c.Name)
	}
	if sp.Region != sc.Region || sp.Offset != sc.Offset+off {
		t.Fatalf("%s at %v+%d, want %v+%d (%s +%d)", part.Name, sp.Region, sp.Offset, sc.Region, sc.Offset+off, c.Name, off)
	}
}

// TestJoinFire: a SqueezeNet Fire module's two expand branches are
// computed into their concat, which runs no step.
func TestJoinFire(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 4, 16)
	sq := g.Relu(x)
	a, b := g.Exp(sq), g.Tanh(sq)
	c := g.Concat(1, a, b)
	g.Output(g.Neg(c))
	p := planJoin(t, g, joinOpts)
	wantAt(t, p, c, a, 0)
	wantAt(t, p, c, b, 4*16*4)
	if s := p.Slots[c.ID]; s.Alias != nil || !plan.FromEnv().Naive && s.Start > p.Slots[a.ID].Start {
		t.Fatalf("concat slot %+v: not a buffer of its own from its first part on", s)
	}
	off := planJoin(t, g, plan.Options{InPlace: elementwise})
	if off.Slots[c.ID].Joined || off.Free(c) {
		t.Fatal("joined without Options.JoinConcat")
	}
	if naive := planJoin(t, g, plan.Options{Naive: true, JoinConcat: true}); naive.Slots[c.ID].Joined {
		t.Fatal("joined under the naive plan")
	}
}

// TestJoinPrefixes: DenseNet's concats, each the block input and the
// features so far, all live in the last one's buffer.
func TestJoinPrefixes(t *testing.T) {
	g := graph.New()
	x0 := g.Relu(g.Input("x", tensor.F32, 1, 2, 16))
	feats := []*graph.Node{x0}
	var cats []*graph.Node
	for range 3 {
		cat := g.Concat(1, feats...)
		cats = append(cats, cat)
		y := g.Exp(g.ReduceSum(g.Relu(cat), true, 1)) // [1, 1, 16]
		feats = append(feats, y)
	}
	last := g.Concat(1, feats...)
	g.Output(g.Neg(last))
	// The first concat, of x0 alone, could run in place over it: joined
	// instead under either rule.
	for _, opt := range []plan.Options{joinOpts, {InPlace: always, JoinConcat: true}} {
		p := planJoin(t, g, opt)
		at := 0
		for i, f := range feats {
			wantAt(t, p, last, f, at)
			if i < len(cats) {
				wantAt(t, p, last, cats[i], 0)
			}
			at += f.Shape.NumElements() * 4
		}
		if s := p.Slots[cats[0].ID]; s.Alias != last && !plan.FromEnv().Naive {
			t.Fatalf("first concat aliases %v, want the block's last", s.Alias)
		}
	}
}

// TestJoinNested: a joined concat can itself be a part of a later one.
func TestJoinNested(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 1, 16)
	a, b, d := g.Exp(x), g.Tanh(x), g.Sigmoid(x)
	inner := g.Concat(1, a, b)
	outer := g.Concat(1, g.Relu(x), inner, d)
	g.Output(outer)
	p := planJoin(t, g, joinOpts)
	wantAt(t, p, outer, inner, 64)
	wantAt(t, p, outer, a, 64)
	wantAt(t, p, outer, b, 128)
	wantAt(t, p, outer, d, 192)
	wantAt(t, p, inner, b, 64)
	if plan.FromEnv().Naive {
		return
	}
	if r := p.Report(); !strings.HasSuffix(r, ", 2 concats joined (5 values in them)") {
		t.Errorf("Report %q", r)
	}
	if r := p.Root(a); r != outer {
		t.Errorf("Root(a) = %v, want the outer concat", r)
	}
}

// TestJoinRefused: inputs that cannot be written in place of a concat
// leave it a copy, and the other concats of the graph unaffected.
func TestJoinRefused(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *graph.Graph, x *graph.Node) *graph.Node
	}{
		{"graph input", func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Concat(1, x, g.Exp(x)) }},
		{"weight", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Concat(1, g.Exp(x), g.Param("w", tensor.F32, 1, 1, 16))
		}},
		{"computed from weights", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Concat(1, g.Exp(x), g.Exp(g.Param("w", tensor.F32, 1, 1, 16)))
		}},
		{"view", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Concat(1, g.Exp(x), g.Reshape(g.Exp(x), 1, 1, 16))
		}},
		{"twice", func(g *graph.Graph, x *graph.Node) *graph.Node { e := g.Exp(x); return g.Concat(1, e, e) }},
		{"batch of two", func(g *graph.Graph, x *graph.Node) *graph.Node {
			e := g.Exp(g.Concat(0, x, x))
			return g.Concat(1, e, g.Tanh(e))
		}},
		{"not a cache line", func(g *graph.Graph, x *graph.Node) *graph.Node {
			y := g.Input("y", tensor.F32, 1, 1, 8) // 32 bytes a part
			return g.Concat(1, g.Exp(y), g.Tanh(y))
		}},
		{"dtypes", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Concat(1, g.Cast(g.Exp(x), tensor.F16), g.Cast(g.Tanh(x), tensor.F16))
		}},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", tensor.F32, 1, 1, 16)
			c := tc.build(g, x)
			g.Output(g.Neg(c))
			p := planJoin(t, g, joinOpts)
			if tc.name == "dtypes" { // two computed F16 parts of 32 bytes: the second is not aligned
				if p.Slots[c.ID].Joined {
					t.Fatal("joined with a part 32 bytes in")
				}
				return
			}
			if p.Slots[c.ID].Joined || p.Free(c) {
				t.Fatalf("joined:\n%s", graph.Dump(g))
			}
		})
	}
}

// TestJoinOutputs: a graph output is never a part (its bytes are read
// after the run), but a concat that is an output holds its parts.
func TestJoinOutputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 1, 16)
	a, b := g.Exp(x), g.Tanh(x)
	c := g.Concat(1, a, b)
	g.Output(c)
	g.OutputNamed("a", a)
	p := planJoin(t, g, joinOpts)
	if p.Slots[c.ID].Joined {
		t.Fatal("joined over an output part")
	}
	g = graph.New()
	x = g.Input("x", tensor.F32, 1, 1, 16)
	a, b = g.Exp(x), g.Tanh(x)
	c = g.Concat(1, a, b)
	g.Output(c)
	p = planJoin(t, g, joinOpts)
	wantAt(t, p, c, b, 64)
}

// TestJoinInPlaceAfter: a part is written over in place only once
// nothing reads its concat's buffer any more; before that, a step that
// could run in place over it writes elsewhere.
func TestJoinInPlaceAfter(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 1, 16)
	a, b := g.Exp(x), g.Tanh(x)
	c := g.Concat(1, a, b)
	early := g.Relu(a) // a is read by c later: not in place
	s := g.ReduceSum(g.Add(g.Neg(c), g.Concat(1, early, early)), false)
	late := g.Relu(b) // b's last read, c dead: in place over b
	g.Output(g.Add(late, s))
	p := planJoin(t, g, joinOpts)
	wantAt(t, p, c, b, 64)
	if p.Slots[early.ID].Alias != nil {
		t.Fatal("wrote in place over a part its concat still needs")
	}
	if sl := p.Slots[late.ID]; !plan.FromEnv().Naive && (sl.Alias != b || sl.Offset != p.Slots[b.ID].Offset) {
		t.Fatalf("late Relu at %+v, want in place over the part", sl)
	}
}

// TestCheckJoined: Check rejects a joined concat whose inputs are not at
// their places, a part outside its concat and a joined non-concat.
func TestCheckJoined(t *testing.T) {
	if plan.FromEnv().Naive {
		t.Skip("KILN_PLAN=naive: Make joins no concat to spoil")
	}
	build := func() (*graph.Graph, *graph.Node, *graph.Node, *plan.Plan) {
		g := graph.New()
		x := g.Input("x", tensor.F32, 1, 1, 16)
		a, b := g.Exp(x), g.Tanh(x)
		c := g.Concat(1, a, b)
		g.Output(g.Neg(c))
		return g, c, b, planJoin(t, g, joinOpts)
	}
	for _, tc := range []struct {
		name, want string
		spoil      func(p *plan.Plan, c, b *graph.Node)
	}{
		{"swapped", "its place is", func(p *plan.Plan, c, b *graph.Node) { p.Slots[b.ID].Offset -= 64 }},
		{"outside", "outside", func(p *plan.Plan, c, b *graph.Node) { p.Slots[b.ID].Offset += 64 }},
		{"unjoined", "no joined concat", func(p *plan.Plan, c, b *graph.Node) { p.Slots[c.ID].Joined = false }},
		{"not a concat", "not a concat", func(p *plan.Plan, c, b *graph.Node) { p.Slots[b.ID].Joined = true }},
	} {
		_, c, b, p := build()
		tc.spoil(p, c, b)
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
