package cuda

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/ptx"
)

// ref locates a value in device memory: a plan region and byte offset.
type ref struct {
	region plan.Region
	offset int
}

// stepPlan is one step of a lowered program before any device exists:
// a kernel launch (kernel non-nil) with its pointer arguments, or a
// device-to-device copy of bytes (a view the planner did not alias).
type stepPlan struct {
	node   *graph.Node
	kernel *ptx.Kernel
	ptrs   []ref // the kernel's parameters, all device pointers, in order
	copyTo ref   // for copies
	copyFr ref
	bytes  int
	custom *customStep // a user's kernel (custom.go); nil for kiln's own
}

// lowered is a program's device-independent part: the steps and the PTX
// module holding every kernel.
type lowered struct {
	steps  []stepPlan
	module string
	moe    []moeLayer // the OpMoE steps' residency plans, forward order (moe.go)
	cut    weightCut  // the weight region without splittable layers' experts
}

// lowerGraph picks and emits a kernel for every node in schedule order.
func lowerGraph(g *graph.Graph, p *plan.Plan) (*lowered, error) {
	if len(p.Slots) != len(g.Nodes) {
		return nil, fmt.Errorf("cuda: plan has %d slots for %d nodes", len(p.Slots), len(g.Nodes))
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	at := func(n *graph.Node) ref { s := p.Slots[n.ID]; return ref{s.Region, s.Offset} }
	lw := &lowered{}
	var ks []*ptx.Kernel
	for _, n := range p.Order {
		if n.Op.IsSource() || p.FreeView(n) {
			continue // memory, or its parent's bytes
		}
		if n.Op.IsView() {
			lw.steps = append(lw.steps, stepPlan{node: n, copyTo: at(n), copyFr: at(n.Inputs[0]), bytes: p.Slots[n.ID].Bytes})
			continue
		}
		if n.Shape.NumElements() == 0 {
			continue // nothing to compute
		}
		if n.Op == graph.OpCustom { // the user's kernel, in its own module
			st, err := lowerCustom(n, at)
			if err != nil {
				return nil, err
			}
			lw.steps = append(lw.steps, st)
			continue
		}
		name := fmt.Sprintf("k%d_%s", len(ks), n.Op)
		k, ins, err := ptx.EmitNode(name, n)
		if err != nil {
			return nil, fmt.Errorf("cuda: lowering %s: %w", n, err)
		}
		ptrs := []ref{at(n)}
		for _, in := range ins {
			ptrs = append(ptrs, at(in))
		}
		if len(ptrs) != len(k.Params) {
			return nil, fmt.Errorf("cuda: lowering %s: kernel has %d parameters for %d pointers", n, len(k.Params), len(ptrs))
		}
		ks = append(ks, k)
		lw.steps = append(lw.steps, stepPlan{node: n, kernel: k, ptrs: ptrs})
	}
	ks, err := planMoE(g, p, lw, ks)
	if err != nil {
		return nil, err
	}
	lw.module = ptx.Module(ks...)
	return lw, nil
}
