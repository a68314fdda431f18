package graph

import "fmt"

// Apply adds a node of any op: the generic form of the builder methods,
// for importers and passes. Attributes are normalised and checked exactly
// as the builder does; Reshape and Slice take resolved attributes (see
// Verify).
func (g *Graph) Apply(op Op, a Attrs, ins ...*Node) *Node {
	if op.IsSource() || op == OpInvalid {
		return g.fail("Apply: %v is not an op with inputs", op)
	}
	return g.add(op, a, ins...)
}

// SetInput rewires input i of n to v. It does not re-run inference: call
// Verify after a pass. It may create a cycle, which Verify reports.
func (g *Graph) SetInput(n *Node, i int, v *Node) error {
	if !g.owns(n) || !g.owns(v) {
		return fmt.Errorf("graph: SetInput: node not in this graph")
	}
	if i < 0 || i >= len(n.Inputs) {
		return fmt.Errorf("graph: SetInput: %s has no input %d", n, i)
	}
	n.Inputs[i] = v
	return nil
}

// ReplaceUses makes every consumer of old, and every output slot holding
// old, use repl instead. The two must have the same dtype and shape.
func (g *Graph) ReplaceUses(old, repl *Node) error {
	if !g.owns(old) || !g.owns(repl) {
		return fmt.Errorf("graph: ReplaceUses: node not in this graph")
	}
	if old.DType != repl.DType || !old.Shape.Equal(repl.Shape) {
		return fmt.Errorf("graph: ReplaceUses: %s and %s differ in dtype or shape", old, repl)
	}
	for _, n := range g.Nodes {
		for i, in := range n.Inputs {
			if in == old && n != repl {
				n.Inputs[i] = repl
			}
		}
	}
	for i, o := range g.outputs {
		if o == old {
			g.outputs[i] = repl
		}
	}
	return nil
}

// Prune removes nodes that no output depends on (inputs and params are
// kept: they are part of the graph's interface) and renumbers the rest in
// topological order.
func (g *Graph) Prune() error {
	order, err := g.TopoOrder()
	if err != nil {
		return err
	}
	live := map[*Node]bool{}
	var mark func(n *Node)
	mark = func(n *Node) {
		if live[n] {
			return
		}
		live[n] = true
		for _, in := range n.Inputs {
			mark(in)
		}
	}
	for _, o := range g.outputs {
		mark(o)
	}
	kept := order[:0]
	for _, n := range order {
		if live[n] || n.Op == OpInput || n.Op == OpParam {
			n.ID = len(kept)
			kept = append(kept, n)
		} else {
			delete(g.names, n.Name)
			n.graph = nil // the builder must refuse it from now on
		}
	}
	g.Nodes = kept
	return nil
}

// Uses counts, for every node ID, how many inputs and outputs refer to it.
func (g *Graph) Uses() []int {
	uses := make([]int, len(g.Nodes))
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			uses[in.ID]++
		}
	}
	for _, o := range g.outputs {
		uses[o.ID]++
	}
	return uses
}

// Clone deep-copies the graph: nodes, attributes, constant values, names,
// inputs, params and outputs. Passes work on a clone so that the caller's
// graph is never changed by compilation.
func (g *Graph) Clone() *Graph {
	c := &Graph{names: map[string]*Node{}, err: g.err, outName: append([]string(nil), g.outName...)}
	m := make(map[*Node]*Node, len(g.Nodes))
	for _, n := range g.Nodes {
		cp := *n
		cp.graph = c
		cp.Attrs = n.Attrs.clone()
		cp.Shape = n.Shape.Clone()
		if n.Value != nil {
			v := n.Value.Clone()
			cp.Value = &v
		}
		m[n] = &cp
		c.Nodes = append(c.Nodes, &cp)
		c.names[cp.Name] = &cp
	}
	for _, n := range c.Nodes {
		ins := make([]*Node, len(n.Inputs))
		for i, in := range n.Inputs {
			if ins[i] = m[in]; ins[i] == nil {
				ins[i] = in // dangling: keep it so Verify reports it
			}
		}
		n.Inputs = ins
	}
	remap := func(ns []*Node) []*Node {
		out := make([]*Node, len(ns))
		for i, n := range ns {
			out[i] = m[n]
		}
		return out
	}
	c.inputs, c.params, c.outputs = remap(g.inputs), remap(g.params), remap(g.outputs)
	return c
}
