package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Indexing describes GatherElements, GatherND, ScatterElements and
// ScatterND: Data and Indices are the input shapes, Index their index
// dtype (I32 or I64). Axis is the elements ops', BatchDims GatherND's,
// Reduction the scatters'. A scatter writes Data's shape; a kernel for
// it must apply duplicate indices in order (or atomically, for the
// reductions) and report an index out of range, which the CPU kernels
// do as a run-time error.
type Indexing struct {
	Name      string
	Op        graph.Op
	DType     tensor.DType
	Index     tensor.DType
	Data      []int
	Indices   []int
	Axis      int
	BatchDims int
	Reduction graph.ScatterReduction
}

// IndexingOf describes an indexing node.
func IndexingOf(name string, n *graph.Node) (*Indexing, error) {
	switch n.Op {
	case graph.OpGatherElements, graph.OpGatherND, graph.OpScatterElements, graph.OpScatterND:
	default:
		return nil, fmt.Errorf("%s: %v is not an indexing op", name, n.Op)
	}
	return &Indexing{Name: name, Op: n.Op, DType: n.DType, Index: n.Inputs[1].DType,
		Data: n.Inputs[0].Shape.Clone(), Indices: n.Inputs[1].Shape.Clone(), Axis: n.Attrs.Axis,
		BatchDims: n.Attrs.BatchDims, Reduction: n.Attrs.Reduction}, nil
}
