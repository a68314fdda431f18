package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Quantize is a per-tensor or per-axis affine map between floats and
// integers: QuantizeLinear (x, scale, zero → saturate(round(x/scale) +
// zero)), DequantizeLinear ((q - zero)·scale) or DynamicQuantizeLinear
// (its scale and zero point from x's range first; Output 0 q, 1 scale, 2
// zero point). x is [Outer, Ch, Inner] with one scale and zero point per
// Ch index (Ch 1 per tensor).
type Quantize struct {
	Name             string
	Op               graph.Op
	In, Out          tensor.DType // x's and the result's dtypes
	Outer, Ch, Inner int
	Output           int // DynamicQuantizeLinear's output
	ScaleDT, ZeroDT  tensor.DType
}

// QuantizeOf describes a QuantizeLinear, DequantizeLinear or
// DynamicQuantizeLinear node.
func QuantizeOf(name string, n *graph.Node) (*Quantize, error) {
	x := n.Inputs[0]
	d := &Quantize{Name: name, Op: n.Op, In: x.DType, Out: n.DType, Outer: 1, Ch: 1, Inner: x.Shape.NumElements()}
	switch n.Op {
	case graph.OpDynamicQuantizeLinear:
		d.Output, d.ScaleDT, d.ZeroDT = n.Attrs.Index, tensor.F32, tensor.U8
		return d, nil
	case graph.OpQuantizeLinear, graph.OpDequantizeLinear:
	default:
		return nil, fmt.Errorf("%s: %v is not a quantization", name, n.Op)
	}
	d.ScaleDT, d.ZeroDT = n.Inputs[1].DType, n.Inputs[2].DType
	if c := n.Inputs[1].Shape.NumElements(); c > 1 {
		ax := n.Attrs.Axis
		d.Outer, d.Ch, d.Inner = x.Shape[:ax].NumElements(), c, x.Shape[ax+1:].NumElements()
	}
	return d, nil
}

// IntProduct is an integer matmul or 2-D convolution with I32
// accumulation: MatMulInteger (Gemm's geometry) or ConvInteger (Conv's),
// each operand minus its zero point (per tensor, or per row of A, per
// column of B, per output channel of W).
type IntProduct struct {
	Name   string
	Op     graph.Op
	A, B   tensor.DType // the operands' dtypes (I8 or U8)
	AShape []int
	BShape []int
	AZero  []int // the zero points' shapes
	BZero  []int
	Out    []int
}

// IntProductOf describes a MatMulInteger, ConvInteger, DynQuantMatMul,
// QDQMatMul or QDQConv node (for the last three, A is the F32 x its
// kernel quantizes; AZero is empty for DynQuantMatMul, x's zero point for
// the QDQ ops; BZero is w's zero point).
func IntProductOf(name string, n *graph.Node) (*IntProduct, error) {
	switch n.Op {
	case graph.OpMatMulInteger, graph.OpConvInteger, graph.OpDynQuantMatMul, graph.OpQDQMatMul, graph.OpQDQConv:
	default:
		return nil, fmt.Errorf("%s: %v is not an integer product", name, n.Op)
	}
	in := n.Inputs
	if n.Op == graph.OpQDQMatMul || n.Op == graph.OpQDQConv {
		return &IntProduct{Name: name, Op: n.Op, A: in[0].DType, B: in[3].DType, AShape: in[0].Shape, BShape: in[3].Shape,
			AZero: in[2].Shape, BZero: in[4].Shape, Out: n.Shape}, nil
	}
	if n.Op == graph.OpDynQuantMatMul {
		return &IntProduct{Name: name, Op: n.Op, A: in[0].DType, B: in[1].DType, AShape: in[0].Shape, BShape: in[1].Shape,
			BZero: in[2].Shape, Out: n.Shape}, nil
	}
	return &IntProduct{Name: name, Op: n.Op, A: in[0].DType, B: in[1].DType, AShape: in[0].Shape, BShape: in[1].Shape,
		AZero: in[2].Shape, BZero: in[3].Shape, Out: n.Shape}, nil
}
