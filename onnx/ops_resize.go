package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/kilnml/kiln/graph"
)

func init() {
	register("Resize", 10, one(mapResize))
	register("Upsample", 7, one(mapUpsample))
	register("ConvTranspose", 1, one(mapConvTranspose))
}

// resizeModes and the other tables map ONNX's attribute strings.
var (
	resizeModes = map[string]graph.ResizeMode{"nearest": graph.ResizeNearest, "linear": graph.ResizeLinear, "cubic": graph.ResizeCubic}
	coordModes  = map[string]graph.ResizeCoord{
		"half_pixel": graph.CoordHalfPixel, "pytorch_half_pixel": graph.CoordPytorchHalfPixel,
		"align_corners": graph.CoordAlignCorners, "asymmetric": graph.CoordAsymmetric,
		"tf_crop_and_resize": graph.CoordTFCropAndResize, "tf_half_pixel_for_nn": graph.CoordTFHalfPixelForNN,
	}
	nearestModes = map[string]graph.NearestMode{
		"round_prefer_floor": graph.NearestRoundPreferFloor, "round_prefer_ceil": graph.NearestRoundPreferCeil,
		"floor": graph.NearestFloor, "ceil": graph.NearestCeil,
	}
)

// enumAttr reads a string attribute through a table; a value outside it
// is an unsupported feature naming the attribute.
func enumAttr[E any](c *ctx, name, def string, table map[string]E) (E, error) {
	var zero E
	s, err := c.attrString(name, def)
	if err != nil {
		return zero, err
	}
	v, ok := table[s]
	if !ok {
		return zero, unsupportedf("%s=%q", name, s)
	}
	return v, nil
}

// mapResize reads every Resize form: opset 10 (X, scales; asymmetric
// coordinates, as Upsample), 11 to 17 (X, roi, scales, sizes) and 18+
// (axes; antialias and keep_aspect_ratio_policy other than the defaults
// are refused by name). scales, sizes and the ROI must be known at import.
func mapResize(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	mode, err := enumAttr(c, "mode", "nearest", resizeModes)
	if err != nil {
		return nil, err
	}
	if c.opset < 11 {
		if mode == graph.ResizeCubic {
			return nil, unsupportedf("mode=\"cubic\" at opset %d (cubic is opset 11's)", c.opset)
		}
		return resizeAsymmetric(c, x, mode, 1)
	}
	spec := graph.ResizeSpec{Mode: mode}
	if spec.Coord, err = enumAttr(c, "coordinate_transformation_mode", "half_pixel", coordModes); err != nil {
		return nil, err
	}
	if spec.Coord == graph.CoordTFHalfPixelForNN && c.opset >= 13 {
		return nil, unsupportedf("coordinate_transformation_mode=\"tf_half_pixel_for_nn\" at opset %d (opset 11 and 12 only)", c.opset)
	}
	if spec.Nearest, err = enumAttr(c, "nearest_mode", "round_prefer_floor", nearestModes); err != nil {
		return nil, err
	}
	a, err := c.attrFloat("cubic_coeff_a", -0.75)
	if err != nil {
		return nil, err
	}
	spec.CubicA = float64(a)
	if spec.ExcludeOutside, err = c.attrBool("exclude_outside", false); err != nil {
		return nil, err
	}
	e, err := c.attrFloat("extrapolation_value", 0)
	if err != nil {
		return nil, err
	}
	spec.Extrapolation = float64(e)
	if anti, err := c.attrInt("antialias", 0); err != nil || anti != 0 {
		if err == nil {
			err = unsupportedf("antialias=%d (kiln's Resize has no antialiasing filter)", anti)
		}
		return nil, err
	}
	if p, err := c.attrString("keep_aspect_ratio_policy", "stretch"); err != nil || p != "stretch" {
		if err == nil {
			err = unsupportedf("keep_aspect_ratio_policy=%q (only \"stretch\")", p)
		}
		return nil, err
	}
	r := x.Shape.Rank()
	axes, err := resizeAxes(c, r)
	if err != nil {
		return nil, err
	}
	if err := resizeTarget(c, x.Shape, axes, &spec); err != nil {
		return nil, err
	}
	if spec.Coord == graph.CoordTFCropAndResize {
		roi, ok := c.known(1)
		if !ok || roi.NumElements() != 2*len(axes) {
			return nil, unsupportedf("tf_crop_and_resize needs the roi (input 1) known at import with %d values", 2*len(axes))
		}
		v := roi.Float64s()
		spec.ROI = make([]float64, 2*r)
		for i := range r {
			spec.ROI[r+i] = 1 // an axis outside axes keeps all of itself
		}
		for j, ax := range axes {
			spec.ROI[ax], spec.ROI[r+ax] = v[j], v[len(axes)+j]
		}
	}
	return c.g.Resize(x, spec), nil
}

// resizeAxes reads opset 18's axes attribute (all axes when absent).
func resizeAxes(c *ctx, r int) ([]int, error) {
	axes, ok, err := c.attrInts("axes")
	if err != nil || !ok {
		all := make([]int, r)
		for i := range all {
			all[i] = i
		}
		return all, err
	}
	for i, ax := range axes {
		if axes[i], err = axis(ax, r); err != nil {
			return nil, fmt.Errorf("axes %v: %w", axes, err)
		}
		if slices.Contains(axes[:i], axes[i]) {
			return nil, fmt.Errorf("axes %v repeat axis %d", axes, axes[i])
		}
	}
	return axes, nil
}

// resizeTarget fills spec's Sizes and Scales from the scales (input 2)
// or the sizes (input 3), whichever is given and not empty, over axes;
// other axes keep their length.
func resizeTarget(c *ctx, in []int, axes []int, spec *graph.ResizeSpec) error {
	r := len(in)
	spec.Sizes, spec.Scales = slices.Clone(in), make([]float64, r)
	for i := range spec.Scales {
		spec.Scales[i] = 1
	}
	scales, hasScales := c.known(2)
	sizes, hasSizes := c.known(3)
	hasScales = hasScales && scales.NumElements() > 0
	hasSizes = hasSizes && sizes.NumElements() > 0
	switch {
	case c.has(2) && c.ins[2].known == nil || c.has(3) && c.ins[3].known == nil:
		return unsupportedf("scales and sizes (inputs 2 and 3) must be known at import time, but one is computed at run time")
	case hasScales == hasSizes:
		return fmt.Errorf("exactly one of scales and sizes must be given and not empty")
	case hasScales:
		v := scales.Float64s()
		if len(v) != len(axes) {
			return fmt.Errorf("scales %v need %d values", v, len(axes))
		}
		for j, ax := range axes {
			if !(v[j] > 0) || math.IsInf(v[j], 0) {
				return fmt.Errorf("scales %v must be finite and > 0", v)
			}
			spec.Scales[ax] = v[j]
			spec.Sizes[ax] = int(math.Floor(float64(in[ax]) * v[j]))
		}
	default:
		v, err := intsOf(sizes, "sizes")
		if err != nil {
			return err
		}
		if len(v) != len(axes) {
			return fmt.Errorf("sizes %v need %d values", v, len(axes))
		}
		for j, ax := range axes {
			if v[j] < 0 || v[j] > 1<<31 || in[ax] == 0 && v[j] != 0 {
				return fmt.Errorf("sizes %v do not fit input %v", v, in)
			}
			spec.Sizes[ax] = v[j]
			if in[ax] > 0 {
				spec.Scales[ax] = float64(v[j]) / float64(in[ax])
			}
			if spec.Scales[ax] == 0 { // an empty output: any positive scale
				spec.Scales[ax] = 1
			}
		}
	}
	return nil
}

// resizeAsymmetric is Upsample and opset 10's Resize: scales from input
// (or, for Upsample 7, the attribute), coordinates x / scale, nearest
// rounding down.
func resizeAsymmetric(c *ctx, x *graph.Node, mode graph.ResizeMode, scalesIn int) (*graph.Node, error) {
	spec := graph.ResizeSpec{Mode: mode, Coord: graph.CoordAsymmetric, Nearest: graph.NearestFloor}
	var v []float64
	if a, ok := c.attrs["scales"]; ok && a.Type == AttrFloats {
		for _, f := range a.Floats {
			v = append(v, float64(f))
		}
	} else {
		t, ok := c.known(scalesIn)
		if !ok {
			return nil, unsupportedf("scales (input %d) must be known at import time", scalesIn)
		}
		v = t.Float64s()
	}
	in := x.Shape
	if len(v) != in.Rank() {
		return nil, fmt.Errorf("scales %v need one value per input axis (%d)", v, in.Rank())
	}
	for i, s := range v {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("scales %v must be finite and > 0", v)
		}
		spec.Sizes = append(spec.Sizes, int(math.Floor(float64(in[i])*s)))
	}
	spec.Scales = v
	return c.g.Resize(x, spec), nil
}

func mapUpsample(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	mode, err := enumAttr(c, "mode", "nearest", map[string]graph.ResizeMode{"nearest": graph.ResizeNearest, "linear": graph.ResizeLinear, "bilinear": graph.ResizeLinear})
	if err != nil {
		return nil, err
	}
	return resizeAsymmetric(c, x, mode, 1)
}
