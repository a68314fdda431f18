package graph

import "slices"

// Indexing ops: integer index tensors (I32 or I64) pick or place elements.
// Negative indices count from the end of their axis; an index out of
// range is a run-time error of the kernel (never a read or write outside
// the tensor).

// GatherElements picks, for every position of indices, the element of x
// at that position with the coordinate on axis replaced by the index
// (ONNX GatherElements, torch.gather). indices has x's rank; its dims
// other than axis may not exceed x's. The result has indices' shape.
func (g *Graph) GatherElements(x, indices *Node, axis int) *Node {
	return g.add(OpGatherElements, Attrs{Axis: axis}, x, indices)
}

// GatherND picks slices of x at index tuples (ONNX GatherND): the last
// dim k of indices holds coordinates into x's dims batchDims ..
// batchDims+k-1, and the first batchDims dims of indices and x are
// shared. The result is indices.shape[:-1] + x.shape[batchDims+k:].
func (g *Graph) GatherND(x, indices *Node, batchDims int) *Node {
	return g.add(OpGatherND, Attrs{BatchDims: batchDims}, x, indices)
}

// ScatterElements returns data with updates[p] written at p's position
// with the coordinate on axis replaced by indices[p] (ONNX
// ScatterElements); red combines it with the value there. indices and
// updates share one shape of data's rank, no larger than data's off axis.
// With ScatterNone and duplicate indices the last update in row-major
// order wins.
func (g *Graph) ScatterElements(data, indices, updates *Node, axis int, red ScatterReduction) *Node {
	return g.add(OpScatterElements, Attrs{Axis: axis, Reduction: red}, data, indices, updates)
}

// ScatterND returns data with update slices written at index tuples (ONNX
// ScatterND): the last dim k of indices holds coordinates into data's
// first k dims, and updates has shape indices.shape[:-1] + data.shape[k:].
// red combines each slice with the values there, in index order.
func (g *Graph) ScatterND(data, indices, updates *Node, red ScatterReduction) *Node {
	return g.add(OpScatterND, Attrs{Reduction: red}, data, indices, updates)
}

// IndexedDim reports whether input i of n holds indices (Gather's,
// GatherElements', ScatterElements', GatherND's and ScatterND's input 1)
// and the smallest size of the data dims they index: the values in [0,
// size) are valid for every position. Tools that invent inputs (random
// feeds, benchmarks) use it to keep made-up indices in range.
func IndexedDim(n *Node, i int) (int, bool) {
	if i != 1 || len(n.Inputs) < 2 || !n.Valid() {
		return 0, false
	}
	x, idx := n.Inputs[0].Shape, n.Inputs[1].Shape
	var dims []int
	switch n.Op {
	case OpGather, OpGatherElements, OpScatterElements:
		if n.Attrs.Axis < 0 || n.Attrs.Axis >= len(x) {
			return 0, false
		}
		dims = x[n.Attrs.Axis : n.Attrs.Axis+1]
	case OpGatherND, OpScatterND:
		if len(idx) == 0 {
			return 0, false
		}
		b, k := n.Attrs.BatchDims, idx[len(idx)-1]
		if b+k > len(x) {
			return 0, false
		}
		dims = x[b : b+k]
	default:
		return 0, false
	}
	if len(dims) == 0 {
		return 0, false
	}
	return slices.Min(dims), true
}
