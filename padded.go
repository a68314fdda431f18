package kiln

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Outputs whose length depends on the data (NonMaxSuppression's selected
// boxes) are computed at a static upper bound, their rows past the result
// filled with -1 (graph.PaddedRows). Run, RunTyped, Output and
// OutputTensor return only the result rows of such an output; RunSlots'
// spans and Arena keep the whole padded buffer, -1 rows included.

// trimPadded views the result rows of output node o's value v
// (graph.ResultRows). Other outputs are returned unchanged.
func trimPadded(o *graph.Node, v tensor.Tensor) tensor.Tensor {
	if !graph.PaddedRows(o) || v.DType != tensor.I64 || v.Shape.Rank() == 0 {
		return v
	}
	n := graph.ResultRows(v)
	if n == v.Shape[0] {
		return v
	}
	s := v.Shape.Clone()
	s[0] = n
	return tensor.Tensor{DType: v.DType, Shape: s, Data: v.Data[:n*s[1:].NumElements()*v.DType.Size()]}
}
