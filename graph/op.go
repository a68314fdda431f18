package graph

import "fmt"

// Op is the kind of a node.
type Op uint8

// The op set. Sources first, then families in the order of the builder
// files. Semantics follow numpy and ONNX; see the builder method of each.
const (
	OpInvalid Op = iota

	// Sources.
	OpInput    // a run-time input, fed by name or position
	OpParam    // a weight, set once after compilation
	OpConstant // a value fixed at build time (Node.Value)

	// Elementwise unary (float unless noted).
	OpNeg // also signed ints
	OpAbs // also signed ints
	OpExp
	OpLog
	OpSqrt
	OpRsqrt
	OpReciprocal
	OpTanh
	OpSigmoid
	OpRelu // also ints
	OpLeakyRelu
	OpGelu     // exact form: x/2 * (1 + erf(x/sqrt 2)); NaN at -Inf (see Graph.Gelu)
	OpGeluTanh // tanh approximation; NaN at -Inf
	OpSilu     // x * sigmoid(x); NaN at -Inf
	OpErf
	OpSin
	OpCos
	OpFloor
	OpCeil
	OpRound           // half to even, as numpy and ONNX
	OpClip            // Attrs.Min, Attrs.Max; also ints
	OpElu             // Attrs.Alpha
	OpSelu            // Attrs.Alpha, Attrs.Beta (ONNX's gamma)
	OpCelu            // Attrs.Alpha
	OpSoftplus        // log(1 + e^x)
	OpSoftsign        // x / (1 + |x|)
	OpThresholdedRelu // x where x > Attrs.Alpha, else 0
	OpShrink          // Attrs.Alpha (ONNX's lambd), Attrs.Beta (bias)
	OpTan
	OpSinh
	OpCosh
	OpAsin
	OpAcos
	OpAtan
	OpAsinh
	OpAcosh
	OpAtanh
	OpSign // also ints
	OpNot  // Bool only

	// Elementwise binary with numpy broadcasting.
	OpAdd
	OpSub
	OpMul
	OpDiv // ints truncate toward zero (C, ONNX)
	OpPow
	OpMax
	OpMin
	OpMod        // remainder with the divisor's sign (Python, numpy.mod); also ints
	OpFmod       // remainder with the dividend's sign (C fmod); also ints
	OpShiftLeft  // U8 only; shifts of 8 or more give 0
	OpShiftRight // U8 only
	OpEqual      // comparisons produce Bool
	OpLess
	OpLessOrEqual
	OpGreater
	OpGreaterOrEqual
	OpAnd // Bool only
	OpOr  // Bool only
	OpXor // Bool only

	// Other elementwise.
	OpWhere // Where(cond, x, y), all three broadcast
	OpCast  // Attrs.To

	// Linear algebra.
	OpMatMul // numpy matmul: batched, broadcast batch dims, 1-D promoted
	OpGemm   // alpha*op(A)*op(B) + beta*C, 2-D

	// Reductions over Attrs.Axes (all when empty), Attrs.KeepDims.
	OpReduceSum
	OpReduceMean
	OpReduceMax
	OpReduceMin
	OpReduceProd
	OpArgMax // over Attrs.Axis, I64 result; first index on ties
	OpArgMin
	OpSoftmax    // over Attrs.Axis
	OpLogSoftmax // over Attrs.Axis
	OpCumSum     // over Attrs.Axis, Attrs.Exclusive, Attrs.Reverse
	OpTopK       // Attrs.K largest (Attrs.Smallest: smallest) along Attrs.Axis; Attrs.Index 0 values, 1 I64 indices

	// Normalisation.
	OpLayerNorm    // over axes [Axis, rank), optional scale and bias inputs
	OpRMSNorm      // over axes [Axis, rank), optional scale input
	OpBatchNorm    // inference: x, scale, bias, mean, var; channel axis 1
	OpInstanceNorm // x [N, C, spatial...], scale [C], bias [C]: each [n, c] plane over its spatial elements

	// Convolution and pooling, NCHW.
	OpConv2D
	OpMaxPool2D
	OpAvgPool2D
	OpGlobalAvgPool
	OpConvTranspose // N-D (1 to 3 spatial dims): x [N, C, ...], w [C, M/Groups, k...]
	OpMaxPoolND     // 1 to 3 spatial dims, dilations; Attrs.Index 0 values, 1 I64 flat indices
	OpAvgPoolND     // 1 to 3 spatial dims, dilations; Attrs.CountPad
	OpMaxUnpool     // x and I64 flat indices → zeros of Attrs.Shape with x scattered at the indices

	// Sampling and detection.
	OpGridSample        // x [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (Attrs.GridSample)
	OpRoiAlign          // x [N, C, H, W], rois [R, 4], I64 batch indices [R] → [R, C, oh, ow] (Attrs.RoiAlign)
	OpNonMaxSuppression // boxes [B, N, 4], scores [B, C, N] → I64 [bound, 3], unused rows -1 (Attrs.NMS)
	OpDet               // determinant of the trailing square matrices: [..., M, M] → [...]

	// Shape and data movement.
	OpReshape
	OpTranspose
	OpConcat
	OpSplit // one piece: Attrs.Sizes along Attrs.Axis, piece Attrs.Index
	OpSlice
	OpGather
	OpExpand
	OpSqueeze
	OpUnsqueeze
	OpFlatten
	OpPad
	OpTile
	OpResize // Attrs.Resize: nearest, linear or cubic interpolation to its Sizes

	// Indexing by integer tensors (I32 or I64; negative indices count
	// from the end; out of range is a run-time error).
	OpGatherElements  // out[..i..] = x[..idx[..i..] on Attrs.Axis..]
	OpGatherND        // slices of x at index tuples, Attrs.BatchDims leading dims shared
	OpScatterElements // data with updates written at idx along Attrs.Axis, Attrs.Reduction
	OpScatterND       // data with update slices written at index tuples, Attrs.Reduction

	// Model blocks.
	OpAttention // softmax(Q·Kᵀ·scale + mask)·V over [B, H, S, D]
	OpRoPE      // rotary embedding on the last axis

	// Control flow (loop.go).
	OpLoop       // Attrs.Loop: runs a body graph while a condition holds; its value packs every result
	OpLoopOutput // result Attrs.Index of the OpLoop input

	// Quantization (ONNX's linear quantization: q = saturate(round(x/scale)
	// + zero), x = (q - zero)·scale; zero points are inputs, per tensor or
	// along Attrs.Axis).
	OpQuantizeLinear        // x, scale, zero → I8 or U8 (zero's dtype), round half to even, saturating
	OpDequantizeLinear      // q (I8, U8, I32), scale, zero → scale's dtype
	OpDynamicQuantizeLinear // F32 x → Attrs.Index 0 U8 q, 1 F32 scale, 2 U8 zero point (ONNX's formulas)
	OpMatMulInteger         // a, b (I8/U8), aZero, bZero → I32 matmul of (a - aZero)·(b - bZero)
	OpConvInteger           // x, w (I8/U8), xZero, wZero → I32 Conv2D of (x - xZero), (w - wZero)

	// Mixture of experts (build_moe.go): tokens routed to k of E experts
	// whose weights are stacked [E, ...], by I32/I64 expert ids [T, k].
	OpGroupedMatMul // x [T, K] or [T, k, K], w [E, K, N], ids [T, k] → [T, k, N]: row (t, j) times w[ids[t, j]]
	OpMoE           // x [T, H], ids, weights [T, k], gate, up [E, H, F], down [E, F, H] → [T, H]: Σ_j weights·SwiGLU expert

	// Fused ops: made by the fuse passes, never by the builder (see
	// fused.go for their inputs and attributes).
	OpFusedElementwise // Attrs.Program evaluated per element, inputs broadcast
	OpFusedMatMul      // MatMul with TransA/TransB and Attrs.Epilogue
	OpAddLayerNorm     // LayerNorm(x + r): x, r, optional scale and bias
	OpAddRMSNorm       // RMSNorm(x + r): x, r, optional scale
	OpFusedConv2D      // Conv2D with Attrs.Epilogue
	OpDynQuantMatMul   // dynamically quantized x times int8 w, dequantized, + bias
	OpQDQMatMul        // statically quantized (QDQ) x times int8 w, dequantized, + bias, activation
	OpQDQConv          // statically quantized (QDQ) Conv2D on int8, dequantized, + bias, activation

	// User ops (last, so that no op's value shifts).
	OpCustom // Attrs.Custom: an op with the user's own kernels (custom.go)

	numOps
)

var opNames = [numOps]string{
	OpInvalid: "Invalid", OpInput: "Input", OpParam: "Param", OpConstant: "Constant",
	OpNeg: "Neg", OpAbs: "Abs", OpExp: "Exp", OpLog: "Log", OpSqrt: "Sqrt", OpRsqrt: "Rsqrt",
	OpReciprocal: "Reciprocal", OpTanh: "Tanh", OpSigmoid: "Sigmoid", OpRelu: "Relu",
	OpLeakyRelu: "LeakyRelu", OpGelu: "Gelu", OpGeluTanh: "GeluTanh", OpSilu: "Silu", OpErf: "Erf",
	OpSin: "Sin", OpCos: "Cos", OpFloor: "Floor", OpCeil: "Ceil", OpRound: "Round", OpClip: "Clip",
	OpElu: "Elu", OpSelu: "Selu", OpCelu: "Celu", OpSoftplus: "Softplus", OpSoftsign: "Softsign",
	OpThresholdedRelu: "ThresholdedRelu", OpShrink: "Shrink", OpTan: "Tan", OpSinh: "Sinh", OpCosh: "Cosh",
	OpAsin: "Asin", OpAcos: "Acos", OpAtan: "Atan", OpAsinh: "Asinh", OpAcosh: "Acosh", OpAtanh: "Atanh",
	OpSign: "Sign", OpNot: "Not",
	OpAdd: "Add", OpSub: "Sub", OpMul: "Mul", OpDiv: "Div", OpPow: "Pow", OpMax: "Max", OpMin: "Min",
	OpMod: "Mod", OpFmod: "Fmod", OpShiftLeft: "ShiftLeft", OpShiftRight: "ShiftRight",
	OpEqual: "Equal", OpLess: "Less", OpLessOrEqual: "LessOrEqual", OpGreater: "Greater",
	OpGreaterOrEqual: "GreaterOrEqual", OpAnd: "And", OpOr: "Or", OpXor: "Xor",
	OpWhere: "Where", OpCast: "Cast",
	OpMatMul: "MatMul", OpGemm: "Gemm",
	OpReduceSum: "ReduceSum", OpReduceMean: "ReduceMean", OpReduceMax: "ReduceMax",
	OpReduceMin: "ReduceMin", OpReduceProd: "ReduceProd", OpArgMax: "ArgMax", OpArgMin: "ArgMin",
	OpSoftmax: "Softmax", OpLogSoftmax: "LogSoftmax", OpCumSum: "CumSum", OpTopK: "TopK",
	OpLayerNorm: "LayerNorm", OpRMSNorm: "RMSNorm", OpBatchNorm: "BatchNorm", OpInstanceNorm: "InstanceNorm",
	OpConv2D: "Conv2D", OpMaxPool2D: "MaxPool2D", OpAvgPool2D: "AvgPool2D", OpGlobalAvgPool: "GlobalAvgPool",
	OpConvTranspose: "ConvTranspose", OpMaxPoolND: "MaxPoolND", OpAvgPoolND: "AvgPoolND", OpMaxUnpool: "MaxUnpool",
	OpGridSample: "GridSample", OpRoiAlign: "RoiAlign", OpNonMaxSuppression: "NonMaxSuppression", OpDet: "Det",
	OpReshape: "Reshape", OpTranspose: "Transpose", OpConcat: "Concat", OpSplit: "Split",
	OpSlice: "Slice", OpGather: "Gather", OpExpand: "Expand", OpSqueeze: "Squeeze",
	OpUnsqueeze: "Unsqueeze", OpFlatten: "Flatten", OpPad: "Pad", OpTile: "Tile", OpResize: "Resize",
	OpGatherElements: "GatherElements", OpGatherND: "GatherND", OpScatterElements: "ScatterElements",
	OpScatterND: "ScatterND",
	OpAttention: "Attention", OpRoPE: "RoPE", OpLoop: "Loop", OpLoopOutput: "LoopOutput",
	OpQuantizeLinear: "QuantizeLinear", OpDequantizeLinear: "DequantizeLinear",
	OpDynamicQuantizeLinear: "DynamicQuantizeLinear", OpMatMulInteger: "MatMulInteger", OpConvInteger: "ConvInteger",
	OpGroupedMatMul: "GroupedMatMul", OpMoE: "MoE",
	OpFusedElementwise: "FusedElementwise", OpFusedMatMul: "FusedMatMul", OpAddLayerNorm: "AddLayerNorm",
	OpAddRMSNorm: "AddRMSNorm", OpFusedConv2D: "FusedConv2D", OpDynQuantMatMul: "DynQuantMatMul",
	OpQDQMatMul: "QDQMatMul", OpQDQConv: "QDQConv", OpCustom: "Custom",
}

func (o Op) String() string {
	if o < numOps && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Ops lists every op kind the builder makes (sources included, OpInvalid,
// the fused ops of FusedOps and OpCustom, which needs a user's spec,
// excluded).
func Ops() []Op {
	out := make([]Op, 0, firstFused-1)
	for o := OpInput; o < firstFused; o++ {
		out = append(out, o)
	}
	return out
}

// IsSource reports whether the op has no inputs (Input, Param, Constant).
func (o Op) IsSource() bool { return o == OpInput || o == OpParam || o == OpConstant }

// IsUnary reports whether the op is elementwise with one input.
func (o Op) IsUnary() bool { return o >= OpNeg && o <= OpNot }

// IsBinary reports whether the op is elementwise with two broadcast inputs.
func (o Op) IsBinary() bool { return o >= OpAdd && o <= OpXor }

// IsCompare reports whether the op is a comparison producing Bool.
func (o Op) IsCompare() bool { return o >= OpEqual && o <= OpGreaterOrEqual }

// IsElementwise reports whether every output element depends only on the
// input elements at the same (broadcast) index.
func (o Op) IsElementwise() bool { return o.IsUnary() || o.IsBinary() || o == OpWhere || o == OpCast }

// IsReduce reports whether the op reduces over Attrs.Axes.
func (o Op) IsReduce() bool { return o >= OpReduceSum && o <= OpReduceProd }

// IsView reports whether the op only reinterprets its input's shape, so its
// output can alias the input's bytes without a copy.
func (o Op) IsView() bool {
	return o == OpReshape || o == OpSqueeze || o == OpUnsqueeze || o == OpFlatten
}

// ParseOp maps an op name (as String prints it) back to the op.
func ParseOp(name string) (Op, error) {
	for o := OpInput; o < numOps; o++ {
		if opNames[o] == name {
			return o, nil
		}
	}
	return OpInvalid, fmt.Errorf("graph: unknown op %q", name)
}
