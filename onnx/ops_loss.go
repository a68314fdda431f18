package onnx

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
)

func init() {
	register("NegativeLogLikelihoodLoss", 12, func(c *ctx) ([]*graph.Node, error) { return mapLoss(c, false) })
	register("SoftmaxCrossEntropyLoss", 12, func(c *ctx) ([]*graph.Node, error) { return mapLoss(c, true) })
}

// mapLoss maps the inference forms of NegativeLogLikelihoodLoss (inputs
// log-probabilities, target, weight) and SoftmaxCrossEntropyLoss (scores,
// labels, weight; outputs the loss and, optionally, the log-probabilities)
// onto graph.NLLLoss and graph.SoftmaxCrossEntropy, compositions of
// kiln's ops.
func mapLoss(c *ctx, softmax bool) ([]*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	target, err := c.need(1)
	if err != nil {
		return nil, err
	}
	if e, err := ops.Lookup(graph.OpReduceSum); err != nil || !e.Supports(x.DType) {
		return nil, unsupportedf("a loss on %v tensors", x.DType)
	}
	var o graph.LossOpts
	red, err := c.attrString("reduction", "mean")
	if err != nil {
		return nil, err
	}
	switch red {
	case "mean":
		o.Reduction = graph.LossMean
	case "sum":
		o.Reduction = graph.LossSum
	case "none":
		o.Reduction = graph.LossNone
	default:
		return nil, unsupportedf("attribute reduction %q (want none, sum or mean)", red)
	}
	if _, o.HasIgnore = c.attrs["ignore_index"]; o.HasIgnore {
		if o.IgnoreIndex, err = c.attrInt("ignore_index", 0); err != nil {
			return nil, err
		}
	}
	weight := c.in(2)
	if !softmax {
		return []*graph.Node{c.g.NLLLoss(x, target, weight, o)}, c.g.Err()
	}
	loss, logProb := c.g.SoftmaxCrossEntropy(x, target, weight, o)
	return []*graph.Node{loss, logProb}, c.g.Err()
}
