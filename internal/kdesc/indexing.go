package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Indexing describes GatherElements and GatherND (and, as Scatter,
// ScatterElements and ScatterND): Data and Indices are the input shapes, Index their index
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

// Scatter is an Indexing of ScatterElements or ScatterND: its own kind,
// because a backend that writes the gathers need not write these.
type Scatter struct{ Indexing }

// IndexingOf describes a GatherElements or GatherND node.
func IndexingOf(name string, n *graph.Node) (*Indexing, error) {
	if n.Op != graph.OpGatherElements && n.Op != graph.OpGatherND {
		return nil, fmt.Errorf("%s: %v is not a GatherElements or GatherND", name, n.Op)
	}
	return indexingOf(name, n), nil
}

// ScatterOf describes a ScatterElements or ScatterND node.
func ScatterOf(name string, n *graph.Node) (*Scatter, error) {
	if n.Op != graph.OpScatterElements && n.Op != graph.OpScatterND {
		return nil, fmt.Errorf("%s: %v is not a ScatterElements or ScatterND", name, n.Op)
	}
	return &Scatter{*indexingOf(name, n)}, nil
}

func indexingOf(name string, n *graph.Node) *Indexing {
	return &Indexing{Name: name, Op: n.Op, DType: n.DType, Index: n.Inputs[1].DType,
		Data: n.Inputs[0].Shape.Clone(), Indices: n.Inputs[1].Shape.Clone(), Axis: n.Attrs.Axis,
		BatchDims: n.Attrs.BatchDims, Reduction: n.Attrs.Reduction}
}
