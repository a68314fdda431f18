package plan_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// runResident is the oracle for Residence: it runs the plan three times
// on tagged memory with input in as a handle living where res says, fed
// from out (nil: not fed), doing exactly the copies res promises (into
// the input before a run for OwnBuffer, from out into the handle after a
// run unless InPlace) and nothing else. Every step must read what its
// producers wrote, the handle's bytes what the handle holds, and after
// each run every output its value and the handle the value it must take
// (out's, or its own when not fed). Tags are node IDs offset per run.
func runResident(g *graph.Graph, p *plan.Plan, in, out *graph.Node, res plan.Residence) error {
	arena := &tagged{}
	s := p.Slots[in.ID]
	const first = -1000 // the bound value's tag
	handle := first     // the handle's value (own buffer, or its bytes at s)
	if res != plan.OwnBuffer {
		arena.write(s.Offset, s.Offset+s.Bytes, handle)
	}
	for run := range 3 {
		id := func(n *graph.Node) int { return n.ID + 10000*(run+1) }
		tag := make([]int, len(g.Nodes))
		holds := func(n *graph.Node, when string) error {
			ns := p.Slots[n.ID]
			if ns.Region != plan.Arena {
				return nil
			}
			if at, got, ok := arena.holds(ns.Offset, ns.Offset+ns.Bytes, tag[n.ID]); !ok {
				return fmt.Errorf("run %d, %s: %s: byte %d holds tag %d, want %d", run, when, n.Name, at, got, tag[n.ID])
			}
			return nil
		}
		for _, n := range g.Nodes { // the host writes the other inputs
			if n.Op == graph.OpInput && n != in {
				ns := p.Slots[n.ID]
				arena.write(ns.Offset, ns.Offset+ns.Bytes, id(n))
				tag[n.ID] = id(n)
			}
		}
		if res == plan.OwnBuffer {
			arena.write(s.Offset, s.Offset+s.Bytes, handle)
		}
		tag[in.ID] = handle
		for _, n := range p.Order {
			if n.Op.IsSource() {
				continue
			}
			for _, x := range n.Inputs {
				if err := holds(x, "before "+n.Name); err != nil {
					return err
				}
			}
			if n.Op.IsView() && p.FreeView(n) {
				tag[n.ID] = tag[n.Inputs[0].ID]
				continue
			}
			tag[n.ID] = id(n)
			if ns := p.Slots[n.ID]; ns.Region == plan.Arena {
				arena.write(ns.Offset, ns.Offset+ns.Bytes, id(n))
			}
		}
		want := handle // what the handle must hold for the next run
		if out != nil {
			want = tag[out.ID]
			if err := holds(out, "fed output at the end"); err != nil {
				return err
			}
			if res != plan.InPlace {
				handle = want
				if res == plan.InSlot {
					so := p.Slots[out.ID]
					if so.Region == plan.Arena {
						arena.write(s.Offset, s.Offset+s.Bytes, want)
					}
				}
			}
		}
		for _, o := range g.Outputs() {
			if err := holds(o, "after the run and its copies"); err != nil {
				return err
			}
		}
		if res != plan.OwnBuffer {
			if at, got, ok := arena.holds(s.Offset, s.Offset+s.Bytes, want); !ok {
				return fmt.Errorf("run %d: the handle's byte %d holds tag %d, want %d", run, at, got, want)
			}
			handle = want
		} else if handle != want {
			return fmt.Errorf("run %d: own buffer holds tag %d, want %d", run, handle, want)
		}
	}
	return nil
}

// TestResidenceRandomGraphs checks Residence against runResident for
// every input of hundreds of random graphs, not fed and fed from every
// output of its dtype and size, under every in-place policy, and that
// each answer is reached somewhere.
func TestResidenceRandomGraphs(t *testing.T) {
	pols := []plan.Options{{InPlace: always}, {InPlace: never}, {InPlace: elementwise}, {Naive: true}, {InPlace: always, Overwritable: anyInput}}
	seen := map[plan.Residence]int{}
	for seed := range uint64(300) {
		g, err := randomGraph(rand.New(rand.NewPCG(seed, 11)))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for pi, opt := range pols {
			p, err := plan.Make(g, opt)
			if err != nil {
				t.Fatalf("seed %d, policy %d: %v", seed, pi, err)
			}
			for _, in := range g.Inputs() {
				feeds := []*graph.Node{nil}
				for _, o := range g.Outputs() {
					if o.DType == in.DType && o.Shape.Equal(in.Shape) {
						feeds = append(feeds, o)
					}
				}
				for _, out := range feeds {
					res := p.Residence(in, out)
					seen[res]++
					if err := runResident(g, p, in, out, res); err != nil {
						t.Fatalf("seed %d, policy %d, handle %s fed by %v (%v): %v\n%s", seed, pi, in.Name, out, res, err, graph.Dump(g))
					}
				}
			}
		}
	}
	for _, r := range []plan.Residence{plan.OwnBuffer, plan.InSlot, plan.InPlace} {
		if seen[r] == 0 {
			t.Errorf("no handle was placed %v (seen %v)", r, seen)
		}
	}
}

// TestResidenceCases pins the answer for the layouts it exists for.
func TestResidenceCases(t *testing.T) {
	skipIfNaiveEnv(t)
	// A state read by the last step: nothing else can use its bytes.
	g := graph.New()
	st := g.Input("state", tensor.F32, 8)
	inc := g.Input("inc", tensor.F32, 8)
	next := g.Add(st, inc)
	g.Output(next)
	p := mustPlan(t, g, plan.Options{InPlace: never})
	if r := p.Residence(st, nil); r != plan.InSlot {
		t.Errorf("state not fed: %v, want in slot", r)
	}
	if r := p.Residence(st, next); r != plan.InSlot {
		t.Errorf("state fed by state+inc: %v, want in slot (one copy after the run)", r)
	}
	if r := p.Residence(inc, nil); r != plan.InSlot {
		t.Errorf("inc: %v, want in slot", r)
	}

	// A cache read early: later values reuse its bytes, and the updated
	// cache, the same size, lands exactly on them.
	g = graph.New()
	cache := g.Input("cache", tensor.F32, 64)
	row := g.Input("row", tensor.F32, 64)
	a := g.Exp(cache)  // the cache's last read
	b := g.Add(a, row) // may reuse the cache's bytes
	g.Output(g.Exp(b)) // the fed output
	g.Output(g.ReduceSum(b, false, 0))
	p = mustPlan(t, g, plan.Options{InPlace: never})
	fed := g.Outputs()[0]
	if r := p.Residence(cache, nil); r != plan.OwnBuffer {
		t.Errorf("cache not fed, bytes reused: %v, want own buffer", r)
	}
	want := plan.InSlot
	if so, sc := p.Slots[fed.ID], p.Slots[cache.ID]; so.Offset == sc.Offset {
		want = plan.InPlace
	}
	if r := p.Residence(cache, fed); r != want {
		t.Errorf("cache fed: %v, want %v (output at %d, cache at %d)", r, want, p.Slots[fed.ID].Offset, p.Slots[cache.ID].Offset)
	}
	for _, n := range []*graph.Node{nil, fed} {
		if err := runResident(g, p, cache, n, p.Residence(cache, n)); err != nil {
			t.Error(err)
		}
	}
	// A cache updated by elementwise steps: listed as overwritable, the
	// steps run in place over it and the fed output ends in its bytes.
	g = graph.New()
	cache = g.Input("cache", tensor.F32, 64)
	upd := g.Add(g.Mul(cache, g.Input("keep", tensor.F32, 64)), g.Input("new", tensor.F32, 64))
	g.Output(upd)
	for _, over := range []bool{false, true} {
		opt := plan.Options{InPlace: always}
		if over {
			opt.Overwritable = func(n *graph.Node) bool { return n == cache }
		}
		p = mustPlan(t, g, opt)
		want := plan.InSlot
		if over {
			want = plan.InPlace
		}
		if r := p.Residence(cache, upd); r != want {
			t.Errorf("cache updated elementwise, overwritable %v: %v, want %v", over, r, want)
		}
		if err := runResident(g, p, cache, upd, p.Residence(cache, upd)); err != nil {
			t.Error(err)
		}
		if err := runResident(g, p, cache, nil, p.Residence(cache, nil)); err != nil {
			t.Error(err)
		}
	}
	// A view of the input as the fed output: already in place.
	g = graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	g.Output(g.Reshape(g.Reshape(x, 6), 2, 3))
	p = mustPlan(t, g, plan.Options{})
	if r := p.Residence(x, g.Outputs()[0]); r != plan.InPlace {
		t.Errorf("identity through views: %v, want in place", r)
	}
	if r := p.Residence(x, nil); r != plan.InSlot {
		t.Errorf("x read through views only: %v, want in slot", r)
	}
}
