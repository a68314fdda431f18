package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Resize samples In at Out's coordinates as Spec says (mode, coordinate
// transformation, sizes, scales, ROI): each output element is a weighted
// sum of taps, one to four per resized axis, or Spec.Extrapolation.
type Resize struct {
	Name  string
	DType tensor.DType
	In    []int
	Out   []int
	Spec  graph.ResizeSpec
	Axes  []ResizeAxis // per axis of In, from ResizeTaps
}

// ResizeOf describes a Resize node.
func ResizeOf(name string, n *graph.Node) (*Resize, error) {
	if n.Op != graph.OpResize || n.Attrs.Resize == nil {
		return nil, fmt.Errorf("%s: %v is not a Resize", name, n.Op)
	}
	s := n.Attrs.Resize
	in := n.Inputs[0].Shape
	if len(s.Sizes) != len(in) || len(s.Scales) != len(in) || !n.Shape.Equal(tensor.Shape(s.Sizes)) {
		return nil, fmt.Errorf("%s: resize spec does not fit input %v and result %v", name, in, n.Shape)
	}
	d := &Resize{Name: name, DType: n.DType, In: in, Out: n.Shape, Spec: *s}
	for ax := range in {
		d.Axes = append(d.Axes, ResizeTaps(s, ax, in[ax]))
	}
	return d, nil
}

// ConvTranspose is the transposed convolution of x [N, C, In...] (1 to 3
// spatial axes) with w [C, M/Groups, Kernel...]: input cell i adds into
// output cell i·Strides + k·Dilations - Pads[:sp] for every tap k; Out is
// [N, M, out...], plus bias [M] when Bias.
type ConvTranspose struct {
	Name      string
	DType     tensor.DType
	In        []int // x
	Kernel    []int // spatial kernel dims
	M, Groups int
	Strides   []int
	Dilations []int
	Pads      []int // begins, then ends (negative: zero cells added)
	Out       []int
	Bias      bool
}

// ConvTransposeOf describes a ConvTranspose node.
func ConvTransposeOf(name string, n *graph.Node) (*ConvTranspose, error) {
	if n.Op != graph.OpConvTranspose {
		return nil, fmt.Errorf("%s: %v is not a ConvTranspose", name, n.Op)
	}
	a := n.Attrs
	return &ConvTranspose{Name: name, DType: n.DType, In: n.Inputs[0].Shape, Kernel: n.Inputs[1].Shape[2:],
		M: n.Shape[1], Groups: a.Groups, Strides: a.Strides, Dilations: a.Dilations, Pads: a.Pads,
		Out: n.Shape, Bias: len(n.Inputs) == 3}, nil
}
