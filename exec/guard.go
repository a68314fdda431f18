package exec

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// Guard mode (plan.Options.Guard, KILN_DEBUG=guard): the planner leaves a
// zone before and after every root buffer, and the program fills those
// zones, plus the slack up to the buffer's aligned size, with canary
// bytes. After every step it checks the canaries of every buffer live at
// that step, so a kernel writing out of bounds is named by the step that
// did it rather than by whatever later read the damage.

// guardZone is one buffer's two canary ranges: [lo, lo+pre) before the
// value and [hi, hi+post) after it, in its region.
type guardZone struct {
	node       *graph.Node
	region     []byte
	lo, pre    int
	hi, post   int
	start, end int // schedule positions the buffer is live over
	pattern    byte
	weight     bool // in the shared weight region: filled once, never refilled
}

// canary is the byte expected at offset i of a zone: position-dependent,
// so a kernel that copies one guard zone over another is caught too.
func (z *guardZone) canary(i int) byte { return z.pattern ^ byte(i*131) }

func (z *guardZone) fill() {
	for i := range z.pre {
		z.region[z.lo+i] = z.canary(i)
	}
	for i := range z.post {
		z.region[z.hi+i] = z.canary(z.pre + i)
	}
}

// damaged returns the first offset (relative to the value's start,
// negative before it) whose canary changed, and whether there is one.
func (z *guardZone) damaged() (int, bool) {
	for i := range z.pre {
		if z.region[z.lo+i] != z.canary(i) {
			return i - z.pre, true
		}
	}
	for i := range z.post {
		if z.region[z.hi+i] != z.canary(z.pre+i) {
			return z.hi + i - (z.lo + z.pre), true
		}
	}
	return 0, false
}

// guards is a program's canary bookkeeping: the zones and, by schedule
// position, the position of every step.
type guards struct {
	zones []guardZone
	pos   []int // by node ID
}

// setupGuards builds the zones of a guarded plan (nil when not guarded)
// and fills the weight zones, which nothing may write.
func (pr *Program) setupGuards() *guards {
	p := pr.Plan
	if p.Guard <= 0 {
		return nil
	}
	gd := &guards{pos: make([]int, len(pr.Graph.Nodes))}
	for i, n := range p.Order {
		gd.pos[n.ID] = i
	}
	for _, n := range p.Order {
		s := p.Slots[n.ID]
		if s.Alias != nil {
			continue
		}
		region := pr.Arena
		if s.Region == plan.Weights {
			region = pr.Weights
		}
		aligned := (s.Bytes + plan.Align - 1) &^ (plan.Align - 1)
		z := guardZone{node: n, region: region, lo: s.Offset - p.Guard, pre: p.Guard,
			hi: s.Offset + s.Bytes, post: aligned - s.Bytes + p.Guard,
			start: s.Start, end: s.End, pattern: byte(0xA5 ^ n.ID)}
		if z.lo < 0 || z.hi+z.post > len(region) {
			continue // not a plan made with this guard; nothing to check
		}
		if s.Region == plan.Weights {
			z.start, z.end, z.weight = 0, len(p.Order), true
			if _, bad := z.damaged(); bad { // clones share the weights: write once
				z.fill()
			}
		}
		gd.zones = append(gd.zones, z)
	}
	return gd
}

// begin fills the zones of the arena buffers that become live at
// schedule position pos (all those live from the start when pos is 0):
// until then their bytes may have belonged to another buffer.
func (gd *guards) begin(pos int) {
	for i := range gd.zones {
		if z := &gd.zones[i]; z.start == pos && !z.weight {
			z.fill()
		}
	}
}

// check verifies the zones of every buffer live at position pos after
// step i ran, naming the step in the error.
func (gd *guards) check(i int, s *Step, pos int) error {
	for k := range gd.zones {
		z := &gd.zones[k]
		if z.start > pos || z.end < pos {
			continue
		}
		if off, bad := z.damaged(); bad {
			where := "after"
			if off < 0 {
				where = "before"
			}
			return fmt.Errorf("exec: guard: step %d %s wrote out of bounds: byte %d of %s's buffer (%d bytes) changed, %s the value",
				i, s.Node, off, z.node, z.hi-z.lo-z.pre, where)
		}
	}
	return nil
}

// runGuarded is Run with canaries checked after every step.
func (pr *Program) runGuarded(fresh bool) error {
	gd := pr.guard
	gd.begin(0)
	for i := range pr.Steps {
		s := &pr.Steps[i]
		pos := gd.pos[s.Node.ID]
		if pos > 0 {
			gd.begin(pos)
		}
		if s.Static && fresh {
			continue
		}
		if err := s.Kernel(s.Ins, s.Out); err != nil {
			return fmt.Errorf("exec: step %d %s: %w", i, s.Node, err)
		}
		if err := gd.check(i, s, pos); err != nil {
			return err
		}
	}
	return nil
}
