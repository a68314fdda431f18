package exec

import (
	"bytes"
	"fmt"
	"sync/atomic"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// Mirror keeps a program that could not share a base program's weight
// region in step with it: Sync copies every param from the base's region.
// It is empty (Sync does nothing) when the region is shared.
type Mirror struct {
	pairs []mirrorPair
	base  *atomic.Uint64 // the base's weights version
	own   *atomic.Uint64 // the mirrored program's weights version
	seen  uint64         // base version at the last copy
}

type mirrorPair struct{ dst, src []byte }

// Shared reports whether the weights are shared, so nothing is copied.
func (m *Mirror) Shared() bool { return len(m.pairs) == 0 }

// Sync copies the base's params into the program when they changed since
// the last Sync, and then moves the program's own weights version so its
// kernels repack what they cached. It does not allocate.
func (m *Mirror) Sync() {
	if len(m.pairs) == 0 {
		return
	}
	v := m.base.Load()
	if v == m.seen && m.own.Load() != 0 {
		return
	}
	for _, p := range m.pairs {
		copy(p.dst, p.src)
	}
	m.seen = v
	m.own.Add(1)
}

// LowerShared lowers g like Lower, but over base's weight region when
// their layouts agree: every param and constant of g is a node of the
// same name, op, dtype and shape in base's graph, at the same offset, and
// constants hold the same bytes. Params set on base (before or after) are
// then seen by the new program without a copy, as with Clone. When the
// layouts differ the program gets its own region, constants are copied in,
// and the returned Mirror copies base's params over on every Sync.
func LowerShared(g *graph.Graph, p *plan.Plan, opt Options, base *Program) (*Program, *Mirror, error) {
	if base == nil || base.closed {
		return nil, nil, fmt.Errorf("exec: LowerShared: base program is nil or closed")
	}
	if len(p.Slots) != len(g.Nodes) {
		return nil, nil, fmt.Errorf("exec: plan has %d slots for %d nodes", len(p.Slots), len(g.Nodes))
	}
	if err := p.Check(); err != nil {
		return nil, nil, fmt.Errorf("exec: %w", err)
	}
	// Shared weights change only through base, so base's version counter
	// tells kernels and static steps when to refresh; a mirrored region
	// has its own counter, moved by Mirror.Sync after each copy.
	pr := &Program{Graph: g, Plan: p, opt: opt, version: base.version, sources: base.sources}
	m := &Mirror{}
	if sameWeights(g, p, base) {
		pr.Weights = base.Weights
	} else {
		pr.version = new(atomic.Uint64)
		m.base, m.own = base.version, pr.version
		pr.Weights = alignedBytes(p.WeightBytes)
		for _, n := range g.Nodes {
			s := p.Slots[n.ID]
			if s.Region != plan.Weights || s.Alias != nil {
				continue
			}
			dst := pr.Weights[s.Offset : s.Offset+s.Bytes]
			switch n.Op {
			case graph.OpConstant:
				copy(dst, n.Value.Data)
			case graph.OpParam:
				src, err := baseParam(base, n)
				if err != nil {
					return nil, nil, err
				}
				m.pairs = append(m.pairs, mirrorPair{dst: dst, src: src})
			}
		}
		copySubConstants(g, p, pr.Weights)
		m.Sync()
	}
	if err := pr.lowerSteps(); err != nil {
		return nil, nil, err
	}
	return pr, m, nil
}

// sameWeights reports whether g's weight layout is base's, node for node.
func sameWeights(g *graph.Graph, p *plan.Plan, base *Program) bool {
	if p.WeightBytes != len(base.Weights) {
		return false
	}
	for _, n := range g.Nodes {
		s := p.Slots[n.ID]
		if s.Region != plan.Weights || s.Alias != nil {
			continue
		}
		b, ok := base.Graph.Lookup(n.Name)
		if !ok || b.Op != n.Op || b.DType != n.DType || !b.Shape.Equal(n.Shape) {
			return false
		}
		bs := base.Plan.Slots[b.ID]
		if bs.Region != plan.Weights || bs.Alias != nil || bs.Offset != s.Offset || bs.Bytes != s.Bytes {
			return false
		}
		if n.Op == graph.OpConstant && !bytes.Equal(n.Value.Data, base.Weights[s.Offset:s.Offset+s.Bytes]) {
			return false
		}
	}
	return true
}

// baseParam finds the bytes of base's param of the same name and type.
func baseParam(base *Program, n *graph.Node) ([]byte, error) {
	b, ok := base.Graph.Lookup(n.Name)
	if !ok || b.Op != graph.OpParam || b.DType != n.DType || !b.Shape.Equal(n.Shape) {
		return nil, fmt.Errorf("exec: LowerShared: param %s has no match in the base program", n)
	}
	return base.Values[b.ID].Data, nil
}
