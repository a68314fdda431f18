package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// PoolND is a max or mean over the windows of x [N, C, In...] (1 to 3
// spatial axes): output cell o reads input cells o·Strides - Pads[:sp] +
// k·Dilations for every tap k inside the input. Indices: the output is the
// I64 flat position of each window's first maximum (column-major spatial
// offsets when ColMajor) rather than its value.
type PoolND struct {
	Name      string
	DType     tensor.DType // x's
	In        []int        // x
	Out       []int
	Kernel    []int
	Strides   []int
	Dilations []int
	Pads      []int // begins, then ends
	Max       bool
	CountPad  bool // mean: divide by the whole window
	Indices   bool
	ColMajor  bool
}

// PoolNDOf describes a MaxPoolND or AvgPoolND node.
func PoolNDOf(name string, n *graph.Node) (*PoolND, error) {
	if n.Op != graph.OpMaxPoolND && n.Op != graph.OpAvgPoolND {
		return nil, fmt.Errorf("%s: %v is not an N-D pool", name, n.Op)
	}
	a := n.Attrs
	return &PoolND{Name: name, DType: n.Inputs[0].DType, In: n.Inputs[0].Shape, Out: n.Shape, Kernel: a.Kernel,
		Strides: a.Strides, Dilations: a.Dilations, Pads: a.Pads, Max: n.Op == graph.OpMaxPoolND,
		CountPad: a.CountPad, Indices: a.Index == 1, ColMajor: a.ColMajor}, nil
}

// MaxUnpool writes zeros over Out, then x's elements (Size of them) at
// their I64 flat indices, in order: a later element wins a shared index.
type MaxUnpool struct {
	Name  string
	DType tensor.DType
	Size  int
	Out   []int
}

// MaxUnpoolOf describes a MaxUnpool node.
func MaxUnpoolOf(name string, n *graph.Node) (*MaxUnpool, error) {
	if n.Op != graph.OpMaxUnpool {
		return nil, fmt.Errorf("%s: %v is not a MaxUnpool", name, n.Op)
	}
	return &MaxUnpool{Name: name, DType: n.DType, Size: n.Inputs[0].Shape.NumElements(), Out: n.Shape}, nil
}
