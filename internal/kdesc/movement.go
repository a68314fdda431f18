package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Concat joins contiguous inputs along Axis.
type Concat struct {
	Name  string
	DType tensor.DType
	Shape []int // of the output
	Axis  int
	Sizes []int // each input's length along Axis
}

// ConcatOf describes a Concat node.
func ConcatOf(name string, n *graph.Node) (*Concat, error) {
	if n.Op != graph.OpConcat {
		return nil, fmt.Errorf("%s: %v is not a Concat", name, n.Op)
	}
	sizes := make([]int, len(n.Inputs))
	for i, in := range n.Inputs {
		sizes[i] = in.Shape[n.Attrs.Axis]
	}
	return &Concat{Name: name, DType: n.DType, Shape: n.Shape, Axis: n.Attrs.Axis, Sizes: sizes}, nil
}

// Gather picks N entries of length Inner along a dim of size D, for each
// of Outer leading blocks, by integer indices.
type Gather struct {
	Name     string
	DType    tensor.DType
	Outer, D int
	N, Inner int
	Index    tensor.DType // I32 or I64
}

// GatherOf describes a Gather node.
func GatherOf(name string, n *graph.Node) (*Gather, error) {
	if n.Op != graph.OpGather {
		return nil, fmt.Errorf("%s: %v is not a Gather", name, n.Op)
	}
	s, ax, idx := n.Inputs[0].Shape, n.Attrs.Axis, n.Inputs[1]
	return &Gather{Name: name, DType: n.DType, Outer: s[:ax].NumElements(), D: s[ax],
		N: idx.Shape.NumElements(), Inner: s[ax+1:].NumElements(), Index: idx.DType}, nil
}

// Pad copies In into Out at offsets Begins and fills the border by Mode.
type Pad struct {
	Name   string
	DType  tensor.DType
	In     []int
	Begins []int
	Mode   graph.PadMode
	Value  float32 // constant mode, converted to DType
	Out    []int
}

// PadOf describes a Pad node.
func PadOf(name string, n *graph.Node) (*Pad, error) {
	if n.Op != graph.OpPad {
		return nil, fmt.Errorf("%s: %v is not a Pad", name, n.Op)
	}
	in, a := n.Inputs[0].Shape, n.Attrs
	r := in.Rank()
	if len(a.Pads) != 2*r {
		return nil, fmt.Errorf("%s: pads %v for rank %d", name, a.Pads, r)
	}
	return &Pad{Name: name, DType: n.DType, In: in, Begins: a.Pads[:r], Mode: a.Mode, Value: a.Value, Out: n.Shape}, nil
}
