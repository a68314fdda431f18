package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// EwOp is one row of the elementwise op table: everything kiln's CPU side
// knows about a float elementwise op. The reference kernels, the
// vectorised kernels, FusedElementwise (both paths), the GEMM and
// convolution epilogues and fuse's activation recogniser all read it, so
// an op is described once. (The logical and typed elementwise ops — Not,
// the comparisons, And, Or, Where, Cast — have no float formula and are
// registered by unary.go and binary.go.)
type EwOp struct {
	Op graph.Op
	// Unary or Binary is the float64 formula, the reference of every
	// kernel of the op: F32 widens, applies it and rounds once. An op with
	// attributes has WithAttrs instead, which binds them (and rejects bad
	// ones).
	Unary     func(x float64) float64
	Binary    func(a, b float64) float64
	WithAttrs func(a graph.Attrs) (func(x float64) float64, error)
	// DTypes are the dtypes of the reference kernel (the integer ones run
	// the integer forms in unary.go and binary.go).
	DTypes []tensor.DType
	// Tol is the relative error a faster F32 kernel may show (0: exact).
	Tol float64
	// InPlace: the output may share memory with input 0.
	InPlace bool
	// Vec is the ops/asm kernel of the op on F32, when it has one.
	Vec EwVec
	// Act is the GEMM and convolution epilogue activation of the op
	// (asm.ActNone if an epilogue cannot apply it).
	Act asm.Activation
	// Role is what fuse does with the op besides putting it in
	// FusedElementwise programs (which every row may be).
	Role EwRole
}

// EwVec names an ops/asm elementwise kernel: a unary or a binary one,
// or none (the zero value).
type EwVec struct {
	Unary  asm.EwUnary
	Binary asm.EwBinary
	Arity  int // 1 or 2; 0 for none
}

func vecUnary(k asm.EwUnary) EwVec   { return EwVec{Unary: k, Arity: 1} }
func vecBinary(k asm.EwBinary) EwVec { return EwVec{Binary: k, Arity: 2} }

// EwRole is a set of fusion roles.
type EwRole uint8

const (
	// RoleRecognised: fuse replaces a spelled-out form of the op (x·Φ(x)
	// written with Erf, Mul and Add, say) by the op, recognising it by
	// evaluating the cone with the formulas of its ops.
	RoleRecognised EwRole = 1 << iota
	// RoleSpelling: an op the recogniser evaluates in those cones; a cone
	// with any other op is left alone.
	RoleSpelling
)

// ewTable is the elementwise op table. For a new elementwise op without
// assembly a row here is all ops needs; with assembly, Vec names the
// ops/asm kernel.
var ewTable = func() []EwOp {
	floats := []tensor.DType{tensor.F32, tensor.F64}
	signed := []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.I32, tensor.I64}
	numeric := []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64}
	const transcendental = 2e-6
	act := func(a asm.Activation) func(float64) float64 { return a.Formula() }
	rows := []EwOp{
		{Op: graph.OpNeg, Unary: func(x float64) float64 { return -x }, DTypes: signed, Vec: vecUnary(asm.EwNeg), Role: RoleSpelling},
		{Op: graph.OpAbs, Unary: math.Abs, DTypes: signed, Vec: vecUnary(asm.EwAbs)},
		{Op: graph.OpRelu, Unary: act(asm.ActRelu), DTypes: signed, Vec: vecUnary(asm.EwRelu), Act: asm.ActRelu},
		{Op: graph.OpExp, Unary: math.Exp, DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwExp), Role: RoleSpelling},
		{Op: graph.OpLog, Unary: math.Log, DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwLog)},
		{Op: graph.OpSqrt, Unary: math.Sqrt, DTypes: floats, Tol: 2e-7, Role: RoleSpelling},
		{Op: graph.OpRsqrt, Unary: func(x float64) float64 { return 1 / math.Sqrt(x) }, DTypes: floats, Tol: transcendental},
		{Op: graph.OpReciprocal, Unary: func(x float64) float64 { return 1 / x }, DTypes: floats, Tol: 1e-6, Role: RoleSpelling},
		{Op: graph.OpTanh, Unary: act(asm.ActTanh), DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwTanh),
			Act: asm.ActTanh, Role: RoleSpelling},
		{Op: graph.OpSigmoid, Unary: act(asm.ActSigmoid), DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwSigmoid),
			Act: asm.ActSigmoid, Role: RoleRecognised | RoleSpelling},
		{Op: graph.OpErf, Unary: math.Erf, DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwErf), Role: RoleSpelling},
		{Op: graph.OpGelu, Unary: act(asm.ActGelu), DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwGelu),
			Act: asm.ActGelu, Role: RoleRecognised},
		{Op: graph.OpGeluTanh, Unary: act(asm.ActGeluTanh), DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwGeluTanh),
			Act: asm.ActGeluTanh, Role: RoleRecognised},
		{Op: graph.OpSilu, Unary: act(asm.ActSilu), DTypes: floats, Tol: transcendental, Vec: vecUnary(asm.EwSilu),
			Act: asm.ActSilu, Role: RoleRecognised},
		{Op: graph.OpSin, Unary: math.Sin, DTypes: floats, Tol: transcendental},
		{Op: graph.OpCos, Unary: math.Cos, DTypes: floats, Tol: transcendental},
		{Op: graph.OpFloor, Unary: math.Floor, DTypes: floats},
		{Op: graph.OpCeil, Unary: math.Ceil, DTypes: floats},
		{Op: graph.OpRound, Unary: math.RoundToEven, DTypes: floats},
		{Op: graph.OpLeakyRelu, WithAttrs: leakyRelu, DTypes: floats},
		// Clip's fast kernel is two passes of the vector×scalar Max and
		// Min (clipF32), not one asm kernel: elementwise_fast.go
		// registers it.
		{Op: graph.OpClip, WithAttrs: clip, DTypes: numeric},
		{Op: graph.OpElu, WithAttrs: elu, DTypes: floats, Tol: transcendental},
		{Op: graph.OpSelu, WithAttrs: selu, DTypes: floats, Tol: transcendental},
		{Op: graph.OpCelu, WithAttrs: celu, DTypes: floats, Tol: transcendental},
		{Op: graph.OpThresholdedRelu, WithAttrs: thresholdedRelu, DTypes: floats},
		{Op: graph.OpShrink, WithAttrs: shrink, DTypes: floats, Tol: 2e-7},
		{Op: graph.OpSoftplus, Unary: softplus, DTypes: floats, Tol: transcendental},
		{Op: graph.OpSoftsign, Unary: func(x float64) float64 { return x / (1 + math.Abs(x)) }, DTypes: floats, Tol: 1e-6},
		{Op: graph.OpTan, Unary: math.Tan, DTypes: floats, Tol: transcendental},
		{Op: graph.OpSinh, Unary: math.Sinh, DTypes: floats, Tol: transcendental},
		{Op: graph.OpCosh, Unary: math.Cosh, DTypes: floats, Tol: transcendental},
		{Op: graph.OpAsin, Unary: math.Asin, DTypes: floats, Tol: transcendental},
		{Op: graph.OpAcos, Unary: math.Acos, DTypes: floats, Tol: transcendental},
		{Op: graph.OpAtan, Unary: math.Atan, DTypes: floats, Tol: transcendental},
		{Op: graph.OpAsinh, Unary: math.Asinh, DTypes: floats, Tol: transcendental},
		{Op: graph.OpAcosh, Unary: math.Acosh, DTypes: floats, Tol: transcendental},
		{Op: graph.OpAtanh, Unary: math.Atanh, DTypes: floats, Tol: transcendental},
		{Op: graph.OpSign, Unary: sign, DTypes: numeric},

		// Go's max and min return NaN if either operand is NaN, like
		// numpy.maximum/minimum.
		{Op: graph.OpAdd, Binary: func(a, b float64) float64 { return a + b }, DTypes: numeric, Tol: 2e-7,
			Vec: vecBinary(asm.EwAdd), Role: RoleSpelling},
		{Op: graph.OpSub, Binary: func(a, b float64) float64 { return a - b }, DTypes: numeric, Tol: 2e-7,
			Vec: vecBinary(asm.EwSub), Role: RoleSpelling},
		{Op: graph.OpMul, Binary: func(a, b float64) float64 { return a * b }, DTypes: numeric, Tol: 2e-7,
			Vec: vecBinary(asm.EwMul), Role: RoleSpelling},
		{Op: graph.OpDiv, Binary: func(a, b float64) float64 { return a / b }, DTypes: numeric, Tol: 1e-6,
			Vec: vecBinary(asm.EwDiv), Role: RoleSpelling},
		{Op: graph.OpPow, Binary: math.Pow, DTypes: numeric, Tol: 2e-6, Role: RoleSpelling},
		{Op: graph.OpMax, Binary: func(a, b float64) float64 { return max(a, b) }, DTypes: numeric, Vec: vecBinary(asm.EwMax)},
		{Op: graph.OpMin, Binary: func(a, b float64) float64 { return min(a, b) }, DTypes: numeric, Vec: vecBinary(asm.EwMin)},
		// The float remainder is exact (math.Mod), so rounding it to F32
		// loses nothing; Mod's adjustment by b rounds once.
		{Op: graph.OpMod, Binary: floorMod, DTypes: numeric},
		{Op: graph.OpFmod, Binary: math.Mod, DTypes: numeric},
	}
	for i := range rows {
		rows[i].InPlace = true // every formula reads its element before the kernel writes it
	}
	return rows
}()

func leakyRelu(a graph.Attrs) (func(float64) float64, error) {
	alpha := float64(a.Alpha)
	return func(x float64) float64 {
		if x < 0 {
			return alpha * x
		}
		return x
	}, nil
}

func clip(a graph.Attrs) (func(float64) float64, error) {
	lo, hi := float64(a.Min), float64(a.Max)
	if lo > hi {
		return nil, fmt.Errorf("clip min %v > max %v", lo, hi)
	}
	return func(x float64) float64 { return min(max(x, lo), hi) }, nil // NaN stays NaN
}

// elu is x for x > 0 and alpha·(e^x - 1) otherwise (Expm1 keeps the
// small negative values accurate); NaN stays NaN.
func elu(a graph.Attrs) (func(float64) float64, error) {
	alpha := float64(a.Alpha)
	return func(x float64) float64 {
		if x > 0 {
			return x
		}
		return alpha * math.Expm1(x)
	}, nil
}

// selu is gamma·elu(x) (ONNX writes the negative side gamma·(alpha·e^x -
// alpha), the same value).
func selu(a graph.Attrs) (func(float64) float64, error) {
	alpha, gamma := float64(a.Alpha), float64(a.Beta)
	return func(x float64) float64 {
		if x > 0 {
			return gamma * x
		}
		return gamma * alpha * math.Expm1(x)
	}, nil
}

// celu is max(0, x) + min(0, alpha·(e^(x/alpha) - 1)): x for x >= 0, the
// exponential side below (for alpha > 0; a negative alpha makes the min
// pick 0 there).
func celu(a graph.Attrs) (func(float64) float64, error) {
	alpha := float64(a.Alpha)
	if alpha == 0 {
		return nil, fmt.Errorf("celu alpha 0")
	}
	return func(x float64) float64 {
		return max(0, x) + min(0, alpha*math.Expm1(x/alpha))
	}, nil
}

func thresholdedRelu(a graph.Attrs) (func(float64) float64, error) {
	alpha := float64(a.Alpha)
	return func(x float64) float64 {
		if x > alpha {
			return x
		}
		return 0 // NaN too, as ONNX's where(x > alpha, x, 0)
	}, nil
}

// shrink is ONNX's Shrink: lambd in Alpha, bias in Beta.
func shrink(a graph.Attrs) (func(float64) float64, error) {
	lambd, bias := float64(a.Alpha), float64(a.Beta)
	return func(x float64) float64 {
		switch {
		case x < -lambd:
			return x + bias
		case x > lambd:
			return x - bias
		}
		return 0
	}, nil
}

// softplus is log(1 + e^x) in the form that does not overflow:
// max(x, 0) + log1p(e^-|x|). NaN stays NaN.
func softplus(x float64) float64 {
	return max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
}

// sign is -1, 1, or x itself for ±0 and NaN.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

// floorMod is the remainder with the divisor's sign (numpy.mod): C's
// fmod plus b when the signs differ. A zero remainder keeps the
// divisor's sign, as numpy's does.
func floorMod(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		return r + b
	}
	if r == 0 {
		return math.Copysign(0, b)
	}
	return r
}

// ewIndex finds an op's row.
var ewIndex = func() map[graph.Op]*EwOp {
	m := make(map[graph.Op]*EwOp, len(ewTable))
	for i := range ewTable {
		m[ewTable[i].Op] = &ewTable[i]
	}
	return m
}()

func init() {
	for i := range ewTable {
		r := &ewTable[i]
		prep := prepareUnary
		if r.Binary != nil {
			prep = prepareBinary
		}
		Register(Entry{Op: r.Op, DTypes: r.DTypes, Reference: prep, InPlace: r.InPlace, Tol: r.Tol})
		switch r.Vec.Arity {
		case 1:
			RegisterFast(r.Op, withVec(prepareVecUnary))
		case 2:
			RegisterFast(r.Op, withVec(prepareVecBinary))
		}
	}
}

// ElementwiseOp returns op's row of the elementwise table.
func ElementwiseOp(op graph.Op) (EwOp, bool) {
	if r, ok := ewIndex[op]; ok {
		return *r, true
	}
	return EwOp{}, false
}

// ElementwiseOps returns the rows of the elementwise table, in its order.
func ElementwiseOps() []EwOp { return append([]EwOp(nil), ewTable...) }

// vecUnaryOf and vecBinaryOf are op's asm kernel, if it has one.
func vecUnaryOf(op graph.Op) (asm.EwUnary, bool) {
	if r, ok := ewIndex[op]; ok && r.Vec.Arity == 1 {
		return r.Vec.Unary, true
	}
	return 0, false
}

func vecBinaryOf(op graph.Op) (asm.EwBinary, bool) {
	if r, ok := ewIndex[op]; ok && r.Vec.Arity == 2 {
		return r.Vec.Binary, true
	}
	return 0, false
}

// epilogueAct is the epilogue activation of op (asm.ActNone for
// graph.OpInvalid, no activation), and epilogueEw its vectorised form
// (within a few ulp of the formula), which epilogues apply to each
// finished row segment.
func epilogueAct(op graph.Op) (asm.Activation, bool) {
	if op == graph.OpInvalid {
		return asm.ActNone, true
	}
	if r, ok := ewIndex[op]; ok && r.Act != asm.ActNone {
		return r.Act, true
	}
	return asm.ActNone, false
}

func epilogueEw(op graph.Op) (asm.EwUnary, bool) {
	if a, ok := epilogueAct(op); !ok || a == asm.ActNone {
		return 0, false
	}
	return vecUnaryOf(op)
}

// floatBinaryFunc is the float64 formula of a binary op.
func floatBinaryFunc(op graph.Op) (func(a, b float64) float64, bool) {
	if r, ok := ewIndex[op]; ok && r.Binary != nil {
		return r.Binary, true
	}
	return nil, false
}
