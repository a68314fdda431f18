package graph

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/tensor"
)

// infer checks an op's inputs and attributes and returns the dtype and
// shape of its result. It normalises attributes in place (negative axes,
// defaults) and is idempotent on normalised attributes, so Verify can
// re-run it on a finished graph. Attributes that cannot be normalised
// idempotently (Reshape targets, Slice bounds) are resolved by the builder
// and only validated here.
func infer(op Op, a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if want, ok := arity(op); ok && !want(len(ins)) {
		return 0, nil, fmt.Errorf("wrong number of inputs (%d)", len(ins))
	}
	switch {
	case op.IsSource():
		return 0, nil, fmt.Errorf("source ops are made by Input, Param and Constant")
	case op.IsUnary():
		return inferUnary(op, a, ins[0])
	case op.IsBinary():
		return inferBinary(op, ins[0], ins[1])
	case op.IsReduce():
		return inferReduce(op, a, ins[0])
	}
	if f, ok := inferTable[op]; ok {
		return f(a, ins)
	}
	return 0, nil, fmt.Errorf("unknown op %v", op)
}

type inferFunc func(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error)

// inferTable covers the ops that are not in a uniform family.
var inferTable map[Op]inferFunc

func init() {
	inferTable = map[Op]inferFunc{
		OpWhere: inferWhere, OpCast: inferCast,
		OpMatMul: inferMatMul, OpGemm: inferGemm,
		OpArgMax: inferArg, OpArgMin: inferArg,
		OpSoftmax: inferAxisSame(true), OpLogSoftmax: inferAxisSame(true), OpCumSum: inferAxisSame(false),
		OpTopK:      inferTopK,
		OpLayerNorm: inferNorm, OpRMSNorm: inferNorm, OpBatchNorm: inferBatchNorm,
		OpInstanceNorm: inferInstanceNorm,
		OpConv2D:       inferConv, OpMaxPool2D: inferPool, OpAvgPool2D: inferPool,
		OpGlobalAvgPool: inferGlobalPool,
		OpReshape:       inferReshape, OpTranspose: inferTranspose, OpConcat: inferConcat,
		OpSplit: inferSplit, OpSlice: inferSlice, OpGather: inferGather, OpExpand: inferExpand,
		OpSqueeze: inferSqueeze, OpUnsqueeze: inferUnsqueeze, OpFlatten: inferFlatten,
		OpPad: inferPad, OpTile: inferTile, OpResize: inferResize, OpConvTranspose: inferConvTranspose,
		OpMaxPoolND: inferPoolND(true), OpAvgPoolND: inferPoolND(false), OpMaxUnpool: inferMaxUnpool,
		OpGridSample: inferGridSample, OpRoiAlign: inferRoiAlign, OpNonMaxSuppression: inferNMS, OpDet: inferDet,
		OpGatherElements: inferElements, OpScatterElements: inferElements,
		OpGatherND: inferGatherND, OpScatterND: inferScatterND,
		OpAttention: inferAttention, OpRoPE: inferRoPE, OpCustom: inferCustom,
		OpLoop: inferLoop, OpLoopOutput: inferLoopOutput,
		OpQuantizeLinear: inferQuantize, OpDequantizeLinear: inferDequantize,
		OpDynamicQuantizeLinear: inferDynamicQuantize, OpMatMulInteger: inferMatMulInteger,
		OpConvInteger:      inferConvInteger,
		OpFusedElementwise: inferFusedElementwise, OpFusedMatMul: inferFusedMatMul,
		OpAddLayerNorm: inferAddNorm(3), OpAddRMSNorm: inferAddNorm(2), OpFusedConv2D: inferFusedConv,
		OpDynQuantMatMul: inferDynQuantMatMul, OpQDQMatMul: inferQDQMatMul, OpQDQConv: inferQDQConv,
		OpGroupedMatMul: inferGroupedMatMul, OpMoE: inferMoE,
	}
}

// arity returns a predicate on the input count for ops with a fixed or
// bounded number of inputs.
func arity(op Op) (func(int) bool, bool) {
	exactly := func(k int) func(int) bool { return func(n int) bool { return n == k } }
	between := func(lo, hi int) func(int) bool { return func(n int) bool { return n >= lo && n <= hi } }
	switch {
	case op == OpDynQuantMatMul:
		return between(4, 5), true
	case op == OpQDQMatMul, op == OpQDQConv:
		return between(6, 7), true
	case op.IsFused(), op == OpCustom, op == OpLoop: // the count depends on attributes: inference checks it
		return nil, false
	case op.IsUnary(), op.IsReduce():
		return exactly(1), true
	case op.IsBinary():
		return exactly(2), true
	}
	switch op {
	case OpWhere:
		return exactly(3), true
	case OpMatMul, OpGather, OpGatherElements, OpGatherND, OpMaxUnpool, OpGridSample, OpNonMaxSuppression:
		return exactly(2), true
	case OpRoiAlign, OpGroupedMatMul:
		return exactly(3), true
	case OpMoE:
		return exactly(6), true
	case OpScatterElements, OpScatterND:
		return exactly(3), true
	case OpRoPE, OpInstanceNorm, OpQuantizeLinear, OpDequantizeLinear:
		return exactly(3), true
	case OpMatMulInteger, OpConvInteger:
		return exactly(4), true
	case OpGemm, OpConv2D, OpConvTranspose:
		return between(2, 3), true
	case OpLayerNorm:
		return between(1, 3), true
	case OpRMSNorm:
		return between(1, 2), true
	case OpBatchNorm:
		return exactly(5), true
	case OpAttention:
		return between(3, 5), true
	case OpConcat:
		return func(n int) bool { return n >= 1 }, true
	}
	return exactly(1), true
}

// Dtype classes accepted by the elementwise ops.
func isSigned(d tensor.DType) bool {
	return d.IsFloat() || d == tensor.I8 || d == tensor.I32 || d == tensor.I64
}
func isNumeric(d tensor.DType) bool { return d.IsFloat() || d.IsInt() }

func inferUnary(op Op, a *Attrs, x *Node) (tensor.DType, tensor.Shape, error) {
	ok := x.DType.IsFloat()
	switch op {
	case OpNeg, OpAbs, OpRelu:
		ok = isSigned(x.DType)
	case OpSign:
		ok = isNumeric(x.DType)
	case OpCelu:
		if a.Alpha == 0 {
			return 0, nil, fmt.Errorf("alpha 0 (Celu divides by it)")
		}
	case OpClip:
		ok = isNumeric(x.DType)
		if a.Min > a.Max {
			return 0, nil, fmt.Errorf("min %v > max %v", a.Min, a.Max)
		}
	case OpNot:
		ok = x.DType == tensor.Bool
	}
	if !ok {
		return 0, nil, fmt.Errorf("dtype %v not supported", x.DType)
	}
	return x.DType, x.Shape.Clone(), nil
}

func inferBinary(op Op, x, y *Node) (tensor.DType, tensor.Shape, error) {
	if x.DType != y.DType {
		return 0, nil, fmt.Errorf("dtypes %v and %v differ (insert a Cast)", x.DType, y.DType)
	}
	s, err := tensor.Broadcast(x.Shape, y.Shape)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case op == OpAnd || op == OpOr || op == OpXor:
		if x.DType != tensor.Bool {
			return 0, nil, fmt.Errorf("needs bool operands, got %v", x.DType)
		}
		return tensor.Bool, s, nil
	case op == OpEqual && x.DType == tensor.Bool:
		return tensor.Bool, s, nil
	case !isNumeric(x.DType):
		return 0, nil, fmt.Errorf("dtype %v not supported", x.DType)
	case (op == OpShiftLeft || op == OpShiftRight) && x.DType != tensor.U8:
		return 0, nil, fmt.Errorf("needs u8 operands, got %v", x.DType)
	case op.IsCompare():
		return tensor.Bool, s, nil
	}
	return x.DType, s, nil
}

func inferWhere(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	c, x, y := ins[0], ins[1], ins[2]
	if c.DType != tensor.Bool {
		return 0, nil, fmt.Errorf("condition must be bool, got %v", c.DType)
	}
	if x.DType != y.DType {
		return 0, nil, fmt.Errorf("branch dtypes %v and %v differ", x.DType, y.DType)
	}
	s, err := tensor.Broadcast(c.Shape, x.Shape, y.Shape)
	return x.DType, s, err
}

func inferCast(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if !a.To.Valid() {
		return 0, nil, fmt.Errorf("invalid target dtype %v", a.To)
	}
	return a.To, ins[0].Shape.Clone(), nil
}

// normAxes makes axes non-negative, sorted and unique.
func normAxes(axes []int, rank int) ([]int, error) {
	out := make([]int, 0, len(axes))
	for _, ax := range axes {
		n, err := tensor.NormAxis(ax, rank)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("axis %d repeated", ax)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

func inferReduce(op Op, a *Attrs, x *Node) (tensor.DType, tensor.Shape, error) {
	if !isNumeric(x.DType) || (op == OpReduceMean && !x.DType.IsFloat()) {
		return 0, nil, fmt.Errorf("dtype %v not supported", x.DType)
	}
	axes, err := normAxes(a.Axes, x.Shape.Rank())
	if err != nil {
		return 0, nil, err
	}
	if len(axes) == 0 { // ONNX and numpy: no axes means all of them
		for i := range x.Shape {
			axes = append(axes, i)
		}
	}
	a.Axes = axes
	if op == OpReduceMax || op == OpReduceMin {
		for _, ax := range axes {
			if x.Shape[ax] == 0 {
				return 0, nil, fmt.Errorf("%v of an empty axis %d has no identity", op, ax)
			}
		}
	}
	return x.DType, x.Shape.Reduced(axes, a.KeepDims), nil
}

// numericAxis checks that x is numeric and returns axis normalised
// against its rank (ArgMax/ArgMin and TopK).
func numericAxis(x *Node, axis int) (int, error) {
	if !isNumeric(x.DType) {
		return 0, fmt.Errorf("dtype %v not supported", x.DType)
	}
	return tensor.NormAxis(axis, x.Shape.Rank())
}

func inferArg(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	ax, err := numericAxis(x, a.Axis)
	if err != nil {
		return 0, nil, err
	}
	if x.Shape[ax] == 0 {
		return 0, nil, fmt.Errorf("empty axis %d", ax)
	}
	a.Axis = ax
	return tensor.I64, x.Shape.Reduced([]int{ax}, a.KeepDims), nil
}

// inferTopK: the axis shrinks to K; values keep x's dtype, indices are
// I64.
func inferTopK(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	ax, err := numericAxis(x, a.Axis)
	if err != nil {
		return 0, nil, err
	}
	if a.K < 0 || a.K > x.Shape[ax] {
		return 0, nil, fmt.Errorf("k = %d out of range [0, %d] for axis %d", a.K, x.Shape[ax], ax)
	}
	if a.Index != 0 && a.Index != 1 {
		return 0, nil, fmt.Errorf("output %d: TopK has outputs 0 (values) and 1 (indices)", a.Index)
	}
	a.Axis = ax
	s := x.Shape.Clone()
	s[ax] = a.K
	if a.Index == 1 {
		return tensor.I64, s, nil
	}
	return x.DType, s, nil
}

// inferAxisSame covers Softmax, LogSoftmax (float only) and CumSum: one
// axis, same shape.
func inferAxisSame(floatOnly bool) inferFunc {
	return func(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
		x := ins[0]
		if !isNumeric(x.DType) || (floatOnly && !x.DType.IsFloat()) {
			return 0, nil, fmt.Errorf("dtype %v not supported", x.DType)
		}
		ax, err := tensor.NormAxis(a.Axis, x.Shape.Rank())
		if err != nil {
			return 0, nil, err
		}
		a.Axis = ax
		return x.DType, x.Shape.Clone(), nil
	}
}
