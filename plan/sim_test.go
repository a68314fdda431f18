package plan_test

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// simulate runs the plan on tagged memory, an oracle independent of
// Check: every byte records which node last wrote it. Weights and graph
// inputs are written before step 0; each step first verifies that its
// inputs still hold what their producers wrote, then writes its own
// bytes (views write nothing), then verifies that it clobbered no input
// other than the one it overwrites in place. At the end every output
// must hold its value.
func simulate(g *graph.Graph, p *plan.Plan) error {
	arena := make([]int32, p.ArenaBytes)
	weights := make([]int32, p.WeightBytes)
	for i := range arena {
		arena[i] = -1
	}
	tag := make([]int32, len(g.Nodes)) // the node whose write holds each value
	mem := func(n *graph.Node) ([]int32, error) {
		s := p.Slots[n.ID]
		r := arena
		if s.Region == plan.Weights {
			r = weights
		}
		if s.Offset < 0 || s.Offset+s.Bytes > len(r) {
			return nil, fmt.Errorf("%s: [%d, %d) outside %v of %d bytes", n.Name, s.Offset, s.Offset+s.Bytes, s.Region, len(r))
		}
		if s.Bytes != n.Shape.NumElements()*n.DType.Size() {
			return nil, fmt.Errorf("%s: slot of %d bytes", n.Name, s.Bytes)
		}
		return r[s.Offset : s.Offset+s.Bytes], nil
	}
	write := func(n *graph.Node) error {
		m, err := mem(n)
		for i := range m {
			m[i] = int32(n.ID)
		}
		tag[n.ID] = int32(n.ID)
		return err
	}
	holds := func(n *graph.Node, when string) error {
		m, err := mem(n)
		if err != nil {
			return err
		}
		for i, v := range m {
			if v != tag[n.ID] {
				return fmt.Errorf("%s: %s of %s: byte %d holds node %d's data, want node %d's", when, n.Name, n.Op, i, v, tag[n.ID])
			}
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
		if n.Op.IsView() {
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
		inPlace := s.Alias != nil
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
