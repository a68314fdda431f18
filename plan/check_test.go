package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// TestCheckCatches breaks a sound plan in one way at a time and expects
// Check to name the problem.
func TestCheckCatches(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 100)
	a := g.Exp(x)                 // 1
	v := g.Reshape(a, 10, 10)     // 2
	b := g.Exp(g.Reshape(v, 100)) // 3, 4
	c := g.Add(b, a)              // 5: a is read at the end, b dies here
	g.Output(c)
	good, err := plan.Make(g, plan.Options{InPlace: never})
	if err != nil {
		t.Fatal(err)
	}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		break_ func(p *plan.Plan)
		want   string
	}{
		{"live buffers share bytes", func(p *plan.Plan) {
			p.Slots[b.ID].Offset = p.Slots[a.ID].Offset
		}, "share bytes"},
		{"misaligned", func(p *plan.Plan) { p.Slots[b.ID].Offset += 8 }, "aligned"},
		{"outside the arena", func(p *plan.Plan) { p.Slots[c.ID].Offset = p.ArenaBytes }, "outside"},
		{"lifetime too short", func(p *plan.Plan) { p.Slots[a.ID].End = 3 }, "lives over"},
		{"view with its own buffer", func(p *plan.Plan) { p.Slots[v.ID].Alias = nil }, "view with its own buffer"},
		{"view somewhere else", func(p *plan.Plan) { p.Slots[v.ID].Offset += 64 }, "alias at"},
		{"wrong size", func(p *plan.Plan) { p.Slots[x.ID].Bytes = 4 }, "slot holds"},
		{"in place over a value read later", func(p *plan.Plan) {
			p.Slots[b.ID] = p.Slots[g.Nodes[b.Inputs[0].ID].ID]
			p.Slots[b.ID].Alias = b.Inputs[0]
			p.Slots[b.ID].Start, p.Slots[b.ID].End = 4, 5
		}, "in place"},
		{"in place over a graph input", func(p *plan.Plan) {
			off := p.Slots[x.ID].Offset
			p.Slots[x.ID].End = 5
			p.Slots[a.ID] = plan.Slot{Offset: off, Bytes: 400, Alias: x, Start: 1, End: 5}
			p.Slots[v.ID].Offset = off
			p.Slots[b.Inputs[0].ID].Offset = off
		}, "in place over Input"},
		{"input in the weights region", func(p *plan.Plan) { p.Slots[x.ID].Region = plan.Weights }, "region"},
		{"schedule out of order", func(p *plan.Plan) {
			p.Order = slices.Clone(p.Order)
			p.Order[1], p.Order[2] = p.Order[2], p.Order[1]
		}, "before its input"},
		{"lower bound above the arena", func(p *plan.Plan) { p.LowerBound = p.ArenaBytes + 1 }, "lower bound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := *good
			p.Slots = slices.Clone(good.Slots)
			c.break_(&p)
			err := p.Check()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check = %v, want an error containing %q", err, c.want)
			}
		})
	}
	if err := (&plan.Plan{}).Check(); err == nil {
		t.Error("a plan not made by Make passed Check")
	}
}
