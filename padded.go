package kiln

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Outputs whose length depends on the data (NonMaxSuppression's selected
// boxes) are computed at a static upper bound, their rows past the result
// filled with -1 (graph.PaddedRows); so are outputs computed from such a
// selection row by row (the boxes gathered by the selected indices, see
// graph.PaddedSources), their rows past the result being filler. Run,
// RunTyped, Output and OutputTensor return only the result rows of such
// an output, counted on the selection itself (which the planner keeps to
// the end of the run); RunSlots' spans and Arena keep the whole padded
// buffer.

// paddedSources lists, per output of g, the padded node whose result rows
// the output's rows follow, or nil.
func paddedSources(g *graph.Graph) []*graph.Node {
	srcs, _ := graph.PaddedSources(g)
	var out []*graph.Node
	for _, o := range g.Outputs() {
		out = append(out, srcs[o])
	}
	return out
}

// checkPadded refuses a graph that reads a padded selection other than
// row by row (graph.CheckPadded), and one whose fusion (work is g fused)
// hid which outputs follow a selection, which would return filler rows.
func checkPadded(g, work *graph.Graph) error {
	if err := graph.CheckPadded(g); err != nil {
		return fmt.Errorf("kiln: Compile: %w", err)
	}
	before, after := paddedSources(g), paddedSources(work)
	for i := range before {
		if (before[i] == nil) != (i >= len(after) || after[i] == nil) {
			return fmt.Errorf("kiln: Compile: output %d follows the rows of %s, but the fused graph hides the link (a fusion pass merged a node kiln cannot trace rows through)",
				i, before[i].Name)
		}
	}
	return nil
}

// trimPadded views the result rows of output node o's value v: src is
// the padded node o's rows follow (nil: v unchanged), values holds the
// program's values by node ID (nil off the CPU, where only an output
// that is its own source is trimmed).
func trimPadded(o, src *graph.Node, v tensor.Tensor, values []tensor.Tensor) tensor.Tensor {
	if src == nil || v.Shape.Rank() == 0 {
		return v
	}
	var n int
	switch {
	case src == o:
		n = graph.ResultRows(v)
	case values != nil:
		n = graph.ResultRows(values[src.ID])
	default:
		return v
	}
	if n == v.Shape[0] {
		return v
	}
	s := v.Shape.Clone()
	s[0] = n
	return tensor.Tensor{DType: v.DType, Shape: s, Data: v.Data[:n*s[1:].NumElements()*v.DType.Size()]}
}
