package conformance

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// compositeCases run the graph builder's compositions, which have no op
// of their own (graph.Recurrent for ONNX's RNN, GRU and LSTM;
// graph.NLLLoss and graph.SoftmaxCrossEntropy for the losses), on every
// backend: their rows are under the op that carries most of their work,
// whose tolerance they take. Each step of a recurrent layer feeds the
// next, so these check that every backend fuses and plans such chains
// (products whose residual is a slice of another, masks by run-time
// sequence lengths) as the reference runs them.
func compositeCases() []opCase {
	layer := func(cell graph.RNNCell, dir graph.RNNDirection, batchFirst bool) func(b *builder) {
		return func(b *builder) {
			const S, B, I, H = 3, 2, 5, 4
			g, D := cell.Gates(), 1
			if dir == graph.RNNBidirectional {
				D = 2
			}
			in := graph.RNNInputs{X: b.x(S, B, I), W: b.w(D, g*H, I), R: b.w(D, g*H, H), B: b.w(D, 2*g*H),
				SeqLens: b.ranged(tensor.I32, 0, S, B), H0: b.x(D, B, H)}
			if batchFirst {
				in.X, in.H0 = b.x(B, S, I), b.x(B, D, H)
			}
			if cell == graph.CellLSTM {
				in.C0, in.P = b.x(D, B, H), b.w(D, 3*H)
				if batchFirst {
					in.C0 = b.x(B, D, H)
				}
			}
			y, yh, yc := b.g.Recurrent(in, graph.RNNOpts{Cell: cell, Direction: dir, Hidden: H, Clip: 2.5,
				LinearBeforeReset: cell == graph.CellGRU && batchFirst, BatchFirst: batchFirst})
			b.out(y, yh)
			if yc != nil {
				b.out(yc)
			}
		}
	}
	loss := func(softmax bool, red graph.LossReduction, weight bool) func(b *builder) {
		return func(b *builder) {
			x, t := b.x(4, 5, 3), b.ranged(tensor.I64, 0, 4, 4, 3)
			var w *graph.Node
			if weight {
				w = b.value(false, tensor.F32, b.uniform(tensor.F32, 0.5, 2), 5)
			}
			o := graph.LossOpts{Reduction: red, IgnoreIndex: 2, HasIgnore: true}
			if softmax {
				l, lp := b.g.SoftmaxCrossEntropy(x, t, w, o)
				b.out(l, lp)
				return
			}
			b.out(b.g.NLLLoss(x, t, w, o))
		}
	}
	return []opCase{
		{graph.OpMatMul, "LSTM bidirectional (graph.Recurrent)", layer(graph.CellLSTM, graph.RNNBidirectional, false)},
		{graph.OpMatMul, "LSTM reverse batch-first", layer(graph.CellLSTM, graph.RNNReverse, true)},
		{graph.OpMatMul, "GRU bidirectional", layer(graph.CellGRU, graph.RNNBidirectional, false)},
		{graph.OpMatMul, "GRU linear before reset batch-first", layer(graph.CellGRU, graph.RNNForward, true)},
		{graph.OpMatMul, "RNN bidirectional", layer(graph.CellRNN, graph.RNNBidirectional, false)},
		{graph.OpReduceSum, "NLL loss none weight (graph.NLLLoss)", loss(false, graph.LossNone, true)},
		{graph.OpReduceSum, "NLL loss mean", loss(false, graph.LossMean, false)},
		{graph.OpLogSoftmax, "softmax cross-entropy sum weight", loss(true, graph.LossSum, true)},
	}
}
