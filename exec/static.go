package exec

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// Static steps. A node computed from params and constants only (folded
// Conv+BatchNorm weights, a weight transposed or cast once) gives the same
// value on every run until a param is written, so its step runs on the
// first Run and then only when the weights version has moved since. The
// values such steps leave for later runs (those read by a non-static
// step) are kept in a buffer of the program outside the arena, since the
// planner reuses their arena slots between runs; static values read only
// by other static steps stay in the arena, produced and consumed within
// the same run as planned. Graph outputs are never static: they are read
// from the arena.

// staticNodes marks, by node ID, the non-source nodes whose inputs are all
// params, constants or static nodes, and that are not (views under) a
// graph output.
func staticNodes(g *graph.Graph, order []*graph.Node) []bool {
	// Outputs are pinned first, so that what reads a pinned node (a view
	// of an output, say) is not static either: it reads a value every run
	// recomputes, and a kept copy of it would never be refreshed.
	pinned := make([]bool, len(g.Nodes))
	for _, o := range g.Outputs() {
		for n := o; ; n = n.Inputs[0] {
			pinned[n.ID] = true
			if !n.Op.IsView() {
				break
			}
		}
	}
	static := make([]bool, len(g.Nodes))
	for _, n := range order {
		if n.Op.IsSource() || pinned[n.ID] {
			continue
		}
		ok := true
		for _, in := range n.Inputs {
			ok = ok && (in.Op == graph.OpParam || in.Op == graph.OpConstant || static[in.ID])
		}
		static[n.ID] = ok
	}
	return static
}

// keepStatic moves the static values later runs read out of the arena
// into pr.static and points pr.Values at them; a view of a kept value
// views its bytes. It returns the static marks for the steps.
func (pr *Program) keepStatic(p *plan.Plan) []bool {
	g := pr.Graph
	static := staticNodes(g, p.Order)
	keep := make([]bool, len(g.Nodes))
	for _, n := range p.Order {
		if static[n.ID] {
			continue
		}
		for _, in := range n.Inputs {
			if static[in.ID] {
				keep[in.ID] = true
			}
		}
	}
	// A kept view keeps the value it views, down to a real buffer.
	for i := len(p.Order) - 1; i >= 0; i-- {
		if n := p.Order[i]; keep[n.ID] && n.Op.IsView() && static[n.Inputs[0].ID] {
			keep[n.Inputs[0].ID] = true
		}
	}
	// A view of a param or constant (through any chain of views) already
	// reads the weight region, which runs never overwrite: nothing to keep.
	weightView := make([]bool, len(g.Nodes))
	for _, n := range p.Order {
		if n.Op.IsView() {
			in := n.Inputs[0]
			weightView[n.ID] = in.Op == graph.OpParam || in.Op == graph.OpConstant || weightView[in.ID]
			keep[n.ID] = keep[n.ID] && !weightView[n.ID]
		}
	}
	size := 0
	for _, n := range p.Order {
		if keep[n.ID] && !n.Op.IsView() {
			size += alignUp(n.Shape.NumElements() * n.DType.Size())
		}
	}
	pr.static = alignedBytes(size)
	off := 0
	for _, n := range p.Order {
		if !keep[n.ID] {
			continue
		}
		b := n.Shape.NumElements() * n.DType.Size()
		if n.Op.IsView() && keep[n.Inputs[0].ID] {
			pr.Values[n.ID] = tensor.Tensor{DType: n.DType, Shape: n.Shape, Data: pr.Values[n.Inputs[0].ID].Data}
			continue
		}
		pr.Values[n.ID] = tensor.Tensor{DType: n.DType, Shape: n.Shape, Data: pr.static[off : off+b : off+b]}
		off += alignUp(b)
	}
	// A free view shares its value's bytes wherever they now are: a view
	// that only static steps read is not kept itself, but its value may
	// have moved to pr.static above, and the view must follow it rather
	// than read the old arena slot, which no step writes any more (cmd/fuzz
	// seed 7730782863684993710). Order is topological, so chains follow.
	for _, n := range p.Order {
		if p.FreeView(n) {
			pr.Values[n.ID] = tensor.Tensor{DType: n.DType, Shape: n.Shape, Data: pr.Values[n.Inputs[0].ID].Data}
		}
	}
	return static
}

func alignUp(n int) int { return (n + 63) &^ 63 }

// staticFresh reports whether the static values are up to date for the
// weights version v (never when there is no version to compare with).
func (pr *Program) staticFresh() (v uint64, fresh bool) {
	if pr.version == nil {
		return 0, false
	}
	v = pr.version.Load()
	return v, pr.staticValid && pr.staticVersion == v
}
