package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// GridSample reads X [N, C, H, W] at Grid's [N, Ho, Wo, 2] normalised
// points (Spec: interpolation, padding, corner alignment) into Out [N, C,
// Ho, Wo].
type GridSample struct {
	Name  string
	DType tensor.DType
	X     []int
	Out   []int
	Spec  graph.GridSampleSpec
}

// GridSampleOf describes a GridSample node.
func GridSampleOf(name string, n *graph.Node) (*GridSample, error) {
	if n.Op != graph.OpGridSample {
		return nil, fmt.Errorf("%s: %v is not a GridSample", name, n.Op)
	}
	return &GridSample{Name: name, DType: n.DType, X: n.Inputs[0].Shape, Out: n.Shape, Spec: n.Attrs.GridSample}, nil
}

// RoiAlign pools the rois of X [N, C, H, W] (rois [R, 4], I64 batch
// indices [R]) into Out [R, C, OutH, OutW] bins of bilinear samples.
type RoiAlign struct {
	Name  string
	DType tensor.DType
	X     []int
	Rois  int
	Spec  graph.RoiAlignSpec
}

// RoiAlignOf describes a RoiAlign node.
func RoiAlignOf(name string, n *graph.Node) (*RoiAlign, error) {
	if n.Op != graph.OpRoiAlign {
		return nil, fmt.Errorf("%s: %v is not a RoiAlign", name, n.Op)
	}
	return &RoiAlign{Name: name, DType: n.DType, X: n.Inputs[0].Shape, Rois: n.Inputs[1].Shape[0], Spec: n.Attrs.RoiAlign}, nil
}

// NMS is a greedy non-maximum suppression of Boxes [B, N, 4] by scores
// [B, C, N] into Rows rows of I64 [batch, class, box] triples, then -1
// rows.
type NMS struct {
	Name  string
	DType tensor.DType // boxes' and scores'
	Boxes []int
	Class int
	Rows  int
	Spec  graph.NMSSpec
}

// NMSOf describes a NonMaxSuppression node.
func NMSOf(name string, n *graph.Node) (*NMS, error) {
	if n.Op != graph.OpNonMaxSuppression {
		return nil, fmt.Errorf("%s: %v is not a NonMaxSuppression", name, n.Op)
	}
	return &NMS{Name: name, DType: n.Inputs[0].DType, Boxes: n.Inputs[0].Shape, Class: n.Inputs[1].Shape[1],
		Rows: n.Shape[0], Spec: n.Attrs.NMS}, nil
}

// Det is the determinant of each of Count M × M matrices.
type Det struct {
	Name  string
	DType tensor.DType
	Count int
	M     int
}

// DetOf describes a Det node.
func DetOf(name string, n *graph.Node) (*Det, error) {
	if n.Op != graph.OpDet {
		return nil, fmt.Errorf("%s: %v is not a Det", name, n.Op)
	}
	s := n.Inputs[0].Shape
	return &Det{Name: name, DType: n.DType, Count: n.Shape.NumElements(), M: s[s.Rank()-1]}, nil
}
