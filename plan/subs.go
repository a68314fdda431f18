package plan

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
)

// Sub is the plan of a Loop node's body (graph.LoopSpec), laid inside the
// parent's regions: the body's arena is a block of the parent's arena
// live only during the Loop's step (so other values reuse those bytes
// before and after it), and the body's constants a block of the parent's
// weights. The executor runs the body as a program over those bytes.
type Sub struct {
	Plan    *Plan
	Step    int // schedule position of the Loop node in the parent
	Arena   int // offset of the body's arena in the parent's arena
	Weights int // offset of the body's weights in the parent's weights
}

// planSubs plans the body of every Loop node in order with the same
// options (bodies nest: a body's own Loops are planned inside it), puts
// each body's weights in p's weight region, and returns the arena blocks
// of the bodies, numbered from idBase so Make can tell them from values.
func (p *Plan) planSubs(order []*graph.Node, pos []int, opt Options, guard, idBase int) ([]block, error) {
	var blocks []block
	for _, n := range order {
		if n.Op != graph.OpLoop {
			continue
		}
		spec := n.Attrs.Loop
		if spec == nil || spec.Body == nil {
			return nil, fmt.Errorf("plan: %s has no body", n)
		}
		sp, err := Make(spec.Body, opt)
		if err != nil {
			return nil, fmt.Errorf("plan: body of %s: %w", n, err)
		}
		sub := &Sub{Plan: sp, Step: pos[n.ID], Weights: p.WeightBytes + guard}
		p.WeightBytes += alignUp(sp.WeightBytes) + 2*guard
		if p.Subs == nil {
			p.Subs = map[int]*Sub{}
		}
		p.Subs[n.ID] = sub
		p.subs = append(p.subs, sub)
		p.NaiveBytes += sp.NaiveBytes
		blocks = append(blocks, block{id: idBase + len(blocks), size: alignUp(sp.ArenaBytes) + 2*guard, start: sub.Step, end: sub.Step})
	}
	return blocks, nil
}

// subByBlock is the Sub whose arena is block k of planSubs' result.
func (p *Plan) subByBlock(k int) *Sub { return p.subs[k] }

// checkSubs checks that each body's regions lie inside the parent's and
// that a body's arena shares no byte with a buffer live at its Loop's
// step, then checks the body's own plan.
func (p *Plan) checkSubs(root []int) []error {
	var errs []error
	for id, sub := range p.Subs {
		sp, n := sub.Plan, p.g.Nodes[id]
		if err := sp.Check(); err != nil {
			errs = append(errs, fmt.Errorf("plan: body of %q: %w", n.Name, err))
		}
		if sub.Arena < 0 || sub.Arena+sp.ArenaBytes > p.ArenaBytes || sub.Weights < 0 || sub.Weights+sp.WeightBytes > p.WeightBytes {
			errs = append(errs, fmt.Errorf("plan: body of %q lies outside the parent's regions", n.Name))
			continue
		}
		for bid, r := range root {
			s := p.Slots[bid]
			if r != bid || s.Region != Arena || s.Bytes == 0 || s.Start > sub.Step || s.End < sub.Step {
				continue
			}
			if s.Offset < sub.Arena+sp.ArenaBytes && sub.Arena < s.Offset+s.Bytes {
				errs = append(errs, fmt.Errorf("plan: body of %q [%d, %d) shares bytes with %q [%d, %d), live at its step %d",
					n.Name, sub.Arena, sub.Arena+sp.ArenaBytes, p.g.Nodes[bid].Name, s.Offset, s.Offset+s.Bytes, sub.Step))
			}
		}
	}
	return errs
}
