package onnx

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/tensor"
)

// nmsInputs are the ONNX suite's suppress_by_IOU boxes ([y1, x1, y2, x2])
// and scores, with max 3, IoU 0.5 and score 0.4 as initializers unless
// runtimeMax: then max_output_boxes_per_class is a graph input.
func nmsGraph(node *NodeProto, known, runtimeMax bool, extra ...*NodeProto) *GraphProto {
	boxes := []float32{0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101}
	scores := []float32{0.9, 0.75, 0.6, 0.95, 0.5, 0.3}
	g := &GraphProto{Nodes: append([]*NodeProto{node}, extra...),
		Initializers: []*TensorProto{f32Init("iou", []int64{1}, 0.5), f32Init("score", []int64{1}, 0.4)}}
	if known {
		g.Initializers = append(g.Initializers, f32Init("boxes", []int64{1, 6, 4}, boxes...), f32Init("scores", []int64{1, 1, 6}, scores...))
	} else {
		g.Inputs = []*ValueInfo{tensorInfo("boxes", typeFloat, 1, 6, 4), tensorInfo("scores", typeFloat, 1, 1, 6)}
	}
	if runtimeMax {
		g.Inputs = append(g.Inputs, tensorInfo("max", typeInt64, 1))
	} else {
		g.Initializers = append(g.Initializers, &TensorProto{Name: "max", Dims: []int64{1}, DataType: typeInt64, Int64Data: []int64{3}})
	}
	out := g.Nodes[len(g.Nodes)-1].Outputs[0]
	g.Outputs = []*ValueInfo{{Name: out, IsTensor: true, ElemType: typeInt64}}
	return g
}

func nmsNode() *NodeProto {
	return &NodeProto{Name: "nms", OpType: "NonMaxSuppression", Inputs: []string{"boxes", "scores", "max", "iou", "score"}, Outputs: []string{"sel"}}
}

// TestNMSAtImport: boxes and scores known at import are selected there
// into a constant of the exact length (boxes 1 and 2 overlap box 0, box 4
// overlaps box 3, box 5 scores under 0.4), which a later node may read.
func TestNMSAtImport(t *testing.T) {
	after := &NodeProto{Name: "id", OpType: "Identity", Inputs: []string{"sel"}, Outputs: []string{"y"}}
	m, err := Parse(encModel(model(11, nmsGraph(nmsNode(), true, false, after))))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	outs, err := cg.RunTyped()
	if err != nil {
		t.Fatal(err)
	}
	got := tensor.Tensor{DType: outs[0].DType, Shape: outs[0].Shape, Data: outs[0].Data}
	if want := []int64{0, 0, 3, 0, 0, 0}; !got.Shape.Equal(tensor.Shape{2, 3}) || !slices.Equal(got.I64(), want) {
		t.Errorf("got %v %v, want [2 3] %v", got.Shape, got.I64(), want)
	}
}

// TestDetectUnsupported: what the sampling, detection and spectral
// mappings cannot import is reported per node, naming the node, the op
// and the argument or attribute.
func TestDetectUnsupported(t *testing.T) {
	img := []*ValueInfo{tensorInfo("x", typeFloat, 1, 1, 4, 4), tensorInfo("g", typeFloat, 1, 2, 2, 2)}
	for _, c := range []struct {
		name  string
		opset int64
		g     *GraphProto
		want  string
	}{
		{"nms runtime max", 11, nmsGraph(nmsNode(), false, true), "max_output_boxes_per_class (input 2) must be one value known at import"},
		{"nms center_point_box", 11, nmsGraph(&NodeProto{Name: "nms", OpType: "NonMaxSuppression", Inputs: []string{"boxes", "scores", "max", "iou", "score"},
			Outputs: []string{"sel"}, Attrs: []*Attribute{intAttr("center_point_box", 2)}}, false, false), "center_point_box=2"},
		{"gridsample mode", 16, &GraphProto{Nodes: []*NodeProto{{Name: "gs", OpType: "GridSample", Inputs: []string{"x", "g"}, Outputs: []string{"y"},
			Attrs: []*Attribute{strAttr("mode", "area")}}}, Inputs: img}, `mode="area"`},
		{"gridsample padding", 16, &GraphProto{Nodes: []*NodeProto{{Name: "gs", OpType: "GridSample", Inputs: []string{"x", "g"}, Outputs: []string{"y"},
			Attrs: []*Attribute{strAttr("padding_mode", "wrap")}}}, Inputs: img}, `padding_mode="wrap"`},
		{"roialign coordinate mode at 11", 11, &GraphProto{Nodes: []*NodeProto{{Name: "ra", OpType: "RoiAlign", Inputs: []string{"x", "r", "b"}, Outputs: []string{"y"},
			Attrs: []*Attribute{strAttr("coordinate_transformation_mode", "half_pixel")}}},
			Inputs: []*ValueInfo{img[0], tensorInfo("r", typeFloat, 2, 4), tensorInfo("b", typeInt64, 2)}}, "coordinate_transformation_mode at opset 11"},
		{"roialign mode", 16, &GraphProto{Nodes: []*NodeProto{{Name: "ra", OpType: "RoiAlign", Inputs: []string{"x", "r", "b"}, Outputs: []string{"y"},
			Attrs: []*Attribute{strAttr("mode", "median")}}},
			Inputs: []*ValueInfo{img[0], tensorInfo("r", typeFloat, 2, 4), tensorInfo("b", typeInt64, 2)}}, `mode="median"`},
		{"dft onesided inverse", 17, &GraphProto{Nodes: []*NodeProto{{Name: "dft", OpType: "DFT", Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intAttr("onesided", 1), intAttr("inverse", 1)}}}, Inputs: []*ValueInfo{tensorInfo("x", typeFloat, 1, 8, 1)}}, "onesided=1 with inverse=1"},
		{"dft runtime length", 17, &GraphProto{Nodes: []*NodeProto{{Name: "dft", OpType: "DFT", Inputs: []string{"x", "n"}, Outputs: []string{"y"}}},
			Inputs: []*ValueInfo{tensorInfo("x", typeFloat, 1, 8, 1), tensorInfo("n", typeInt64)}}, "dft_length (input 1)"},
		{"stft runtime step", 17, &GraphProto{Nodes: []*NodeProto{{Name: "st", OpType: "STFT", Inputs: []string{"x", "s", "", "l"}, Outputs: []string{"y"}}},
			Inputs: []*ValueInfo{tensorInfo("x", typeFloat, 1, 32, 1), tensorInfo("s", typeInt64), tensorInfo("l", typeInt64)}}, "frame_step (input 1)"},
		{"mel runtime bins", 17, &GraphProto{Nodes: []*NodeProto{{Name: "mel", OpType: "MelWeightMatrix", Inputs: []string{"a", "b", "c", "d", "e"}, Outputs: []string{"y"}}},
			Inputs: []*ValueInfo{tensorInfo("a", typeInt32), tensorInfo("b", typeInt32), tensorInfo("c", typeInt32), tensorInfo("d", typeFloat), tensorInfo("e", typeFloat)}},
			"num_mel_bins (input 0)"},
	} {
		g := c.g
		if len(g.Outputs) == 0 {
			g.Outputs = []*ValueInfo{{Name: "y", IsTensor: true, ElemType: typeFloat}}
		}
		node := g.Nodes[0]
		_, err := Parse(encModel(model(c.opset, g)))
		var ue *UnsupportedError
		if !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].OpType != node.OpType || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), node.Name) {
			t.Errorf("%s: got %v, want an unsupported %s naming %q and %q", c.name, err, node.OpType, node.Name, c.want)
		}
	}
}
