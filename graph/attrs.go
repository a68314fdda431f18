package graph

import "github.com/kilnml/kiln/tensor"

// PadMode selects how Pad fills the border.
type PadMode uint8

// Pad modes, as ONNX Pad.
const (
	PadConstant PadMode = iota // Attrs.Value
	PadReflect                 // mirror without repeating the edge
	PadEdge                    // repeat the edge element
)

func (m PadMode) String() string {
	switch m {
	case PadConstant:
		return "constant"
	case PadReflect:
		return "reflect"
	case PadEdge:
		return "edge"
	}
	return "padmode?"
}

// ScatterReduction is how a scatter combines an update with the value already
// at its position (ONNX ScatterElements and ScatterND's reduction).
type ScatterReduction uint8

// Scatter reductions. With None a later update of the same position
// replaces an earlier one; the others fold updates in index order.
const (
	ScatterNone ScatterReduction = iota
	ScatterAdd
	ScatterMul
	ScatterMax
	ScatterMin
)

var reductionNames = [...]string{"none", "add", "mul", "max", "min"}

func (r ScatterReduction) String() string {
	if int(r) < len(reductionNames) {
		return reductionNames[r]
	}
	return "reduction?"
}

// ParseReduction maps an ONNX reduction name to its ScatterReduction.
func ParseReduction(s string) (ScatterReduction, bool) {
	for i, n := range reductionNames {
		if n == s {
			return ScatterReduction(i), true
		}
	}
	return 0, false
}

// Attrs holds the attributes of every op in one struct: each op reads the
// fields its builder documents and leaves the rest zero. Builders store
// normalised values (non-negative axes, resolved shapes), so kernels never
// re-derive them.
type Attrs struct {
	Axis     int   // Softmax, LogSoftmax, CumSum, ArgMax/Min, Concat, Split, Gather, GatherElements, ScatterElements, Flatten, LayerNorm, RMSNorm
	Axes     []int // reductions, Squeeze, Unsqueeze, Slice (sorted for reductions)
	KeepDims bool  // reductions, ArgMax/Min

	Alpha float32 // LeakyRelu slope; Gemm alpha; Elu, Selu, Celu, ThresholdedRelu alpha; Shrink lambd
	Beta  float32 // Gemm beta; Selu gamma; Shrink bias
	Min   float32 // Clip lower bound (-Inf for none)
	Max   float32 // Clip upper bound (+Inf for none)
	Eps   float32 // LayerNorm, RMSNorm, BatchNorm

	TransA, TransB bool // Gemm

	Kernel    []int // pooling window [kh, kw]
	Strides   []int // conv, pooling [sh, sw]
	Pads      []int // conv, pooling [top, left, bottom, right]; Pad: ONNX [begins..., ends...]
	Dilations []int // conv [dh, dw]
	Groups    int   // conv
	CountPad  bool  // AvgPool: padding counts in the divisor
	ColMajor  bool  // MaxPoolND indices: spatial offsets column-major (ONNX storage_order 1)

	Perm   []int        // Transpose
	Shape  tensor.Shape // Reshape, Expand: the resolved target shape
	Starts []int        // Slice, normalised and clamped, one per Axes entry
	Ends   []int        // Slice
	Steps  []int        // Slice
	Sizes  []int        // Split: size of every piece
	Index  int          // Split: which piece this node is; TopK: 0 values, 1 indices
	Reps   []int        // Tile
	Mode   PadMode      // Pad
	Value  float32      // Pad constant

	To tensor.DType // Cast

	Exclusive bool // CumSum
	K         int  // TopK: how many elements
	Smallest  bool // TopK: the K smallest rather than the largest
	Reverse   bool // CumSum

	BatchDims int              // GatherND: leading dims indices and data share
	Reduction ScatterReduction // ScatterElements, ScatterND

	Causal      bool    // Attention: query i sees keys up to i + (Sk - Sq)
	Scale       float32 // Attention: 0 means 1/sqrt(head dim)
	KVLen       bool    // Attention: the last input is the count of keys in use per batch (I64 [B])
	Interleaved bool    // RoPE: rotate pairs (2i, 2i+1) instead of halves

	Program  []ElemInstr // FusedElementwise: the ops, in evaluation order
	Epilogue Epilogue    // FusedMatMul, FusedConv2D: what is applied to the result

	Custom *CustomSpec // Custom: the user's op, shared by every copy of the node (never mutated)

	Resize *ResizeSpec // Resize: how each output coordinate maps to input taps

	GridSample GridSampleSpec // GridSample
	RoiAlign   RoiAlignSpec   // RoiAlign
	NMS        NMSSpec        // NonMaxSuppression

	Loop *LoopSpec // Loop: the body and how the node's inputs feed it (shared, never mutated)
}

// clone deep-copies the slices so graphs never share attribute memory.
func (a Attrs) clone() Attrs {
	cp := func(s []int) []int {
		if s == nil {
			return nil
		}
		return append([]int(nil), s...)
	}
	a.Axes, a.Kernel, a.Strides, a.Pads, a.Dilations = cp(a.Axes), cp(a.Kernel), cp(a.Strides), cp(a.Pads), cp(a.Dilations)
	a.Perm, a.Starts, a.Ends, a.Steps, a.Sizes, a.Reps = cp(a.Perm), cp(a.Starts), cp(a.Ends), cp(a.Steps), cp(a.Sizes), cp(a.Reps)
	a.Shape = a.Shape.Clone()
	a.Program = cloneProgram(a.Program)
	a.Resize = a.Resize.clone()
	return a
}
