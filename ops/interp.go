package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Interpret evaluates g with the reference kernels. feeds holds a tensor
// for every input and param, by name; each must match the declared dtype
// and shape. The outputs come back in the order of g.Outputs().
func Interpret(g *graph.Graph, feeds map[string]tensor.Tensor) ([]tensor.Tensor, error) {
	if err := graph.Verify(g); err != nil {
		return nil, err
	}
	order, err := g.TopoOrder()
	if err != nil {
		return nil, err
	}
	for name := range feeds {
		if n, ok := g.Lookup(name); !ok || (n.Op != graph.OpInput && n.Op != graph.OpParam) {
			return nil, fmt.Errorf("interpret: %q is not an input or param of the graph", name)
		}
	}
	return evalGraph(g, order, func(n *graph.Node) (tensor.Tensor, bool) {
		t, ok := feeds[n.Name]
		return t, ok
	})
}

// evalGraph runs the nodes of g in order with the reference kernels,
// taking the value of each input and param from feed, and returns the
// outputs.
func evalGraph(g *graph.Graph, order []*graph.Node, feed func(*graph.Node) (tensor.Tensor, bool)) ([]tensor.Tensor, error) {
	vals := make([]tensor.Tensor, len(g.Nodes))
	for _, n := range order {
		v, err := evalNode(n, vals, feed)
		if err != nil {
			return nil, err
		}
		vals[n.ID] = v
	}
	outs := make([]tensor.Tensor, len(g.Outputs()))
	for i, o := range g.Outputs() {
		outs[i] = vals[o.ID]
	}
	return outs, nil
}

func evalNode(n *graph.Node, vals []tensor.Tensor, feed func(*graph.Node) (tensor.Tensor, bool)) (tensor.Tensor, error) {
	switch n.Op {
	case graph.OpConstant:
		return *n.Value, nil
	case graph.OpInput, graph.OpParam:
		t, ok := feed(n)
		if !ok {
			return tensor.Tensor{}, fmt.Errorf("interpret: no value for %v %q", n.Op, n.Name)
		}
		if t.DType != n.DType || !t.Shape.Equal(n.Shape) || len(t.Data) != n.Shape.NumElements()*n.DType.Size() {
			return tensor.Tensor{}, fmt.Errorf("interpret: %v %q wants %v%v, got %v%v (%d bytes)",
				n.Op, n.Name, n.DType, n.Shape, t.DType, t.Shape, len(t.Data))
		}
		return t, nil
	}
	k, err := PrepareReference(n)
	if err != nil {
		return tensor.Tensor{}, err
	}
	ins := make([]tensor.Tensor, len(n.Inputs))
	for i, in := range n.Inputs {
		ins[i] = vals[in.ID]
	}
	out, err := tensor.Make(n.DType, n.Shape)
	if err != nil {
		return tensor.Tensor{}, err
	}
	if err := k(ins, out); err != nil {
		return tensor.Tensor{}, fmt.Errorf("interpret: node %q (%v): %w", n.Name, n.Op, err)
	}
	return out, nil
}
