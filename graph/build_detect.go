package graph

import "github.com/kilnml/kiln/tensor"

// Sampling and detection ops: GridSample (spatial transformers,
// deformable detection), RoiAlign and NonMaxSuppression (detection
// heads), and Det.

// SampleMode is how GridSample interpolates.
type SampleMode uint8

// GridSample's interpolation modes.
const (
	SampleBilinear SampleMode = iota // the 2×2 neighbours, weighted linearly
	SampleNearest                    // the nearest cell, halves rounded to even
	SampleBicubic                    // the 4×4 neighbours, cubic convolution with A = -0.75
)

// SamplePadding is what GridSample reads outside the input.
type SamplePadding uint8

// GridSample's padding modes.
const (
	PadZeros      SamplePadding = iota // zeros
	PadBorder                          // the nearest border cell
	PadReflection                      // the input mirrored at its borders
)

// GridSampleSpec are GridSample's attributes.
type GridSampleSpec struct {
	Mode    SampleMode
	Padding SamplePadding
	// AlignCorners: -1 and 1 are the centres of the corner cells (else
	// their outer edges).
	AlignCorners bool
}

// RoiAlignSpec are RoiAlign's attributes.
type RoiAlignSpec struct {
	OutH, OutW int
	// SamplingRatio is the number of samples per bin along each axis; 0
	// means ceil(roi extent / output extent), per roi.
	SamplingRatio int
	SpatialScale  float32 // multiplies the roi coordinates
	// HalfPixel shifts the scaled roi by -0.5 (ONNX's half_pixel, opset
	// 16's default); without it a roi is at least 1 cell wide and high
	// (output_half_pixel, the older behaviour).
	HalfPixel bool
	Max       bool // the maximum of the weighted samples of a bin, not their mean
}

// NMSSpec are NonMaxSuppression's attributes.
type NMSSpec struct {
	MaxPerClass int     // boxes kept per batch and class at most
	IOU         float64 // a box whose IoU with a kept one is above this is suppressed
	// MinScore: with HasMinScore, only boxes scoring above it are candidates.
	MinScore    float64
	HasMinScore bool
	// CenterPoint: boxes are [x centre, y centre, width, height], else
	// [y1, x1, y2, x2] with either corner pair.
	CenterPoint bool
}

// GridSample samples x [N, C, H, W] at the normalised points of grid [N,
// Ho, Wo, 2] ((x, y) in [-1, 1] across the input's width and height),
// giving [N, C, Ho, Wo] in x's dtype (F32 or F64; grid the same).
func (g *Graph) GridSample(x, grid *Node, s GridSampleSpec) *Node {
	return g.add(OpGridSample, Attrs{GridSample: s}, x, grid)
}

// RoiAlign pools each region rois[r] = [x1, y1, x2, y2] of image
// batchIndices[r] (I64) of x [N, C, H, W] into an OutH × OutW grid of
// bins, each the mean (or maximum) of bilinearly interpolated samples,
// giving [R, C, OutH, OutW].
func (g *Graph) RoiAlign(x, rois, batchIndices *Node, s RoiAlignSpec) *Node {
	return g.add(OpRoiAlign, Attrs{RoiAlign: s}, x, rois, batchIndices)
}

// NonMaxSuppression selects, per batch and class, boxes by decreasing
// score (ties to the lower index), skipping any whose IoU with a box
// already selected is above s.IOU, up to s.MaxPerClass. boxes are [B, N,
// 4], scores [B, C, N]. The result is I64 [B·C·min(MaxPerClass, N), 3]:
// the selected [batch, class, box] triples first, in batch, class and
// selection order, then rows of -1. Its row count is only an upper bound:
// kiln trims the -1 rows where the node is a graph output (see
// PaddedRows).
func (g *Graph) NonMaxSuppression(boxes, scores *Node, s NMSSpec) *Node {
	return g.add(OpNonMaxSuppression, Attrs{NMS: s}, boxes, scores)
}

// Det is the determinant of each trailing M × M matrix of x [..., M, M]
// (F32 or F64), giving x's leading dims.
func (g *Graph) Det(x *Node) *Node { return g.add(OpDet, Attrs{}, x) }

// PaddedRows reports whether n's rows past the data-dependent result are
// padding rows whose every element is -1 (NonMaxSuppression): the result
// is the leading rows before the first such row. A compiled graph returns
// only those rows for such an output.
func PaddedRows(n *Node) bool { return n.Op == OpNonMaxSuppression }

// ResultRows counts the result rows of a PaddedRows node's value v: those
// before the first row led by -1 (a result row starts with a batch index,
// never negative).
func ResultRows(v tensor.Tensor) int {
	if v.DType != tensor.I64 || v.Shape.Rank() == 0 {
		return 0
	}
	rows, width := v.Shape[0], v.Shape[1:].NumElements()
	x := v.I64()
	n := 0
	for n < rows && width > 0 && x[n*width] != -1 {
		n++
	}
	return n
}
