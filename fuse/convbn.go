package fuse

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// convBatchNorm folds an inference BatchNorm into the Conv2D it follows:
//
//	s  = scale / sqrt(var + eps)                 per output channel
//	w' = w · s (over the output-channel axis)
//	b' = (b - mean) · s + bias                   (b = 0 without a conv bias)
//
// Weights are params set after compilation, so the fold is a rewrite into
// that arithmetic on the params: a subgraph of params and constants only,
// which constant folding finishes when they are constants and the
// executor otherwise evaluates once per weights change, not every run.
// The conv must have no other reader and every parameter must come from
// weights.
func convBatchNorm(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		if n.Op != graph.OpBatchNorm || n.Inputs[0].Op != graph.OpConv2D {
			return false, nil
		}
		c := n.Inputs[0]
		if ok, why := v.chainLink(c, n, nil); !ok {
			log.miss("%s: %s", names(c, n), why)
			return false, nil
		}
		for _, p := range append(append([]*graph.Node(nil), c.Inputs[1:]...), n.Inputs[1:]...) {
			if !ops.FromWeights(p) {
				log.miss("%s: %s is not computed from weights", names(c, n), p.Name)
				return false, nil
			}
		}
		f, err := foldBatchNorm(g, c, n)
		if err != nil {
			log.miss("%s: %v", names(c, n), err)
			return false, nil
		}
		if err := replace(g, n, f); err != nil {
			return false, err
		}
		log.fused("%s → %s (weights rewritten)", names(c, n), f.Name)
		return true, nil
	})
}

// foldBatchNorm inserts the weight arithmetic and the new conv.
func foldBatchNorm(g *graph.Graph, conv, bn *graph.Node) (*graph.Node, error) {
	scale, bias, mean, variance := bn.Inputs[1], bn.Inputs[2], bn.Inputs[3], bn.Inputs[4]
	dt := bn.DType
	m := conv.Inputs[1].Shape[0]
	epsT, err := tensor.FromFloat64s(dt, tensor.Shape{}, []float64{float64(bn.Attrs.Eps)})
	if err != nil {
		return nil, err
	}
	eps := g.Constant(epsT)
	if err := g.Err(); err != nil {
		return nil, err
	}
	var fail error
	op := func(o graph.Op, a graph.Attrs, ins ...*graph.Node) *graph.Node {
		if fail != nil {
			return nil
		}
		var n *graph.Node
		n, fail = g.Insert(o, a, ins...)
		return n
	}
	s := op(graph.OpDiv, graph.Attrs{}, scale, op(graph.OpSqrt, graph.Attrs{}, op(graph.OpAdd, graph.Attrs{}, variance, eps)))
	w := op(graph.OpMul, graph.Attrs{}, conv.Inputs[1], op(graph.OpReshape, graph.Attrs{Shape: tensor.Shape{m, 1, 1, 1}}, s))
	var shift *graph.Node // (b - mean)·s
	if len(conv.Inputs) == 3 {
		shift = op(graph.OpMul, graph.Attrs{}, op(graph.OpSub, graph.Attrs{}, conv.Inputs[2], mean), s)
	} else {
		shift = op(graph.OpNeg, graph.Attrs{}, op(graph.OpMul, graph.Attrs{}, mean, s))
	}
	b := op(graph.OpAdd, graph.Attrs{}, shift, bias)
	f := op(graph.OpConv2D, conv.Attrs, conv.Inputs[0], w, b)
	return f, fail
}
