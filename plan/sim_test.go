package plan_test

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// simulate runs the plan on tagged memory, an oracle independent of
// Check: every byte records which node last wrote it. Weights and graph
// inputs are written before step 0; each step first verifies that its
// inputs still hold what their producers wrote, then writes its own
// bytes (views and joined concats write nothing), then verifies that it
// clobbered no input other than the one it overwrites in place. A joined
// concat's value is its inputs' values, each where the concat has it. At
// the end every output must hold its value.
func simulate(g *graph.Graph, p *plan.Plan) error {
	mem := [2]*tagged{{}, {}}        // by region
	tag := make([]int, len(g.Nodes)) // the node whose write holds each value
	where := func(n *graph.Node) (*tagged, int, int, error) {
		s := p.Slots[n.ID]
		size := p.ArenaBytes
		if s.Region == plan.Weights {
			size = p.WeightBytes
		}
		if s.Region > plan.Weights || s.Offset < 0 || s.Offset+s.Bytes > size {
			return nil, 0, 0, fmt.Errorf("%s: [%d, %d) outside %v of %d bytes", n.Name, s.Offset, s.Offset+s.Bytes, s.Region, size)
		}
		if s.Bytes != n.Shape.NumElements()*n.DType.Size() {
			return nil, 0, 0, fmt.Errorf("%s: slot of %d bytes", n.Name, s.Bytes)
		}
		return mem[s.Region], s.Offset, s.Offset + s.Bytes, nil
	}
	write := func(n *graph.Node) error {
		m, lo, hi, err := where(n)
		if err == nil {
			m.write(lo, hi, n.ID)
		}
		tag[n.ID] = n.ID
		return err
	}
	var holds func(n *graph.Node, when string) error
	holds = func(n *graph.Node, when string) error {
		m, lo, hi, err := where(n)
		if err != nil {
			return err
		}
		v := n
		for v.Op.IsView() {
			v = v.Inputs[0]
		}
		if p.Slots[v.ID].Joined { // its inputs' bytes, back to back
			at := lo
			for _, in := range v.Inputs {
				si := p.Slots[in.ID]
				if si.Region != p.Slots[n.ID].Region || si.Offset != at {
					return fmt.Errorf("%s: %s of joined %s: input %s at %v+%d, want +%d", when, n.Name, v.Name, in.Name, si.Region, si.Offset, at)
				}
				if err := holds(in, when); err != nil {
					return err
				}
				at += si.Bytes
			}
			if at != hi {
				return fmt.Errorf("%s: joined %s: inputs end at %d, the value at %d", when, v.Name, at, hi)
			}
			return nil
		}
		if at, got, ok := m.holds(lo, hi, tag[n.ID]); !ok {
			return fmt.Errorf("%s: %s of %s: byte %d holds node %d's data, want node %d's", when, n.Name, n.Op, at, got, tag[n.ID])
		}
		return nil
	}
	for _, n := range g.Nodes {
		if n.Op.IsSource() {
			if err := write(n); err != nil {
				return err
			}
		}
	}
	for _, n := range p.Order {
		if n.Op.IsSource() {
			continue
		}
		for _, in := range n.Inputs {
			if err := holds(in, "before "+n.Name); err != nil {
				return err
			}
		}
		if n.Op.IsView() || p.Slots[n.ID].Joined {
			tag[n.ID] = tag[n.Inputs[0].ID]
			if err := holds(n, "view"); err != nil {
				return err
			}
			continue
		}
		if err := write(n); err != nil {
			return err
		}
		s := p.Slots[n.ID]
		inPlace := s.Alias != nil && s.Alias == n.Inputs[0]
		for _, in := range n.Inputs {
			si := p.Slots[in.ID]
			if inPlace && si.Region == s.Region && si.Offset == s.Offset {
				continue // read and overwritten by this very step
			}
			if err := holds(in, "after "+n.Name); err != nil {
				return err
			}
		}
	}
	for _, o := range g.Outputs() {
		if err := holds(o, "at the end"); err != nil {
			return err
		}
	}
	return nil
}

// tagged is memory as sorted, disjoint byte ranges, each remembering the
// node that wrote it; bytes never written hold node -1.
type tagged struct{ segs []seg }

type seg struct{ lo, hi, tag int }

func (m *tagged) write(lo, hi, tag int) {
	if lo == hi {
		return
	}
	var out []seg
	for _, s := range m.segs {
		if s.hi <= lo || s.lo >= hi {
			out = append(out, s)
			continue
		}
		if s.lo < lo {
			out = append(out, seg{s.lo, lo, s.tag})
		}
		if s.hi > hi {
			out = append(out, seg{hi, s.hi, s.tag})
		}
	}
	out = append(out, seg{lo, hi, tag})
	slices.SortFunc(out, func(a, b seg) int { return a.lo - b.lo })
	m.segs = out
}

// holds reports whether every byte of [lo, hi) was last written by tag,
// or else the first byte that was not and who wrote it.
func (m *tagged) holds(lo, hi, tag int) (at, got int, ok bool) {
	cover := lo
	for _, s := range m.segs {
		if cover >= hi {
			break
		}
		if s.hi <= cover {
			continue
		}
		if s.lo > cover {
			return cover, -1, false
		}
		if s.tag != tag {
			return max(cover, s.lo), s.tag, false
		}
		cover = s.hi
	}
	if cover < hi {
		return cover, -1, false
	}
	return 0, 0, true
}
