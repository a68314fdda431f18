package exec

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// Loops (graph.OpLoop). A Loop node's body runs as a program of its own,
// lowered like any other (fast kernels, static steps, guards) over the
// blocks the planner reserved for it (plan.Sub): its arena is a block of
// the parent's arena live only during the Loop's step, its constants a
// block of the parent's weights. ops.LoopDriver runs the iterations: each
// copies the body's inputs into the body program's input slots and runs
// its steps; the driver copies the carried values and scan rows out of
// its output slots into the Loop's packed value.

// prepareLoop lowers the body of Loop node n and returns the Loop's
// kernel.
func (pr *Program) prepareLoop(n *graph.Node) (ops.Kernel, string, error) {
	sub := pr.Plan.Subs[n.ID]
	if sub == nil {
		return nil, "", fmt.Errorf("the plan has no body plan for the loop (plan.Make plans bodies)")
	}
	body, sp := n.Attrs.Loop.Body, sub.Plan
	if sub.Arena+sp.ArenaBytes > len(pr.Arena) || sub.Weights+sp.WeightBytes > len(pr.Weights) {
		return nil, "", fmt.Errorf("the body's plan lies outside the program's regions")
	}
	c := &Program{Graph: body, Plan: sp, opt: pr.opt, version: pr.version, sources: pr.sources, runner: pr.runner, isBody: true,
		Arena:   pr.Arena[sub.Arena : sub.Arena+sp.ArenaBytes : sub.Arena+sp.ArenaBytes],
		Weights: pr.Weights[sub.Weights : sub.Weights+sp.WeightBytes : sub.Weights+sp.WeightBytes]}
	if err := planFits(body, sp); err != nil {
		return nil, "", fmt.Errorf("body: %w", err)
	}
	if err := c.lowerSteps(); err != nil {
		return nil, "", fmt.Errorf("body: %w", err)
	}
	d, err := ops.NewLoopDriver(n)
	if err != nil {
		return nil, "", err
	}
	slots := make([]tensor.Tensor, len(body.Inputs()))
	for i, in := range body.Inputs() {
		slots[i] = c.Values[in.ID]
	}
	outs := make([]tensor.Tensor, len(body.Outputs()))
	for i, o := range body.Outputs() {
		outs[i] = c.Values[o.ID]
	}
	run := func(xs []tensor.Tensor) ([]tensor.Tensor, error) {
		for i, x := range xs {
			copy(slots[i].Data, x.Data)
		}
		if err := c.Run(); err != nil {
			return nil, err
		}
		return outs, nil
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error { return d.Run(ins, out, run) }, "loop", nil
}

// copySubConstants copies the constants of every Loop body planned in p
// (nested bodies included) into their blocks of weights, the parent
// program's weight region.
func copySubConstants(g *graph.Graph, p *plan.Plan, weights []byte) {
	for id, sub := range p.Subs {
		body, sp := g.Nodes[id].Attrs.Loop.Body, sub.Plan
		w := weights[sub.Weights : sub.Weights+sp.WeightBytes]
		for _, n := range body.Nodes {
			if s := sp.Slots[n.ID]; n.Op == graph.OpConstant && s.Region == plan.Weights && s.Alias == nil {
				copy(w[s.Offset:s.Offset+s.Bytes], n.Value.Data)
			}
		}
		copySubConstants(body, sp, w)
	}
}
