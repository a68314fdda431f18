package graph

import "github.com/kilnml/kiln/tensor"

// The quantization builders follow ONNX's linear quantization. A scale
// and its zero point are nodes (a model's initializers, or values
// computed at run time as DynamicQuantizeLinear's); a nil zero point is
// a zero constant of the quantized dtype, so every node of these ops has
// all its inputs and the kernels have one form.

// zeroOf is the scalar zero of dt that stands for an omitted zero point.
func (g *Graph) zeroOf(zero *Node, dt tensor.DType) *Node {
	if zero != nil || !dt.Valid() {
		return zero // an invalid operand is reported by add, not as a constant's error
	}
	return g.Constant(tensor.New(dt))
}

// QuantizeLinear maps a float x to saturate(round(x/scale) + zero) in
// zero's dtype (I8 or U8; U8 when zero is nil). The quotient is
// rounded to x's dtype, then to the nearest integer with ties to even;
// NaN maps to the zero point. scale (x's dtype) and zero hold one
// value (per tensor) or one per index of x's axis (per axis; a negative
// axis counts from the end); axis is ignored per tensor.
func (g *Graph) QuantizeLinear(x, scale, zero *Node, axis int) *Node {
	return g.add(OpQuantizeLinear, Attrs{Axis: axis}, x, scale, g.zeroOf(zero, tensor.U8))
}

// DequantizeLinear maps q (I8, U8 or I32) to (q - zero)·scale in
// scale's float dtype; zero has q's dtype (nil: 0). scale and zero are
// per tensor or per index of q's axis, as for QuantizeLinear.
func (g *Graph) DequantizeLinear(q, scale, zero *Node, axis int) *Node {
	if q == nil {
		return g.add(OpDequantizeLinear, Attrs{Axis: axis}, q, scale, zero)
	}
	return g.add(OpDequantizeLinear, Attrs{Axis: axis}, q, scale, g.zeroOf(zero, q.DType))
}

// DynamicQuantizeLinear quantizes an F32 x to U8 with a scale and zero
// point computed from x's range, extended to hold 0, by ONNX's float32
// formulas: scale = (max - min)/255 (1/255 when max = min), zero =
// saturate(round(0 - min/scale)), q = saturate(round(x/scale) + zero).
// NaN elements take no part in the range and quantize to the zero point.
// The three results are separate nodes (Attrs.Index 0, 1 and 2); one that
// nothing reads is not computed.
func (g *Graph) DynamicQuantizeLinear(x *Node) (q, scale, zero *Node) {
	return g.add(OpDynamicQuantizeLinear, Attrs{}, x),
		g.add(OpDynamicQuantizeLinear, Attrs{Index: 1}, x),
		g.add(OpDynamicQuantizeLinear, Attrs{Index: 2}, x)
}

// MatMulInteger is the numpy matmul of (a - aZero) and (b - bZero) with
// I32 products and accumulation (wrapping past int32, as ONNX allows);
// a and b are I8 or U8, each zero point has its operand's dtype (nil: 0).
// aZero broadcasts to a and is constant along K (a scalar, or a last
// axis of 1: [M, 1] per row); bZero broadcasts to b and is constant
// along K (a scalar, [N] per column, or [..., 1, N]).
func (g *Graph) MatMulInteger(a, b, aZero, bZero *Node) *Node {
	if a == nil || b == nil {
		return g.add(OpMatMulInteger, Attrs{}, a, b)
	}
	return g.add(OpMatMulInteger, Attrs{}, a, b, g.zeroOf(aZero, a.DType), g.zeroOf(bZero, b.DType))
}

// ConvInteger is Conv2D of (x - xZero) with (w - wZero) in I32: x [N, C,
// H, W] and w [M, C/groups, kh, kw] are I8 or U8, xZero a scalar of x's
// dtype, wZero a scalar or [M] (per output channel) of w's dtype (nil:
// 0). Padding cells count as the zero point (they add nothing).
func (g *Graph) ConvInteger(x, w, xZero, wZero *Node, o ConvOpts) *Node {
	at := Attrs{Strides: o.Strides, Pads: o.Pads, Dilations: o.Dilations, Groups: o.Groups}
	if x == nil || w == nil {
		return g.add(OpConvInteger, at, x, w)
	}
	return g.add(OpConvInteger, at, x, w, g.zeroOf(xZero, x.DType), g.zeroOf(wZero, w.DType))
}
