package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Reference kernels of the elementwise unary ops. Every float formula is
// written once in float64; F32 widens, applies it and rounds once, which is
// the most accurate F32 result (and exact for Neg, Abs, Floor, ...).

// The float ops' formulas, dtypes and tolerances are rows of the
// elementwise table (elementwise.go), which registers them with
// prepareUnary; Not is the one unary op without a float formula.

func init() {
	Register(Entry{Op: graph.OpNot, DTypes: []tensor.DType{tensor.Bool}, Reference: prepareUnary, InPlace: true})
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
	if r, ok := ewIndex[n.Op]; ok {
		switch {
		case r.WithAttrs != nil:
			return r.WithAttrs(n.Attrs)
		case r.Unary != nil:
			return r.Unary, nil
		}
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

// intUnaryKernel covers Neg, Abs and Relu (which wrap like Go on MinInt),
// Sign
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
	case graph.OpSign:
		f = func(x T) T {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return ^T(0) // -1; U8 never gets here
			}
			return 0
		}
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
