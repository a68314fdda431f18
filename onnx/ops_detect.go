package onnx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// Sampling and detection: GridSample, RoiAlign and NonMaxSuppression map
// to kiln's ops of the same names, Det to graph.Det.
//
// NonMaxSuppression's output length depends on the scores. kiln builds it
// at its upper bound, batches × classes × min(max_output_boxes_per_class,
// boxes) rows, the rows past the selection filled with -1, and a compiled
// graph returns only the selected rows of such a graph output (see
// graph.PaddedRows). Nodes may read the selection row by row (the
// typical Gather of the selected boxes by column 2): they compute at the
// same bound, and a graph output of theirs is trimmed to the selection's
// rows too (graph.PaddedSources); any other reader is refused at import
// (graph.CheckPadded). Boxes and scores known at import are selected
// there, giving a constant of the exact length.

func init() {
	register("GridSample", 16, one(mapGridSample))
	register("RoiAlign", 10, one(mapRoiAlign))
	register("NonMaxSuppression", 10, one(mapNMS))
	register("Det", 11, one(func(c *ctx) (*graph.Node, error) {
		x, err := c.need(0)
		if err != nil {
			return nil, err
		}
		return c.g.Det(x), nil
	}))
}

var (
	sampleModes   = map[string]graph.SampleMode{"bilinear": graph.SampleBilinear, "nearest": graph.SampleNearest, "bicubic": graph.SampleBicubic}
	samplePadding = map[string]graph.SamplePadding{"zeros": graph.PadZeros, "border": graph.PadBorder, "reflection": graph.PadReflection}
)

// mapGridSample: opset 16's 4-D GridSample.
func mapGridSample(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	grid, err := c.need(1)
	if err != nil {
		return nil, err
	}
	var s graph.GridSampleSpec
	if s.Mode, err = enumAttr(c, "mode", "bilinear", sampleModes); err != nil {
		return nil, err
	}
	if s.Padding, err = enumAttr(c, "padding_mode", "zeros", samplePadding); err != nil {
		return nil, err
	}
	if s.AlignCorners, err = c.attrBool("align_corners", false); err != nil {
		return nil, err
	}
	if x.Shape.Rank() != 4 {
		return nil, unsupportedf("X of rank %d (GridSample is 4-D: [N, C, H, W])", x.Shape.Rank())
	}
	return c.g.GridSample(x, grid, s), nil
}

// mapRoiAlign: RoiAlign-10 (no coordinate_transformation_mode: the
// output_half_pixel behaviour) and -16 (half_pixel by default).
func mapRoiAlign(c *ctx) (*graph.Node, error) {
	var ins [3]*graph.Node
	for i := range ins {
		n, err := c.need(i)
		if err != nil {
			return nil, err
		}
		ins[i] = n
	}
	s := graph.RoiAlignSpec{}
	var err error
	if s.Max, err = enumAttr(c, "mode", "avg", map[string]bool{"avg": false, "max": true}); err != nil {
		return nil, err
	}
	coordDef := "half_pixel"
	if c.opset < 16 {
		if _, has := c.attrs["coordinate_transformation_mode"]; has {
			return nil, unsupportedf("coordinate_transformation_mode at opset %d (opset 16's attribute)", c.opset)
		}
		coordDef = "output_half_pixel"
	}
	if s.HalfPixel, err = enumAttr(c, "coordinate_transformation_mode", coordDef, map[string]bool{"half_pixel": true, "output_half_pixel": false}); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		name string
		dst  *int
		def  int64
	}{{"output_height", &s.OutH, 1}, {"output_width", &s.OutW, 1}, {"sampling_ratio", &s.SamplingRatio, 0}} {
		v, err := c.attrInt(a.name, a.def)
		if err != nil {
			return nil, err
		}
		if v < 0 || v > 1<<16 || (v == 0 && a.def == 1) {
			return nil, fmt.Errorf("attribute %s=%d out of range", a.name, v)
		}
		*a.dst = int(v)
	}
	if s.SpatialScale, err = c.attrFloat("spatial_scale", 1); err != nil {
		return nil, err
	}
	return c.g.RoiAlign(ins[0], ins[1], ins[2], s), nil
}

// mapNMS: max_output_boxes_per_class, iou_threshold and score_threshold
// (inputs 2 to 4, optional) must be known at import.
func mapNMS(c *ctx) (*graph.Node, error) {
	var s graph.NMSSpec
	cp, err := c.attrInt("center_point_box", 0)
	if err != nil {
		return nil, err
	}
	if cp != 0 && cp != 1 {
		return nil, unsupportedf("center_point_box=%d (0 or 1)", cp)
	}
	s.CenterPoint = cp == 1
	arg := func(i int, what string) (float64, bool, error) {
		if !c.has(i) {
			return 0, false, nil
		}
		v, ok := c.scalar(i)
		if !ok {
			return 0, false, unsupportedf("%s (input %d) must be one value known at import time, but it is computed at run time", what, i)
		}
		return v, true, nil
	}
	maxBoxes, _, err := arg(2, "max_output_boxes_per_class")
	if err != nil {
		return nil, err
	}
	s.MaxPerClass = int(min(max(maxBoxes, 0), math.MaxInt32)) // absent or <= 0: nothing is selected
	if s.IOU, _, err = arg(3, "iou_threshold"); err != nil {
		return nil, err
	}
	if s.MinScore, s.HasMinScore, err = arg(4, "score_threshold"); err != nil {
		return nil, err
	}
	if _, ok := c.known(0); ok {
		if _, ok := c.known(1); ok {
			return nmsAtImport(c, s)
		}
	}
	boxes, err := c.need(0)
	if err != nil {
		return nil, err
	}
	scores, err := c.need(1)
	if err != nil {
		return nil, err
	}
	return c.g.NonMaxSuppression(boxes, scores, s), nil
}

// nmsAtImport selects over import-time boxes and scores with the reference
// kernel and keeps the selected rows only.
func nmsAtImport(c *ctx, s graph.NMSSpec) (*graph.Node, error) {
	sg := graph.New()
	b, _ := c.known(0)
	sc, _ := c.known(1)
	sel := sg.NonMaxSuppression(sg.Constant(b.Clone()), sg.Constant(sc.Clone()), s)
	sg.Output(sel)
	if err := sg.Err(); err != nil {
		return nil, err
	}
	vals, err := ops.Interpret(sg, nil)
	if err != nil {
		return nil, err
	}
	v := vals[0]
	rows := graph.ResultRows(v)
	t, err := tensor.FromI64(tensor.Shape{rows, 3}, v.I64()[:rows*3])
	if err != nil {
		return nil, err
	}
	return c.g.Constant(t), nil
}
