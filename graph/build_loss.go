package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// LossReduction is how a loss reduces its per-element values.
type LossReduction int

// The reductions of ONNX's loss ops.
const (
	LossMean LossReduction = iota // Σ loss / Σ applied weights (ONNX's default)
	LossSum
	LossNone // one loss per target element
)

// LossOpts configures NLLLoss and SoftmaxCrossEntropy.
type LossOpts struct {
	Reduction LossReduction
	// IgnoreIndex, when HasIgnore, is a target value whose elements
	// contribute nothing (zero loss, zero weight); it need not be a class.
	IgnoreIndex int64
	HasIgnore   bool
}

// NLLLoss is ONNX's NegativeLogLikelihoodLoss (inference form): x [N, C,
// d1…dk] holds log-probabilities, target [N, d1…dk] (I32 or I64) class
// indices in [0, C), weight (nil for ones) [C] class weights; the loss
// of an element is -x[n, target, d…]·weight[target], reduced as o says.
//
// It is a composition of kiln's ops rather than an op of its own: a loss
// ends a graph and is never on a hot path, so picking the target's entry
// through a one-hot mask (Equal against the class indices, Where,
// ReduceSum over C: C reads per element, exact, and NaN-free where other
// classes hold -Inf) costs nothing that matters, and every backend
// already runs every piece.
func (g *Graph) NLLLoss(x, target, weight *Node, o LossOpts) *Node {
	if g.err != nil {
		return &Node{Op: OpInvalid}
	}
	if err := checkLoss(x, target, weight); err != nil {
		return g.fail("NLLLoss: %v", err)
	}
	C := x.Shape[1]
	iotaShape := make(tensor.Shape, x.Shape.Rank())
	for i := range iotaShape {
		iotaShape[i] = 1
	}
	iotaShape[1] = C
	iota := make([]float64, C)
	for i := range iota {
		iota[i] = float64(i)
	}
	scalarOf := func(dt tensor.DType, v float64) *Node {
		t, err := tensor.FromFloat64s(dt, tensor.Shape{}, []float64{v})
		if err != nil {
			return g.fail("NLLLoss: %v", err)
		}
		return g.Constant(t)
	}
	classes, err := tensor.FromFloat64s(target.DType, iotaShape, iota)
	if err != nil {
		return g.fail("NLLLoss: %v", err)
	}
	var valid *Node // Bool [N, d…]: the element is not ignored
	safe := target  // the target with ignored elements pointing at class 0
	if o.HasIgnore {
		valid = g.Not(g.Equal(target, scalarOf(target.DType, float64(o.IgnoreIndex))))
		safe = g.Where(valid, target, scalarOf(target.DType, 0))
	}
	onehot := g.Equal(g.Unsqueeze(safe, 1), g.Constant(classes))
	zero := scalarOf(x.DType, 0)
	loss := g.Neg(g.ReduceSum(g.Where(onehot, x, zero), false, 1))
	var w *Node // the weight applied to each element; nil for ones
	switch {
	case weight != nil && valid != nil:
		w = g.Where(valid, g.Gather(weight, safe, 0), zero)
	case weight != nil:
		w = g.Gather(weight, safe, 0)
	case valid != nil:
		w = g.Cast(valid, x.DType)
	}
	if w != nil {
		loss = g.Mul(loss, w)
	}
	if valid != nil { // not 0·x: an ignored element's x may be ±Inf
		loss = g.Where(valid, loss, zero)
	}
	switch o.Reduction {
	case LossNone:
		return loss
	case LossSum:
		return g.ReduceSum(loss, false)
	case LossMean:
		if w == nil {
			return g.Div(g.ReduceSum(loss, false), scalarOf(x.DType, float64(target.Shape.NumElements())))
		}
		return g.Div(g.ReduceSum(loss, false), g.ReduceSum(w, false))
	}
	return g.fail("NLLLoss: reduction %d unknown", o.Reduction)
}

// SoftmaxCrossEntropy is ONNX's SoftmaxCrossEntropyLoss (inference form):
// NLLLoss of LogSoftmax(scores) over the class axis 1. It returns the
// loss and the log-probabilities.
func (g *Graph) SoftmaxCrossEntropy(scores, labels, weight *Node, o LossOpts) (loss, logProb *Node) {
	if g.err != nil {
		return &Node{Op: OpInvalid}, &Node{Op: OpInvalid}
	}
	if err := checkLoss(scores, labels, weight); err != nil {
		n := g.fail("SoftmaxCrossEntropy: %v", err)
		return n, n
	}
	logProb = g.LogSoftmax(scores, 1)
	return g.NLLLoss(logProb, labels, weight, o), logProb
}

// checkLoss checks the operands of the loss ops against each other.
func checkLoss(x, target, weight *Node) error {
	for _, n := range []*Node{x, target, weight} {
		if n != nil && !n.Valid() {
			return fmt.Errorf("an input is invalid")
		}
	}
	if x == nil || target == nil {
		return fmt.Errorf("the input and the target are required")
	}
	if !x.DType.IsFloat() || x.Shape.Rank() < 2 {
		return fmt.Errorf("input is %v %v, want a float tensor [N, C, d…]", x.DType, x.Shape)
	}
	want := append(tensor.Shape{x.Shape[0]}, x.Shape[2:]...)
	if (target.DType != tensor.I32 && target.DType != tensor.I64) || !target.Shape.Equal(want) {
		return fmt.Errorf("target is %v %v, want I32 or I64 %v", target.DType, target.Shape, want)
	}
	if weight != nil && (weight.DType != x.DType || !weight.Shape.Equal(tensor.Shape{x.Shape[1]})) {
		return fmt.Errorf("weight is %v %v, want %v [%d]", weight.DType, weight.Shape, x.DType, x.Shape[1])
	}
	return nil
}
