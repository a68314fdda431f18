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

// trimPadded views the result rows of output node o's value v: the rows
// before the first whose leading element is -1 (a result row starts with
// a batch index, never negative). Other outputs are returned unchanged.
func trimPadded(o *graph.Node, v tensor.Tensor) tensor.Tensor {
	if !graph.PaddedRows(o) || v.DType != tensor.I64 || v.Shape.Rank() == 0 {
		return v
	}
	rows, width := v.Shape[0], v.Shape[1:].NumElements()
	x := v.I64()
	n := 0
	for n < rows && width > 0 && x[n*width] != -1 {
		n++
	}
	if n == rows {
		return v
	}
	s := v.Shape.Clone()
	s[0] = n
	return tensor.Tensor{DType: v.DType, Shape: s, Data: v.Data[:n*width*v.DType.Size()]}
}
