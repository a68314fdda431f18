package fuse

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// view is a pass's picture of the graph: the schedule, every node's
// distinct live consumers, which nodes are outputs and which are live
// (reachable from an output). Passes rebuild it after each rewrite.
type view struct {
	g     *graph.Graph
	order []*graph.Node
	users [][]*graph.Node // by node ID
	out   []bool          // by node ID
	live  []bool          // by node ID
}

func newView(g *graph.Graph) (*view, error) {
	order, err := g.TopoOrder()
	if err != nil {
		return nil, err
	}
	v := &view{g: g, order: order, users: make([][]*graph.Node, len(g.Nodes)),
		out: make([]bool, len(g.Nodes)), live: make([]bool, len(g.Nodes))}
	for _, o := range g.Outputs() {
		v.out[o.ID] = true
	}
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		if v.out[n.ID] {
			v.live[n.ID] = true
		}
		if v.live[n.ID] {
			for _, in := range n.Inputs {
				v.live[in.ID] = true
			}
		}
	}
	// Only live consumers count: a node an earlier rewrite left dead
	// still names its inputs until the final prune, and must not stop a
	// fusion.
	for _, n := range g.Nodes {
		if !v.live[n.ID] {
			continue
		}
		for i, in := range n.Inputs {
			if !repeated(n.Inputs[:i], in) {
				v.users[in.ID] = append(v.users[in.ID], n)
			}
		}
	}
	return v, nil
}

func repeated(ns []*graph.Node, n *graph.Node) bool {
	for _, m := range ns {
		if m == n {
			return true
		}
	}
	return false
}

// sole is n's only consumer when n has exactly one and is not an output.
func (v *view) sole(n *graph.Node) *graph.Node {
	if u := v.users[n.ID]; len(u) == 1 && !v.out[n.ID] {
		return u[0]
	}
	return nil
}

// absorbable is the one legality predicate of every fusion: an
// intermediate n may disappear into a fused node when each of its
// consumers is part of the fused pattern (within), it is not a graph
// output, and its shape agrees with want (nil: not checked). Otherwise it
// returns why not, naming n.
func (v *view) absorbable(n *graph.Node, within func(*graph.Node) bool, want tensor.Shape) (bool, string) {
	switch {
	case v.out[n.ID]:
		return false, fmt.Sprintf("%s is a graph output", n.Name)
	case len(v.users[n.ID]) == 0:
		return false, fmt.Sprintf("%s has no consumer", n.Name)
	}
	for _, u := range v.users[n.ID] {
		if !within(u) {
			return false, fmt.Sprintf("%s has %d consumers", n.Name, len(v.users[n.ID]))
		}
	}
	if want != nil && !n.Shape.Equal(want) {
		return false, fmt.Sprintf("%s has shape %v, the fused result %v", n.Name, n.Shape, want)
	}
	return true, ""
}

// chainLink is absorbable for a linear chain: n's only consumer is next.
func (v *view) chainLink(n, next *graph.Node, want tensor.Shape) (bool, string) {
	return v.absorbable(n, func(u *graph.Node) bool { return u == next }, want)
}

// rewriteAll calls try on every live node in schedule order. After a
// rewrite (try returns true) the view is rebuilt and the sweep starts
// again, until a whole sweep rewrites nothing.
func rewriteAll(g *graph.Graph, try func(v *view, n *graph.Node) (bool, error)) error {
	for {
		v, err := newView(g)
		if err != nil {
			return err
		}
		changed := false
		for _, n := range v.order {
			if !v.live[n.ID] {
				continue
			}
			ok, err := try(v, n)
			if err != nil {
				return err
			}
			if ok {
				changed = true
				break
			}
		}
		if !changed {
			return nil
		}
	}
}

// replace makes every use of old (outputs included) use repl.
func replace(g *graph.Graph, old, repl *graph.Node) error {
	return g.ReplaceUses(old, repl)
}

// constValue is the value of a Constant, seen through views of it
// (Reshape, Squeeze, ...: same bytes, the view's shape).
func constValue(n *graph.Node) (tensor.Tensor, bool) {
	for n.Op.IsView() {
		n = n.Inputs[0]
	}
	if n.Op != graph.OpConstant || n.Value == nil {
		return tensor.Tensor{}, false
	}
	return *n.Value, true
}

// uniform returns the value every element of a float constant n holds,
// when there is at least one element and they are all equal.
func uniform(n *graph.Node) (float64, bool) {
	t, ok := constValue(n)
	if !ok || !t.DType.IsFloat() || t.NumElements() == 0 {
		return 0, false
	}
	vals := t.Float64s()
	for _, x := range vals[1:] {
		if x != vals[0] {
			return 0, false
		}
	}
	return vals[0], true
}

// keepsShape reports whether broadcasting c against x leaves x's shape.
func keepsShape(x, c *graph.Node) bool {
	s, err := tensor.Broadcast(x.Shape, c.Shape)
	return err == nil && s.Equal(x.Shape)
}

// names joins node names with " + " for the report; past eight nodes it
// gives the first six, the last and the count (a 25k-op chain is one
// region, and its report line must not be quadratic to build).
func names(ns ...*graph.Node) string {
	const most = 8
	var b strings.Builder
	for i, n := range ns {
		if len(ns) > most && i == most-2 {
			fmt.Fprintf(&b, " + … (%d more) + %s", len(ns)-most+1, ns[len(ns)-1].Name)
			break
		}
		if i > 0 {
			b.WriteString(" + ")
		}
		b.WriteString(n.Name)
	}
	return b.String()
}
