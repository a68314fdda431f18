package fuse

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// foldLimit is the largest folded result that may exceed its inputs: a
// fold that would blow a small constant up (Expand, Tile) into a large
// weight is left to run time, where it costs one step but no memory.
const foldLimit = 1 << 20

// foldConstants evaluates, at compile time and with the reference
// interpreter, every node whose inputs are all constants (seen through
// views), and replaces it by a Constant. Views of constants stay: they
// cost no step. In kiln's IR every shape is static, so shape arithmetic
// (Reshape targets, Expand shapes) is already resolved by the builder;
// what is left for folding is arithmetic on constant tensors, including
// the I64 index and shape tensors an importer emits.
func foldConstants(g *graph.Graph, log *Log) error {
	v, err := newView(g)
	if err != nil {
		return err
	}
	for _, n := range v.order {
		if n.Op.IsSource() || n.Op.IsView() || !v.live[n.ID] || len(n.Inputs) == 0 {
			continue
		}
		vals := make([]tensor.Tensor, len(n.Inputs))
		inBytes := 0
		all := true
		for i, in := range n.Inputs {
			t, ok := constValue(in)
			if !ok {
				all = false
				break
			}
			vals[i] = tensor.Tensor{DType: t.DType, Shape: in.Shape, Data: t.Data}
			inBytes += len(t.Data)
		}
		if !all {
			continue
		}
		outBytes := n.Shape.NumElements() * n.DType.Size()
		if outBytes > max(inBytes, foldLimit) {
			log.miss("%s: result of %d bytes from %d bytes of constants is too large to fold", n.Name, outBytes, inBytes)
			continue
		}
		t, err := evalConstNode(n, vals)
		if err != nil {
			log.miss("%s: not folded: %v", n.Name, err)
			continue
		}
		c := g.Constant(t)
		if err := g.Err(); err != nil {
			return err
		}
		if err := replace(g, n, c); err != nil {
			return err
		}
		log.fused("%s (%v) folded into %s", n.Name, n.Op, c.Name)
	}
	return nil
}

// evalConstNode runs n on constant values through ops.Interpret on a
// one-node graph, so errors stay off g.
func evalConstNode(n *graph.Node, vals []tensor.Tensor) (tensor.Tensor, error) {
	h := graph.New()
	ins := make([]*graph.Node, len(vals))
	for i, t := range vals {
		ins[i] = h.Constant(t)
	}
	y := h.Apply(n.Op, n.Attrs, ins...)
	h.Output(y)
	if err := h.Err(); err != nil {
		return tensor.Tensor{}, err
	}
	if y.DType != n.DType || !y.Shape.Equal(n.Shape) {
		return tensor.Tensor{}, fmt.Errorf("re-inferred %v%v, node has %v%v", y.DType, y.Shape, n.DType, n.Shape)
	}
	outs, err := ops.Interpret(h, nil)
	if err != nil {
		return tensor.Tensor{}, err
	}
	return outs[0], nil
}
