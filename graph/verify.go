package graph

import (
	"errors"
	"fmt"
	"reflect"
)

// Verify checks that g is a well-formed DAG: every node belongs to g and
// is numbered by its position, names are unique, every input is a node of
// g (no dangling values), there are no cycles, sources look like sources,
// every op's dtype, shape and normalised attributes agree with inference,
// and there is at least one output. It returns every problem found, each
// naming its node.
func Verify(g *Graph) error {
	if g == nil {
		return errors.New("graph: nil graph")
	}
	if g.err != nil {
		return g.err
	}
	var errs []error
	bad := func(n *Node, format string, args ...any) {
		errs = append(errs, fmt.Errorf("graph: node %d %q (%v): %s", n.ID, n.Name, n.Op, fmt.Sprintf(format, args...)))
	}
	names := map[string]bool{}
	for i, n := range g.Nodes {
		if n == nil {
			errs = append(errs, fmt.Errorf("graph: node slot %d is nil", i))
			continue
		}
		if n.ID != i || n.graph != g {
			bad(n, "not owned by this graph at position %d", i)
		}
		if names[n.Name] {
			bad(n, "duplicate name")
		}
		names[n.Name] = true
		for j, in := range n.Inputs {
			if !g.owns(in) {
				bad(n, "input %d is not a node of this graph (dangling)", j)
			}
		}
		verifyNode(n, bad)
	}
	if len(errs) == 0 {
		if _, err := g.TopoOrder(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(g.outputs) == 0 {
		errs = append(errs, errors.New("graph: no outputs"))
	}
	for i, o := range g.outputs {
		if !g.owns(o) {
			errs = append(errs, fmt.Errorf("graph: output %d %q is not a node of this graph", i, g.outName[i]))
		}
	}
	return errors.Join(errs...)
}

func (g *Graph) owns(n *Node) bool {
	return n != nil && n.graph == g && n.ID >= 0 && n.ID < len(g.Nodes) && g.Nodes[n.ID] == n
}

func verifyNode(n *Node, bad func(*Node, string, ...any)) {
	switch {
	case n.Op.IsSource():
		if len(n.Inputs) != 0 {
			bad(n, "a source has inputs")
		}
		if err := n.Shape.Validate(); err != nil || !n.DType.Valid() {
			bad(n, "invalid dtype %v or shape %v", n.DType, n.Shape)
		}
		v := n.Value
		if n.Op == OpConstant && (v == nil || v.DType != n.DType || !v.Shape.Equal(n.Shape) ||
			len(v.Data) != n.Shape.NumElements()*n.DType.Size()) {
			bad(n, "constant value missing or not matching %v %v", n.DType, n.Shape)
		}
		return
	case n.Op == OpInvalid || n.Op >= numOps:
		bad(n, "invalid op")
		return
	}
	for i, in := range n.Inputs {
		if in == nil || !in.Valid() {
			bad(n, "input %d is invalid", i)
			return
		}
	}
	a := n.Attrs.clone()
	dt, s, err := infer(n.Op, &a, n.Inputs)
	switch {
	case err != nil:
		bad(n, "%v", err)
	case dt != n.DType || !s.Equal(n.Shape):
		bad(n, "records %v %v but inference gives %v %v", n.DType, n.Shape, dt, s)
	case !reflect.DeepEqual(a, n.Attrs):
		bad(n, "attributes %+v are not normalised (want %+v)", n.Attrs, a)
	}
}

// TopoOrder returns the nodes in an order where every node follows its
// inputs, or an error naming a node on a cycle.
func (g *Graph) TopoOrder() ([]*Node, error) {
	const (
		unseen = iota
		active
		done
	)
	state := make([]uint8, len(g.Nodes))
	order := make([]*Node, 0, len(g.Nodes))
	var visit func(n *Node) error
	visit = func(n *Node) error {
		switch state[n.ID] {
		case done:
			return nil
		case active:
			return fmt.Errorf("graph: cycle through node %d %q (%v)", n.ID, n.Name, n.Op)
		}
		state[n.ID] = active
		for _, in := range n.Inputs {
			if !g.owns(in) {
				return fmt.Errorf("graph: node %q has an input outside the graph", n.Name)
			}
			if err := visit(in); err != nil {
				return err
			}
		}
		state[n.ID] = done
		order = append(order, n)
		return nil
	}
	for i, n := range g.Nodes {
		if !g.owns(n) { // a bad ID would index state out of range
			return nil, fmt.Errorf("graph: node slot %d does not hold a node of this graph numbered %d", i, i)
		}
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return order, nil
}
