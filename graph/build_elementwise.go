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

// Comparisons produce Bool.

func (g *Graph) Equal(x, y *Node) *Node          { return g.add(OpEqual, Attrs{}, x, y) }
func (g *Graph) Less(x, y *Node) *Node           { return g.add(OpLess, Attrs{}, x, y) }
func (g *Graph) LessOrEqual(x, y *Node) *Node    { return g.add(OpLessOrEqual, Attrs{}, x, y) }
func (g *Graph) Greater(x, y *Node) *Node        { return g.add(OpGreater, Attrs{}, x, y) }
func (g *Graph) GreaterOrEqual(x, y *Node) *Node { return g.add(OpGreaterOrEqual, Attrs{}, x, y) }
func (g *Graph) And(x, y *Node) *Node            { return g.add(OpAnd, Attrs{}, x, y) }
func (g *Graph) Or(x, y *Node) *Node             { return g.add(OpOr, Attrs{}, x, y) }

// Where picks x where cond is true and y elsewhere; all three broadcast.
func (g *Graph) Where(cond, x, y *Node) *Node { return g.add(OpWhere, Attrs{}, cond, x, y) }

// Cast converts x to dtype to (see tensor.Convert for the rules).
func (g *Graph) Cast(x *Node, to tensor.DType) *Node { return g.add(OpCast, Attrs{To: to}, x) }
