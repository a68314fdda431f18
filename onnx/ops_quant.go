package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The quantization ops. QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger and ConvInteger are kiln ops;
// QLinearMatMul and QLinearConv are their integer product followed by
// the requantization in float64: y = QuantizeLinear(acc·(sa·sb), sy, zy)
// with acc the exact int32 accumulator (plus the int32 bias), which
// rounds twice in float64 before the integer rounding, so a result
// differs from the exact rational one only within 2^-50 of a tie.

func init() {
	register("QuantizeLinear", 10, one(mapQuantizeLinear))
	register("DequantizeLinear", 10, one(mapDequantizeLinear))
	register("DynamicQuantizeLinear", 11, mapDynamicQuantizeLinear)
	register("MatMulInteger", 10, one(mapMatMulInteger))
	register("ConvInteger", 10, one(mapConvInteger))
	register("QLinearMatMul", 10, one(mapQLinearMatMul))
	register("QLinearConv", 10, one(mapQLinearConv))
}

// quantAttrs reads the attributes QuantizeLinear and DequantizeLinear
// share: axis (opset 13 on; per-axis scales need it), block_size
// (opset 21: blocked quantization, which kiln lacks) and output_dtype
// (QuantizeLinear from opset 21, DequantizeLinear from 23), returned as
// a dtype (Invalid when absent). saturate (opset 19) only concerns
// float8 results, which kiln has not, so any value is accepted.
func quantAttrs(c *ctx) (axis int, out tensor.DType, err error) {
	a, err := c.attrInt("axis", 1)
	if err != nil {
		return 0, 0, err
	}
	if bs, err := c.attrInt("block_size", 0); err != nil || bs != 0 {
		if err != nil {
			return 0, 0, err
		}
		return 0, 0, unsupportedf("attribute block_size=%d (blocked quantization)", bs)
	}
	if _, err := c.attrInt("saturate", 1); err != nil {
		return 0, 0, err
	}
	od, err := c.attrInt("output_dtype", 0)
	if err != nil {
		return 0, 0, err
	}
	if od != 0 {
		if out, err = DType(int32(max(min(od, 1<<30), 0))); err != nil {
			return 0, 0, unsupportedf("attribute output_dtype=%d (%v)", od, err)
		}
	}
	if c.has(1) && c.shape(1).NumElements() > 1 && c.opset < 13 {
		return 0, 0, fmt.Errorf("scale %v: per-axis quantization needs opset 13", c.shape(1))
	}
	return int(a), out, nil
}

// quantOperands reads QuantizeLinear's or DequantizeLinear's x and scale
// and its axis and output_dtype attributes.
func quantOperands(c *ctx) (x, scale *graph.Node, axis int, out tensor.DType, err error) {
	if x, err = c.need(0); err != nil {
		return nil, nil, 0, 0, err
	}
	if scale, err = c.need(1); err != nil {
		return nil, nil, 0, 0, err
	}
	axis, out, err = quantAttrs(c)
	return x, scale, axis, out, err
}

func mapQuantizeLinear(c *ctx) (*graph.Node, error) {
	x, scale, axis, out, err := quantOperands(c)
	if err != nil {
		return nil, err
	}
	zero := c.in(2)
	switch {
	case out != tensor.Invalid && out != tensor.I8 && out != tensor.U8:
		return nil, unsupportedf("attribute output_dtype=%v (kiln quantizes to int8 and uint8)", out)
	case zero == nil && out == tensor.I8:
		zero = c.g.Constant(tensor.New(tensor.I8))
	case zero != nil && !(zero.DType == tensor.I8 || zero.DType == tensor.U8):
		return nil, unsupportedf("zero point of %v (kiln quantizes to int8 and uint8)", zero.DType)
	case zero != nil && out != tensor.Invalid && zero.DType != out:
		return nil, fmt.Errorf("output_dtype %v differs from the zero point's %v", out, zero.DType)
	}
	if x.DType == tensor.I32 {
		// ONNX's int32 x: its quotient is exact enough in float64.
		x, scale = c.g.Cast(x, tensor.F64), c.g.Cast(scale, tensor.F64)
	}
	if !x.DType.IsFloat() || scale.DType != x.DType {
		return nil, unsupportedf("x of %v with a scale of %v", x.DType, scale.DType)
	}
	return built(c, c.g.QuantizeLinear(x, scale, zero, axis))
}

func mapDequantizeLinear(c *ctx) (*graph.Node, error) {
	x, scale, axis, out, err := quantOperands(c)
	if err != nil {
		return nil, err
	}
	if out != tensor.Invalid && out != scale.DType {
		return nil, unsupportedf("attribute output_dtype=%v with a scale of %v (the result takes the scale's dtype)", out, scale.DType)
	}
	if !(x.DType == tensor.I8 || x.DType == tensor.U8 || x.DType == tensor.I32) || !scale.DType.IsFloat() {
		return nil, unsupportedf("x of %v with a scale of %v (kiln dequantizes int8, uint8 and int32 to floats)", x.DType, scale.DType)
	}
	return built(c, c.g.DequantizeLinear(x, scale, c.in(2), axis))
}

func mapDynamicQuantizeLinear(c *ctx) ([]*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	if x.DType != tensor.F32 {
		return nil, unsupportedf("x of %v (ONNX defines float32)", x.DType)
	}
	q, s, z := c.g.DynamicQuantizeLinear(x)
	if _, err := built(c, q); err != nil {
		return nil, err
	}
	outs := []*graph.Node{q, s, z}
	for o := range outs {
		if !c.used(o) {
			outs[o] = nil
		}
	}
	return outs, nil
}

// quant8Input returns input i, which must be int8 or uint8.
func quant8Input(c *ctx, i int) (*graph.Node, error) {
	x, err := c.need(i)
	if err != nil {
		return nil, err
	}
	if x.DType != tensor.I8 && x.DType != tensor.U8 {
		return nil, unsupportedf("input %d is %v; kiln's integer products take int8 and uint8", i, x.DType)
	}
	return x, nil
}

// perRow gives a per-row parameter of a ([M] for a 2-D or wider a, as
// ONNX writes a per-row zero point or scale) the shape [M, 1], which
// broadcasts along a's K; anything else is returned as is.
func perRow(c *ctx, p, a *graph.Node) *graph.Node {
	if p == nil || p.Shape.Rank() != 1 || p.Shape[0] == 1 || a.Shape.Rank() < 2 {
		return p
	}
	return c.g.Reshape(p, p.Shape[0], 1)
}

func mapMatMulInteger(c *ctx) (*graph.Node, error) {
	a, err := quant8Input(c, 0)
	if err != nil {
		return nil, err
	}
	b, err := quant8Input(c, 1)
	if err != nil {
		return nil, err
	}
	return built(c, c.g.MatMulInteger(a, b, perRow(c, c.in(2), a), c.in(3)))
}

// convInteger builds ConvInteger over inputs xi and wi with zero points
// xzi and wzi (omitted: 0), in kiln's 2-D form, and the window to map
// the result back with.
func convInteger(c *ctx, xi, wi, xzi, wzi int) (*graph.Node, window, error) {
	x, wt, w, at, err := convOperands(c, xi, wi)
	if err != nil {
		return nil, w, err
	}
	for _, i := range []int{xi, wi} {
		if _, err := quant8Input(c, i); err != nil {
			return nil, w, err
		}
	}
	opts := graph.ConvOpts{Strides: at.Strides, Pads: at.Pads, Dilations: at.Dilations, Groups: at.Groups}
	y, err := built(c, c.g.ConvInteger(w.to2D(c, x), w.to2D(c, wt), c.in(xzi), c.in(wzi), opts))
	return y, w, err
}

func mapConvInteger(c *ctx) (*graph.Node, error) {
	y, w, err := convInteger(c, 0, 1, 2, 3)
	if err != nil {
		return nil, err
	}
	return w.from2D(c, y), nil
}

// requantize maps an I32 accumulator acc to QuantizeLinear(acc·(sa·sb),
// sy, zy) in float64; sa·sb is exact in float64 for float32 scales.
func requantize(c *ctx, acc, sa, sb, sy, zy *graph.Node) (*graph.Node, error) {
	if zy.DType != tensor.I8 && zy.DType != tensor.U8 {
		return nil, unsupportedf("output zero point of %v (kiln quantizes to int8 and uint8)", zy.DType)
	}
	for _, s := range []*graph.Node{sa, sb, sy} {
		if !s.DType.IsFloat() {
			return nil, fmt.Errorf("scale of %v, want a float", s.DType)
		}
	}
	if sy.Shape.NumElements() != 1 || zy.Shape.NumElements() != 1 {
		return nil, unsupportedf("output scale %v and zero point %v: kiln requantizes per tensor", sy.Shape, zy.Shape)
	}
	f64 := func(n *graph.Node) *graph.Node { return c.g.Cast(n, tensor.F64) }
	scaled := c.g.Mul(f64(acc), c.g.Mul(f64(sa), f64(sb)))
	return built(c, c.g.QuantizeLinear(scaled, f64(sy), zy, 0))
}

func mapQLinearMatMul(c *ctx) (*graph.Node, error) {
	a, err := quant8Input(c, 0)
	if err != nil {
		return nil, err
	}
	b, err := quant8Input(c, 3)
	if err != nil {
		return nil, err
	}
	var ps [6]*graph.Node // a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point
	for k, i := range []int{1, 2, 4, 5, 6, 7} {
		if ps[k], err = c.need(i); err != nil {
			return nil, err
		}
	}
	acc, err := built(c, c.g.MatMulInteger(a, b, perRow(c, ps[1], a), ps[3]))
	if err != nil {
		return nil, err
	}
	return requantize(c, acc, perRow(c, ps[0], a), ps[2], ps[4], ps[5])
}

func mapQLinearConv(c *ctx) (*graph.Node, error) {
	acc, w, err := convInteger(c, 0, 3, 2, 5)
	if err != nil {
		return nil, err
	}
	var ps [4]*graph.Node // x_scale, w_scale, y_scale, y_zero_point
	for k, i := range []int{1, 4, 6, 7} {
		if ps[k], err = c.need(i); err != nil {
			return nil, err
		}
	}
	m := acc.Shape[1]
	perChannel := func(p *graph.Node) *graph.Node { // [M] broadcasts over [N, M, H, W] as [M, 1, 1]
		if p.Shape.NumElements() == 1 {
			return p
		}
		return c.g.Reshape(p, m, 1, 1)
	}
	if c.has(8) {
		bias := c.in(8)
		if bias.DType != tensor.I32 || !bias.Shape.Equal(tensor.Shape{m}) {
			return nil, fmt.Errorf("bias %v%v, want i32 [%d]", bias.DType, bias.Shape, m)
		}
		if acc, err = c.apply(graph.OpAdd, graph.Attrs{}, acc, perChannel(bias)); err != nil {
			return nil, err
		}
	}
	if n := ps[1].Shape.NumElements(); n != 1 && n != m {
		return nil, fmt.Errorf("w_scale %v, want a scalar or [%d]", ps[1].Shape, m)
	}
	y, err := requantize(c, acc, ps[0], perChannel(ps[1]), ps[2], ps[3])
	if err != nil {
		return nil, err
	}
	return w.from2D(c, y), nil
}
