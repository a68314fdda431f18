package onnx

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
)

// resizeModel is one Resize node at opset over x [1, 2, 4, 6], with
// scales given as an initializer (nil: sizes [3, 9] over axes 2, 3 as an
// int64 initializer) and extra attributes.
func resizeModel(opset int64, scales []float32, attrs ...*Attribute) *ModelProto {
	g := &GraphProto{
		Nodes:   []*NodeProto{{Name: "rz", OpType: "Resize", Inputs: []string{"x", "", "scales"}, Outputs: []string{"y"}, Attrs: attrs}},
		Inputs:  []*ValueInfo{tensorInfo("x", typeFloat, 1, 2, 4, 6)},
		Outputs: []*ValueInfo{{Name: "y", IsTensor: true, ElemType: typeFloat}},
	}
	if scales != nil {
		g.Initializers = []*TensorProto{f32Init("scales", []int64{int64(len(scales))}, scales...)}
	} else {
		g.Nodes[0].Inputs = []string{"x", "", "", "sizes"}
		g.Initializers = []*TensorProto{{Name: "sizes", Dims: []int64{2}, DataType: typeInt64, Int64Data: []int64{3, 9}}}
	}
	return model(opset, g)
}

func strAttr(name, v string) *Attribute {
	return &Attribute{Name: name, Type: AttrString, S: []byte(v)}
}

// TestResizeForms: opset 18's axes select the axes sizes and scales
// refer to; antialias, a keep_aspect_ratio_policy other than stretch and
// a run-time scales input are unsupported features named in the error.
func TestResizeForms(t *testing.T) {
	m, err := Parse(encModel(resizeModel(18, nil, intsAttr("axes", -2, -1), strAttr("mode", "linear"))))
	if err != nil {
		t.Fatal(err)
	}
	var rz *graph.Node
	for _, n := range m.Graph.Nodes {
		if n.Op == graph.OpResize {
			rz = n
		}
	}
	if rz == nil || !rz.Shape.Equal([]int{1, 2, 3, 9}) || !slices.Equal(rz.Attrs.Resize.Scales, []float64{1, 1, 0.75, 1.5}) ||
		rz.Attrs.Resize.Mode != graph.ResizeLinear || rz.Attrs.Resize.Coord != graph.CoordHalfPixel {
		t.Fatalf("Resize with axes imported as %v", rz)
	}
	m.Close()
	for _, c := range []struct {
		m    *ModelProto
		want string
	}{
		{resizeModel(18, []float32{1, 1, 2, 2}, intAttr("antialias", 1)), "antialias=1"},
		{resizeModel(18, nil, intsAttr("axes", 2, 3), strAttr("keep_aspect_ratio_policy", "not_larger")), `keep_aspect_ratio_policy="not_larger"`},
		{resizeModel(13, []float32{1, 1, 2, 2}, strAttr("coordinate_transformation_mode", "tf_half_pixel_for_nn")), "tf_half_pixel_for_nn"},
		{resizeModel(19, []float32{1, 1, 2, 2}, strAttr("coordinate_transformation_mode", "half_pixel_symmetric")), "half_pixel_symmetric"},
		{resizeModel(13, []float32{1, 1, 2, 2}, strAttr("mode", "area")), `mode="area"`},
	} {
		_, err := Parse(encModel(c.m))
		var ue *UnsupportedError
		if !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].Node != "rz" || !strings.Contains(ue.Ops[0].Reason, c.want) {
			t.Errorf("want an unsupported Resize naming %s, got %v", c.want, err)
		}
	}
	// scales computed at run time: a graph input.
	g := resizeModel(13, []float32{1, 1, 2, 2}).Graph
	g.Initializers = nil
	g.Inputs = append(g.Inputs, tensorInfo("scales", typeFloat, 4))
	_, err = Parse(encModel(model(13, g)))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Ops) != 1 || !strings.Contains(ue.Ops[0].Reason, "known at import") {
		t.Errorf("run-time scales: %v", err)
	}
}
