package graph

import (
	"fmt"
	"slices"
)

// ResizeMode is how Resize interpolates between input samples.
type ResizeMode uint8

// Resize modes, as ONNX Resize's mode attribute.
const (
	ResizeNearest ResizeMode = iota // one sample, chosen by ResizeSpec.Nearest
	ResizeLinear                    // two taps per resized axis (bilinear, trilinear...)
	ResizeCubic                     // four taps per resized axis, Keys' kernel with ResizeSpec.CubicA
)

func (m ResizeMode) String() string {
	switch m {
	case ResizeNearest:
		return "nearest"
	case ResizeLinear:
		return "linear"
	case ResizeCubic:
		return "cubic"
	}
	return fmt.Sprintf("ResizeMode(%d)", uint8(m))
}

// ResizeCoord maps an output coordinate to an input one (ONNX's
// coordinate_transformation_mode); scale is the axis's scale factor,
// in and out its lengths.
type ResizeCoord uint8

// Coordinate transformations, as ONNX Resize.
const (
	CoordHalfPixel        ResizeCoord = iota // (x + 0.5) / scale - 0.5
	CoordPytorchHalfPixel                    // as half_pixel, but 0 when the output length is 1
	CoordAlignCorners                        // x · (in - 1) / (out - 1)
	CoordAsymmetric                          // x / scale
	CoordTFCropAndResize                     // into ResizeSpec.ROI; outside it gives ResizeSpec.Extrapolation
	CoordTFHalfPixelForNN                    // (x + 0.5) / scale (ONNX opset 11 only)
)

var coordNames = [...]string{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"}

func (c ResizeCoord) String() string {
	if int(c) < len(coordNames) {
		return coordNames[c]
	}
	return fmt.Sprintf("ResizeCoord(%d)", uint8(c))
}

// NearestMode rounds an input coordinate to a sample in nearest mode.
type NearestMode uint8

// Nearest rounding, as ONNX Resize's nearest_mode.
const (
	NearestRoundPreferFloor NearestMode = iota // halves go down
	NearestRoundPreferCeil                     // halves go up
	NearestFloor
	NearestCeil
)

var nearestNames = [...]string{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}

func (m NearestMode) String() string {
	if int(m) < len(nearestNames) {
		return nearestNames[m]
	}
	return fmt.Sprintf("NearestMode(%d)", uint8(m))
}

// ResizeSpec is everything Resize needs: the output shape and, per axis,
// the scale factor the coordinate transformation divides by. Builders
// and importers resolve ONNX's scales-or-sizes choice into both: for
// scales, Sizes[i] = floor(in[i] · Scales[i]); for sizes, Scales[i] =
// Sizes[i] / in[i]. An axis whose size and scale are 1 copies through.
type ResizeSpec struct {
	Mode    ResizeMode
	Coord   ResizeCoord
	Nearest NearestMode // nearest mode only
	// CubicA is Keys' cubic coefficient (ONNX default -0.75; PyTorch
	// uses -0.5).
	CubicA float64
	// ExcludeOutside gives taps outside the input weight 0 and
	// renormalises the rest.
	ExcludeOutside bool
	// Extrapolation is the value of outputs whose coordinate falls
	// outside the input under CoordTFCropAndResize.
	Extrapolation float64
	Sizes         []int     // the output shape, one per input axis
	Scales        []float64 // one per input axis, > 0
	// ROI is [starts..., ends...] in normalised input coordinates, one
	// pair per axis: CoordTFCropAndResize only.
	ROI []float64
}

func (s *ResizeSpec) clone() *ResizeSpec {
	if s == nil {
		return nil
	}
	c := *s
	c.Sizes, c.Scales, c.ROI = slices.Clone(s.Sizes), slices.Clone(s.Scales), slices.Clone(s.ROI)
	return &c
}

// Resize interpolates x to spec.Sizes (ONNX Resize): every output
// coordinate is mapped through spec.Coord to a position in the input,
// which is sampled by spec.Mode. x is a float tensor of any rank.
//
// It is a method; the package function Resize instead specialises a
// whole graph to another extent of a bucketed axis.
func (g *Graph) Resize(x *Node, spec ResizeSpec) *Node {
	return g.add(OpResize, Attrs{Resize: &spec}, x)
}

// ConvTransposeOpts are the attributes of ConvTranspose, one value per
// spatial axis (Pads: begins, then ends). Zero values mean stride 1,
// dilation 1, no cropping, one group.
type ConvTransposeOpts struct {
	Strides   []int
	Dilations []int
	// Pads crop the full output (stride·(in-1) + dilation·(k-1) + 1
	// cells per axis) at each axis's begin and end; a negative end pad
	// appends zero cells (ONNX's output_padding, or an output_shape larger
	// than the full output), which still get the bias.
	Pads   []int
	Groups int
}

// ConvTranspose is the transposed (fractionally strided) convolution,
// the gradient of Conv with respect to its input: x [N, C, s...] (1 to 3
// spatial axes) with w [C, M/groups, k...] gives [N, M, o...], each input
// cell adding w times itself into the output window it maps to; bias [M]
// is added when not nil.
func (g *Graph) ConvTranspose(x, w, bias *Node, o ConvTransposeOpts) *Node {
	at := Attrs{Strides: o.Strides, Pads: o.Pads, Dilations: o.Dilations, Groups: o.Groups}
	return g.add(OpConvTranspose, at, nonNil(x, w, bias)...)
}
