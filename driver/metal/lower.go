package metal

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/msl"
	"github.com/kilnml/kiln/plan"
)

// Location is a place in a program's memory: a plan region (the arena or
// the weights) and a byte offset into it.
type Location struct {
	Region plan.Region
	Offset int
}

// Step is one dispatch of a lowered program: Kernel with its buffer
// arguments, in [[buffer(i)]] order.
type Step struct {
	Node   *graph.Node
	Kernel *msl.Kernel
	Args   []Location
}

// LowerOptions choose kernel variants.
type LowerOptions struct {
	SimdGroup bool // simdgroup_matrix GEMM (Apple7+ GPUs)
}

// Lower is the device-independent half of the backend's Lower: the MSL
// library and the dispatches, in order, for a fused and planned graph. It
// needs no Metal, so it runs (and is tested) on every OS.
func Lower(g *graph.Graph, p *plan.Plan, o LowerOptions) (library string, steps []Step, err error) {
	if len(p.Slots) != len(g.Nodes) {
		return "", nil, fmt.Errorf("metal: plan has %d slots for %d nodes", len(p.Slots), len(g.Nodes))
	}
	if err := p.Check(); err != nil {
		return "", nil, fmt.Errorf("metal: %w", err)
	}
	at := func(n *graph.Node) Location { s := p.Slots[n.ID]; return Location{s.Region, s.Offset} }
	var ks []*msl.Kernel
	for _, n := range p.Order {
		if n.Op.IsSource() || n.Shape.NumElements() == 0 || p.FreeView(n) {
			continue // memory, nothing, or its parent's bytes
		}
		// A view the plan gave its own buffer describes as a byte copy.
		k, ins, err := kdesc.Lower(fmt.Sprintf("k%d_%s", len(ks), n.Op), n, o.emit)
		if err != nil {
			return "", nil, fmt.Errorf("metal: lowering %s: %w", n, err)
		}
		args := []Location{at(n)}
		for _, in := range ins {
			args = append(args, at(in))
		}
		if len(args) != len(k.Buffers) {
			return "", nil, fmt.Errorf("metal: lowering %s: kernel has %d buffers for %d values", n, len(k.Buffers), len(args))
		}
		ks = append(ks, k)
		steps = append(steps, Step{Node: n, Kernel: k, Args: args})
	}
	return msl.Library(ks...), steps, nil
}

// emit writes a descriptor's kernel in the variants o chooses.
func (o LowerOptions) emit(d kdesc.Desc) (*msl.Kernel, error) {
	if g, ok := d.(*kdesc.Gemm); ok {
		g.SimdGroup = o.SimdGroup
	}
	return msl.Emit(d)
}
