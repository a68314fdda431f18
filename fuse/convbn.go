package fuse

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// convBatchNorm folds an inference BatchNorm into the Conv2D or
// single-group ConvTranspose it follows (a generator's BatchNorm after
// each upsampling step):
//
//	s  = scale / sqrt(var + eps)                 per output channel
//	w' = w · s (over the output-channel axis: the first of a Conv2D's
//	           weights, the second of a ConvTranspose's)
//	b' = (b - mean) · s + bias                   (b = 0 without a conv bias)
//
// Weights are params set after compilation, so the fold is a rewrite into
// that arithmetic on the params: a subgraph of params and constants only,
// which constant folding finishes when they are constants and the
// executor otherwise evaluates once per weights change, not every run.
// The conv must have no other reader and every parameter must come from
// weights.
//
// A BatchNorm that follows no conv it can fold into (DenseNet's and
// pre-activation ResNets' BatchNorm after a Concat or an Add) becomes
// x·s + t per channel, with s and t computed from the params the same way,
// so that the elementwise pass fuses it with the activation after it.
func convBatchNorm(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		if n.Op != graph.OpBatchNorm {
			return false, nil
		}
		c := n.Inputs[0]
		if c.Op != graph.OpConv2D && (c.Op != graph.OpConvTranspose || c.Attrs.Groups > 1) {
			return batchNormAffine(g, n, log)
		}
		if ok, why := v.chainLink(c, n, nil); !ok {
			log.miss("%s: %s", names(c, n), why)
			return batchNormAffine(g, n, log)
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
	bias, mean := bn.Inputs[2], bn.Inputs[3]
	ws := conv.Inputs[1].Shape
	perChannel := make(tensor.Shape, ws.Rank()) // s over the weights' output-channel axis
	for i := range perChannel {
		perChannel[i] = 1
	}
	if conv.Op == graph.OpConvTranspose {
		perChannel[1] = ws[1]
	} else {
		perChannel[0] = ws[0]
	}
	op, s, fail := batchNormScale(g, bn)
	if *fail != nil {
		return nil, *fail
	}
	w := op(graph.OpMul, graph.Attrs{}, conv.Inputs[1], op(graph.OpReshape, graph.Attrs{Shape: perChannel}, s))
	var shift *graph.Node // (b - mean)·s
	if len(conv.Inputs) == 3 {
		shift = op(graph.OpMul, graph.Attrs{}, op(graph.OpSub, graph.Attrs{}, conv.Inputs[2], mean), s)
	} else {
		shift = op(graph.OpNeg, graph.Attrs{}, op(graph.OpMul, graph.Attrs{}, mean, s))
	}
	b := op(graph.OpAdd, graph.Attrs{}, shift, bias)
	f := op(conv.Op, conv.Attrs, conv.Inputs[0], w, b)
	return f, *fail
}

// inserter inserts a node into the graph, or does nothing once an insert
// has failed (the error is kept where batchNormScale's caller reads it).
type inserter func(o graph.Op, a graph.Attrs, ins ...*graph.Node) *graph.Node

// batchNormScale inserts s = scale / sqrt(var + eps) for bn and returns
// the inserter that did it, for the caller's further nodes, and the error
// slot they share.
func batchNormScale(g *graph.Graph, bn *graph.Node) (inserter, *graph.Node, *error) {
	fail := new(error)
	epsT, err := tensor.FromFloat64s(bn.DType, tensor.Shape{}, []float64{float64(bn.Attrs.Eps)})
	if err != nil {
		*fail = err
		return nil, nil, fail
	}
	eps := g.Constant(epsT)
	if err := g.Err(); err != nil {
		*fail = err
		return nil, nil, fail
	}
	op := func(o graph.Op, a graph.Attrs, ins ...*graph.Node) *graph.Node {
		if *fail != nil {
			return nil
		}
		var n *graph.Node
		n, *fail = g.Insert(o, a, ins...)
		return n
	}
	scale, variance := bn.Inputs[1], bn.Inputs[4]
	s := op(graph.OpDiv, graph.Attrs{}, scale, op(graph.OpSqrt, graph.Attrs{}, op(graph.OpAdd, graph.Attrs{}, variance, eps)))
	return op, s, fail
}

// batchNormAffine rewrites bn, whose params all come from weights, into
// x·s + (bias - mean·s) with s and the shift reshaped to [C, 1, ...]
// (broadcasting over the spatial dims).
func batchNormAffine(g *graph.Graph, bn *graph.Node, log *Log) (bool, error) {
	for _, p := range bn.Inputs[1:] {
		if !ops.FromWeights(p) {
			log.miss("%s: %s is not computed from weights", bn.Name, p.Name)
			return false, nil
		}
	}
	x := bn.Inputs[0]
	op, s, fail := batchNormScale(g, bn)
	if *fail != nil {
		log.miss("%s: %v", bn.Name, *fail)
		return false, nil
	}
	perChannel := make(tensor.Shape, x.Shape.Rank()-1)
	for i := range perChannel {
		perChannel[i] = 1
	}
	perChannel[0] = x.Shape[1]
	t := op(graph.OpSub, graph.Attrs{}, bn.Inputs[2], op(graph.OpMul, graph.Attrs{}, bn.Inputs[3], s))
	y := op(graph.OpAdd, graph.Attrs{},
		op(graph.OpMul, graph.Attrs{}, x, op(graph.OpReshape, graph.Attrs{Shape: perChannel}, s)),
		op(graph.OpReshape, graph.Attrs{Shape: perChannel.Clone()}, t))
	if *fail != nil {
		log.miss("%s: %v", bn.Name, *fail)
		return false, nil
	}
	if err := replace(g, bn, y); err != nil {
		return false, err
	}
	log.fused("%s → x·s + t per channel (params rewritten)", bn.Name)
	return true, nil
}
