package graph

import (
	"math"

	"github.com/kilnml/kiln/tensor"
)

// Elementwise unary ops. Float ops take F32, F64, F16 and BF16.

func (g *Graph) Neg(x *Node) *Node        { return g.add(OpNeg, Attrs{}, x) }
func (g *Graph) Abs(x *Node) *Node        { return g.add(OpAbs, Attrs{}, x) }
func (g *Graph) Exp(x *Node) *Node        { return g.add(OpExp, Attrs{}, x) }
func (g *Graph) Log(x *Node) *Node        { return g.add(OpLog, Attrs{}, x) }
func (g *Graph) Sqrt(x *Node) *Node       { return g.add(OpSqrt, Attrs{}, x) }
func (g *Graph) Rsqrt(x *Node) *Node      { return g.add(OpRsqrt, Attrs{}, x) }
func (g *Graph) Reciprocal(x *Node) *Node { return g.add(OpReciprocal, Attrs{}, x) }
func (g *Graph) Tanh(x *Node) *Node       { return g.add(OpTanh, Attrs{}, x) }
func (g *Graph) Sigmoid(x *Node) *Node    { return g.add(OpSigmoid, Attrs{}, x) }
func (g *Graph) Relu(x *Node) *Node       { return g.add(OpRelu, Attrs{}, x) }
func (g *Graph) Erf(x *Node) *Node        { return g.add(OpErf, Attrs{}, x) }
func (g *Graph) Sin(x *Node) *Node        { return g.add(OpSin, Attrs{}, x) }
func (g *Graph) Cos(x *Node) *Node        { return g.add(OpCos, Attrs{}, x) }
func (g *Graph) Floor(x *Node) *Node      { return g.add(OpFloor, Attrs{}, x) }
func (g *Graph) Ceil(x *Node) *Node       { return g.add(OpCeil, Attrs{}, x) }

// Gelu is x·Φ(x) = x/2·(1 + erf(x/√2)), the exact GELU. Like GeluTanh
// and Silu it is its formula in IEEE arithmetic at the infinities too:
// +Inf at +Inf, and NaN at -Inf, where the gate is 0 and -Inf·0 is NaN
// (not the limit -0); NaN for NaN. That is what PyTorch, ONNX Runtime and
// ONNX's reference implementation compute, and what the spelled-out
// forms exporters write compute, so recognising one (fuse) never changes
// a result.
func (g *Graph) Gelu(x *Node) *Node { return g.add(OpGelu, Attrs{}, x) }

// GeluTanh is GELU's tanh approximation, x/2·(1 + tanh(√(2/π)·(x +
// 0.044715·x³))): +Inf at +Inf, NaN at -Inf and NaN (see Gelu).
func (g *Graph) GeluTanh(x *Node) *Node { return g.add(OpGeluTanh, Attrs{}, x) }

// Silu is x·sigmoid(x) = x/(1 + e^-x): +Inf at +Inf, NaN at -Inf (-Inf·0,
// as torch.nn.functional.silu and the exported Mul(Sigmoid(x), x) give)
// and NaN for NaN (see Gelu).
func (g *Graph) Silu(x *Node) *Node { return g.add(OpSilu, Attrs{}, x) }

func (g *Graph) Tan(x *Node) *Node   { return g.add(OpTan, Attrs{}, x) }
func (g *Graph) Sinh(x *Node) *Node  { return g.add(OpSinh, Attrs{}, x) }
func (g *Graph) Cosh(x *Node) *Node  { return g.add(OpCosh, Attrs{}, x) }
func (g *Graph) Asin(x *Node) *Node  { return g.add(OpAsin, Attrs{}, x) }
func (g *Graph) Acos(x *Node) *Node  { return g.add(OpAcos, Attrs{}, x) }
func (g *Graph) Atan(x *Node) *Node  { return g.add(OpAtan, Attrs{}, x) }
func (g *Graph) Asinh(x *Node) *Node { return g.add(OpAsinh, Attrs{}, x) }
func (g *Graph) Acosh(x *Node) *Node { return g.add(OpAcosh, Attrs{}, x) }
func (g *Graph) Atanh(x *Node) *Node { return g.add(OpAtanh, Attrs{}, x) }

// Softplus is log(1 + e^x), computed as max(x, 0) + log(1 + e^-|x|) so
// that it is x, not +Inf, where e^x overflows.
func (g *Graph) Softplus(x *Node) *Node { return g.add(OpSoftplus, Attrs{}, x) }

// Softsign is x / (1 + |x|) (NaN at ±Inf, as the formula gives).
func (g *Graph) Softsign(x *Node) *Node { return g.add(OpSoftsign, Attrs{}, x) }

// Sign is -1, 0 or 1 by the sign of x (floats and ints); NaN stays NaN
// and a zero keeps its sign.
func (g *Graph) Sign(x *Node) *Node { return g.add(OpSign, Attrs{}, x) }

// Elu is x for x > 0 and alpha·(e^x - 1) otherwise.
func (g *Graph) Elu(x *Node, alpha float32) *Node { return g.add(OpElu, Attrs{Alpha: alpha}, x) }

// Selu is gamma·x for x > 0 and gamma·alpha·(e^x - 1) otherwise.
func (g *Graph) Selu(x *Node, alpha, gamma float32) *Node {
	return g.add(OpSelu, Attrs{Alpha: alpha, Beta: gamma}, x)
}

// Celu is max(0, x) + min(0, alpha·(e^(x/alpha) - 1)); alpha must not be 0.
func (g *Graph) Celu(x *Node, alpha float32) *Node { return g.add(OpCelu, Attrs{Alpha: alpha}, x) }

// ThresholdedRelu is x where x > alpha and 0 elsewhere (NaN gives 0).
func (g *Graph) ThresholdedRelu(x *Node, alpha float32) *Node {
	return g.add(OpThresholdedRelu, Attrs{Alpha: alpha}, x)
}

// Shrink is x + bias for x < -lambd, x - bias for x > lambd and 0
// between (NaN gives 0), as ONNX's Shrink.
func (g *Graph) Shrink(x *Node, lambd, bias float32) *Node {
	return g.add(OpShrink, Attrs{Alpha: lambd, Beta: bias}, x)
}

// Round rounds half to even, as numpy and ONNX do.
func (g *Graph) Round(x *Node) *Node { return g.add(OpRound, Attrs{}, x) }

// Not is logical negation of a Bool tensor.
func (g *Graph) Not(x *Node) *Node { return g.add(OpNot, Attrs{}, x) }

// LeakyRelu is x for x >= 0 and alpha*x otherwise.
func (g *Graph) LeakyRelu(x *Node, alpha float32) *Node {
	return g.add(OpLeakyRelu, Attrs{Alpha: alpha}, x)
}

// Clip limits x to [lo, hi]; pass ±Inf for an open side. For integer
// inputs the bounds are converted to the integer type.
func (g *Graph) Clip(x *Node, lo, hi float32) *Node {
	return g.add(OpClip, Attrs{Min: lo, Max: hi}, x)
}

// ClipMin is Clip with only a lower bound.
func (g *Graph) ClipMin(x *Node, lo float32) *Node { return g.Clip(x, lo, float32(math.Inf(1))) }

// Binary ops broadcast their operands as numpy does; both must have the
// same dtype (no implicit promotion: insert a Cast).

func (g *Graph) Add(x, y *Node) *Node { return g.add(OpAdd, Attrs{}, x, y) }
func (g *Graph) Sub(x, y *Node) *Node { return g.add(OpSub, Attrs{}, x, y) }
func (g *Graph) Mul(x, y *Node) *Node { return g.add(OpMul, Attrs{}, x, y) }

// Div divides; integer division truncates toward zero and division by
// zero is an error at run time.
func (g *Graph) Div(x, y *Node) *Node { return g.add(OpDiv, Attrs{}, x, y) }
func (g *Graph) Pow(x, y *Node) *Node { return g.add(OpPow, Attrs{}, x, y) }

// Max and Min propagate NaN, as numpy.maximum/minimum do.
func (g *Graph) Max(x, y *Node) *Node { return g.add(OpMax, Attrs{}, x, y) }
func (g *Graph) Min(x, y *Node) *Node { return g.add(OpMin, Attrs{}, x, y) }

// Mod is the remainder of x / y with the sign of y (numpy.mod, Python's
// %); Fmod has the sign of x (C's fmod, Go's %). Integer division by zero
// is an error at run time; for floats it gives NaN.
func (g *Graph) Mod(x, y *Node) *Node  { return g.add(OpMod, Attrs{}, x, y) }
func (g *Graph) Fmod(x, y *Node) *Node { return g.add(OpFmod, Attrs{}, x, y) }

// ShiftLeft and ShiftRight shift the bits of U8 x by y; a shift of 8 or
// more gives 0.
func (g *Graph) ShiftLeft(x, y *Node) *Node  { return g.add(OpShiftLeft, Attrs{}, x, y) }
func (g *Graph) ShiftRight(x, y *Node) *Node { return g.add(OpShiftRight, Attrs{}, x, y) }

// Comparisons produce Bool.

func (g *Graph) Equal(x, y *Node) *Node          { return g.add(OpEqual, Attrs{}, x, y) }
func (g *Graph) Less(x, y *Node) *Node           { return g.add(OpLess, Attrs{}, x, y) }
func (g *Graph) LessOrEqual(x, y *Node) *Node    { return g.add(OpLessOrEqual, Attrs{}, x, y) }
func (g *Graph) Greater(x, y *Node) *Node        { return g.add(OpGreater, Attrs{}, x, y) }
func (g *Graph) GreaterOrEqual(x, y *Node) *Node { return g.add(OpGreaterOrEqual, Attrs{}, x, y) }
func (g *Graph) And(x, y *Node) *Node            { return g.add(OpAnd, Attrs{}, x, y) }
func (g *Graph) Or(x, y *Node) *Node             { return g.add(OpOr, Attrs{}, x, y) }
func (g *Graph) Xor(x, y *Node) *Node            { return g.add(OpXor, Attrs{}, x, y) }

// Where picks x where cond is true and y elsewhere; all three broadcast.
func (g *Graph) Where(cond, x, y *Node) *Node { return g.add(OpWhere, Attrs{}, cond, x, y) }

// Cast converts x to dtype to (see tensor.Convert for the rules).
func (g *Graph) Cast(x *Node, to tensor.DType) *Node { return g.add(OpCast, Attrs{To: to}, x) }
