package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The (de)quantization kernels: ONNX's linear quantization, exact. A
// quotient x/scale is computed in x's dtype (float32 division for F32,
// as ONNX's reference and ONNX Runtime), then rounded to the nearest
// integer with ties to even, offset by the zero point and saturated to
// the target's range. F16 and BF16 x run widened through F32, as ONNX
// Runtime computes them.

var quantInts = []tensor.DType{tensor.I8, tensor.U8, tensor.I32}

func init() {
	Register(Entry{Op: graph.OpQuantizeLinear, DTypes: nativeFloats, Reference: prepareQuantize})
	Register(Entry{Op: graph.OpDequantizeLinear, DTypes: quantInts, Reference: prepareDequantize})
	Register(Entry{Op: graph.OpDynamicQuantizeLinear, DTypes: []tensor.DType{tensor.F32}, Reference: prepareDynamicQuantize})
}

// quantPlan views x as [outer, ch, inner]: one scale and zero point per
// index of the quantization axis (ch = 1 per tensor).
type quantPlan struct{ outer, ch, inner int }

func quantPlanOf(n *graph.Node) (quantPlan, error) {
	if len(n.Inputs) != 3 {
		return quantPlan{}, fmt.Errorf("%d inputs, want 3", len(n.Inputs))
	}
	x, scale := n.Inputs[0].Shape, n.Inputs[1].Shape
	if !n.Shape.Equal(x) || n.Inputs[2].Shape.NumElements() != scale.NumElements() {
		return quantPlan{}, fmt.Errorf("result %v, scale %v and zero point %v do not fit x %v", n.Shape, scale, n.Inputs[2].Shape, x)
	}
	if scale.NumElements() == 1 {
		return quantPlan{outer: 1, ch: 1, inner: x.NumElements()}, nil
	}
	if ax := n.Attrs.Axis; ax < 0 || ax >= x.Rank() || x[ax] != scale.NumElements() {
		return quantPlan{}, fmt.Errorf("axis %d of %v does not have the %d scales", ax, x, scale.NumElements())
	}
	outer, ch, inner := axisSplit(x, n.Attrs.Axis)
	return quantPlan{outer, ch, inner}, nil
}

// quantRange is the saturation range of an 8-bit quantized dtype.
func quantRange(dt tensor.DType) (lo, hi float64) {
	if dt == tensor.I8 {
		return math.MinInt8, math.MaxInt8
	}
	return 0, math.MaxUint8
}

// quantizeOne rounds a quotient x/scale half to even, adds the zero point
// and saturates to [lo, hi]. A NaN quotient (0/0, NaN x) gives the zero
// point; ±Inf saturates.
func quantizeOne(q, zero, lo, hi float64) float64 {
	r := math.RoundToEven(q)
	if r != r {
		r = 0
	}
	return min(max(r+zero, lo), hi)
}

func prepareQuantize(n *graph.Node) (Kernel, error) {
	p, err := quantPlanOf(n)
	if err != nil {
		return nil, err
	}
	x, scale, zero := n.Inputs[0].DType, n.Inputs[1].DType, n.Inputs[2].DType
	if scale != x || zero != n.DType {
		return nil, fmt.Errorf("scale %v must be x's dtype %v, zero point %v the result's %v", scale, x, zero, n.DType)
	}
	lo, hi := quantRange(zero)
	var k Kernel
	switch [2]tensor.DType{x, zero} {
	case [2]tensor.DType{tensor.F32, tensor.U8}:
		k = quantizeKernel[float32, uint8](p, lo, hi)
	case [2]tensor.DType{tensor.F32, tensor.I8}:
		k = quantizeKernel[float32, int8](p, lo, hi)
	case [2]tensor.DType{tensor.F64, tensor.U8}:
		k = quantizeKernel[float64, uint8](p, lo, hi)
	case [2]tensor.DType{tensor.F64, tensor.I8}:
		k = quantizeKernel[float64, int8](p, lo, hi)
	default:
		return nil, fmt.Errorf("no kernel from %v to %v", x, zero)
	}
	return sizeChecked(n, k), nil
}

func quantizeKernel[X float32 | float64, Q int8 | uint8](p quantPlan, lo, hi float64) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, s, z, y := tensor.Elems[X](ins[0].Data), tensor.Elems[X](ins[1].Data), tensor.Elems[Q](ins[2].Data), tensor.Elems[Q](out.Data)
		for o := range p.outer {
			for c := range p.ch {
				sc, zp := s[c], float64(z[c])
				base := (o*p.ch + c) * p.inner
				for i := base; i < base+p.inner; i++ {
					// The quotient rounds to X before the integer rounding.
					y[i] = Q(quantizeOne(float64(x[i]/sc), zp, lo, hi))
				}
			}
		}
		return nil
	}
}

func prepareDequantize(n *graph.Node) (Kernel, error) {
	p, err := quantPlanOf(n)
	if err != nil {
		return nil, err
	}
	q, scale, zero := n.Inputs[0].DType, n.Inputs[1].DType, n.Inputs[2].DType
	if zero != q || scale != n.DType || !scale.IsFloat() {
		return nil, fmt.Errorf("zero point %v must be q's dtype %v, scale %v a float and the result's %v", zero, q, scale, n.DType)
	}
	var k Kernel
	switch q {
	case tensor.I8:
		k = dequantizeKernel[int8](p, n.DType)
	case tensor.U8:
		k = dequantizeKernel[uint8](p, n.DType)
	case tensor.I32:
		k = dequantizeKernel[int32](p, n.DType)
	default:
		return nil, fmt.Errorf("no kernel for %v", q)
	}
	return sizeChecked(n, k), nil
}

// dequantizeKernel computes (q - zero)·scale in float64, where it is
// exact for 8-bit q (a 9-bit difference times a scale of at most 53
// bits), and rounds once to the result's dtype: directly for F32 and
// F64, through a float64 scratch and tensor.Convert for F16 and BF16.
func dequantizeKernel[Q int8 | uint8 | int32](p quantPlan, dt tensor.DType) Kernel {
	scales := make([]float64, p.ch)
	var wide []float64 // the float64 result of a half-precision node
	if dt != tensor.F64 && dt != tensor.F32 {
		wide = make([]float64, p.outer*p.ch*p.inner)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		s := tensor.Tensor{DType: ins[1].DType, Shape: tensor.Shape{p.ch}, Data: ins[1].Data}
		if err := tensor.Convert(tensor.Tensor{DType: tensor.F64, Shape: s.Shape, Data: tensor.Bytes(scales)}, s); err != nil {
			return err
		}
		q, z := tensor.Elems[Q](ins[0].Data), tensor.Elems[Q](ins[2].Data)
		switch dt {
		case tensor.F32:
			dequantizeInto(p, tensor.Elems[float32](out.Data), q, z, scales)
		case tensor.F64:
			dequantizeInto(p, tensor.Elems[float64](out.Data), q, z, scales)
		default:
			dequantizeInto(p, wide, q, z, scales)
			return tensor.Convert(out, tensor.Tensor{DType: tensor.F64, Shape: out.Shape, Data: tensor.Bytes(wide)})
		}
		return nil
	}
}

func dequantizeInto[Y float32 | float64, Q int8 | uint8 | int32](p quantPlan, y []Y, q, z []Q, scales []float64) {
	for o := range p.outer {
		for c := range p.ch {
			sc, zp := scales[c], int64(z[c])
			base := (o*p.ch + c) * p.inner
			for i := base; i < base+p.inner; i++ {
				y[i] = Y(float64(int64(q[i])-zp) * sc)
			}
		}
	}
}

func prepareDynamicQuantize(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 1 || n.Inputs[0].DType != tensor.F32 {
		return nil, fmt.Errorf("inputs %d, want one F32 x", len(n.Inputs))
	}
	idx := n.Attrs.Index
	want := map[int]tensor.DType{0: tensor.U8, 1: tensor.F32, 2: tensor.U8}[idx]
	if want == tensor.Invalid || n.DType != want {
		return nil, fmt.Errorf("output %d is %v; outputs are 0 (u8 q), 1 (f32 scale), 2 (u8 zero point)", idx, n.DType)
	}
	if idx == 0 && !n.Shape.Equal(n.Inputs[0].Shape) || idx > 0 && n.Shape.NumElements() != 1 {
		return nil, fmt.Errorf("output %d has shape %v for x %v", idx, n.Shape, n.Inputs[0].Shape)
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		x := tensor.Elems[float32](ins[0].Data)
		scale, zero := DynamicQuantParams(x)
		switch idx {
		case 1:
			tensor.Elems[float32](out.Data)[0] = scale
		case 2:
			out.Data[0] = zero
		default:
			for i, v := range x {
				out.Data[i] = uint8(quantizeOne(float64(v/scale), float64(zero), 0, 255))
			}
		}
		return nil
	}), nil
}

// DynamicQuantParams is DynamicQuantizeLinear's scale and zero point for
// x, by ONNX's float32 formulas: the range [min(x, 0), max(x, 0)] (NaN
// elements take no part), scale = range/255 (1/255 for an empty range),
// zero = saturate(round(0 - min/scale)) with ties to even. A fused int8
// product computes its activations' parameters with it.
func DynamicQuantParams(x []float32) (scale float32, zero uint8) {
	var lo, hi float32
	for _, v := range x {
		// Comparisons, not min and max, which would spread a NaN.
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return dynamicParamsOfRange(lo, hi)
}

// dynamicParamsOfRange is DynamicQuantParams' scale and zero point for
// the range [lo, hi] (lo <= 0 <= hi, a zero as +0).
func dynamicParamsOfRange(lo, hi float32) (scale float32, zero uint8) {
	span := hi - lo
	if hi == lo {
		span = 1
	}
	scale = span / 255
	return scale, uint8(quantizeOne(float64(0-lo/scale), 0, 0, 255))
}
