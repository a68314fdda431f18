package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Reference kernels of the elementwise unary ops. Every float formula is
// written once in float64; F32 widens, applies it and rounds once, which is
// the most accurate F32 result (and exact for Neg, Abs, Floor, ...).

func init() {
	floats := []tensor.DType{tensor.F32, tensor.F64}
	signed := []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.I32, tensor.I64}
	numeric := []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64}
	const transcendental = 2e-6
	for op, tol := range map[graph.Op]float64{
		graph.OpExp: transcendental, graph.OpLog: transcendental, graph.OpTanh: transcendental,
		graph.OpSigmoid: transcendental, graph.OpGelu: transcendental, graph.OpGeluTanh: transcendental,
		graph.OpSilu: transcendental, graph.OpErf: transcendental, graph.OpSin: transcendental,
		graph.OpCos: transcendental, graph.OpRsqrt: transcendental,
		graph.OpSqrt: 2e-7, graph.OpReciprocal: 1e-6,
		graph.OpLeakyRelu: 0, graph.OpFloor: 0, graph.OpCeil: 0, graph.OpRound: 0,
	} {
		Register(Entry{Op: op, DTypes: floats, Reference: prepareUnary, InPlace: true, Tol: tol})
	}
	for _, op := range []graph.Op{graph.OpNeg, graph.OpAbs, graph.OpRelu} {
		Register(Entry{Op: op, DTypes: signed, Reference: prepareUnary, InPlace: true})
	}
	Register(Entry{Op: graph.OpClip, DTypes: numeric, Reference: prepareUnary, InPlace: true})
	Register(Entry{Op: graph.OpNot, DTypes: []tensor.DType{tensor.Bool}, Reference: prepareUnary, InPlace: true})
}

// sqrt2OverPi is the constant of the tanh approximation of GELU.
var sqrt2OverPi = math.Sqrt(2 / math.Pi)

// floatUnary is the float64 formula of each op without attributes.
var floatUnary = map[graph.Op]func(x float64) float64{
	graph.OpNeg:        func(x float64) float64 { return -x },
	graph.OpAbs:        math.Abs,
	graph.OpExp:        math.Exp,
	graph.OpLog:        math.Log,
	graph.OpSqrt:       math.Sqrt,
	graph.OpRsqrt:      func(x float64) float64 { return 1 / math.Sqrt(x) },
	graph.OpReciprocal: func(x float64) float64 { return 1 / x },
	graph.OpTanh:       math.Tanh,
	graph.OpSigmoid:    func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	// x < 0 rather than max(x, 0) keeps NaN as NaN.
	graph.OpRelu: func(x float64) float64 {
		if x < 0 {
			return 0
		}
		return x
	},
	// 1 + erf(z) and 1 + tanh(z) cancel to 0 for z below about -6 and -18,
	// which would make GELU -0 where its true value is still a normal
	// float32 (and Log of it -Inf instead of NaN): the gates are written
	// as erfc and as a sigmoid, which keep their relative precision in
	// the tail.
	//
	// The x·gate(x) activations are their formulas in IEEE arithmetic at
	// the infinities too (see graph.Silu): +Inf at +Inf, and NaN at -Inf,
	// where the gate is 0 and -Inf·0 is NaN (or -Inf/Inf, as written
	// here), as in PyTorch, ONNX Runtime and ONNX's own reference, and as
	// in the spelled-out forms that fuse recognises as these ops.
	graph.OpGelu: func(x float64) float64 { return x / 2 * math.Erfc(-x/math.Sqrt2) },
	graph.OpGeluTanh: func(x float64) float64 {
		return x / (1 + math.Exp(-2*sqrt2OverPi*(x+0.044715*x*x*x)))
	},
	graph.OpSilu:  func(x float64) float64 { return x / (1 + math.Exp(-x)) },
	graph.OpErf:   math.Erf,
	graph.OpSin:   math.Sin,
	graph.OpCos:   math.Cos,
	graph.OpFloor: math.Floor,
	graph.OpCeil:  math.Ceil,
	graph.OpRound: math.RoundToEven,
}

func prepareUnary(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(n.Inputs))
	}
	x := n.Inputs[0]
	if n.DType != x.DType || !n.Shape.Equal(x.Shape) {
		return nil, fmt.Errorf("result %v%v differs from input %v%v", n.DType, n.Shape, x.DType, x.Shape)
	}
	var k Kernel
	var err error
	switch x.DType {
	case tensor.F32:
		k, err = floatUnaryKernel[float32](n)
	case tensor.F64:
		k, err = floatUnaryKernel[float64](n)
	case tensor.I8:
		k, err = intUnaryKernel[int8](n)
	case tensor.U8:
		k, err = intUnaryKernel[uint8](n)
	case tensor.I32:
		k, err = intUnaryKernel[int32](n)
	case tensor.I64:
		k, err = intUnaryKernel[int64](n)
	case tensor.Bool:
		if n.Op != graph.OpNot {
			return nil, fmt.Errorf("%v has no bool kernel", n.Op)
		}
		// Any non-zero byte reads as true.
		k = func(ins []tensor.Tensor, out tensor.Tensor) error {
			for i, b := range ins[0].Data {
				out.Data[i] = boolByte(b == 0)
			}
			return nil
		}
	default:
		err = fmt.Errorf("dtype %v has no reference kernel", x.DType)
	}
	if err != nil {
		return nil, err
	}
	return sizeChecked(n, k), nil
}

// floatUnaryFunc is the float64 formula of n, attributes bound.
func floatUnaryFunc(n *graph.Node) (func(float64) float64, error) {
	switch n.Op {
	case graph.OpLeakyRelu:
		alpha := float64(n.Attrs.Alpha)
		return func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}, nil
	case graph.OpClip:
		lo, hi := float64(n.Attrs.Min), float64(n.Attrs.Max)
		if lo > hi {
			return nil, fmt.Errorf("clip min %v > max %v", lo, hi)
		}
		return func(x float64) float64 { return min(max(x, lo), hi) }, nil // NaN stays NaN
	}
	if f, ok := floatUnary[n.Op]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("%v has no float kernel", n.Op)
}

func floatUnaryKernel[T ewFloat](n *graph.Node) (Kernel, error) {
	f, err := floatUnaryFunc(n)
	if err != nil {
		return nil, err
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		dst := tensor.Elems[T](out.Data)
		for i, v := range tensor.Elems[T](ins[0].Data) {
			dst[i] = T(f(float64(v))) // v is read before dst[i] is written
		}
		return nil
	}, nil
}

// intUnaryKernel covers Neg, Abs and Relu (which wrap like Go on MinInt)
// and Clip, whose bounds are converted to T with tensor.Convert's rules
// (truncated toward zero, saturated, ±Inf to the type's limits), as a
// Cast of the bound would.
func intUnaryKernel[T ewInt](n *graph.Node) (Kernel, error) {
	var f func(x T) T
	switch n.Op {
	case graph.OpNeg:
		f = func(x T) T { return -x }
	case graph.OpAbs:
		f = func(x T) T {
			if x < 0 {
				return -x
			}
			return x
		}
	case graph.OpRelu:
		f = func(x T) T { return max(x, 0) }
	case graph.OpClip:
		b, err := tensor.FromFloat64s(n.Inputs[0].DType, tensor.Shape{2},
			[]float64{float64(n.Attrs.Min), float64(n.Attrs.Max)})
		if err != nil {
			return nil, err
		}
		bounds := tensor.Elems[T](b.Data)
		lo, hi := bounds[0], bounds[1]
		if lo > hi {
			return nil, fmt.Errorf("clip min %v > max %v", lo, hi)
		}
		f = func(x T) T { return min(max(x, lo), hi) }
	default:
		return nil, fmt.Errorf("%v has no integer kernel", n.Op)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		dst := tensor.Elems[T](out.Data)
		for i, v := range tensor.Elems[T](ins[0].Data) {
			dst[i] = f(v)
		}
		return nil
	}, nil
}
