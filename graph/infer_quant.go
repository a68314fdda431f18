package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// isQuant8 reports whether dt is one of the 8-bit quantized dtypes.
func isQuant8(dt tensor.DType) bool { return dt == tensor.I8 || dt == tensor.U8 }

// quantAxis checks the scale and zero point of a (de)quantization of x
// and normalises Attrs.Axis: per tensor (one value each; Axis becomes 0)
// or per axis (1-D, as long as x's axis). The zero point holds as many
// values as the scale, with a rank of at most 1.
func quantAxis(a *Attrs, x, scale, zero *Node) error {
	n := scale.Shape.NumElements()
	if zero.Shape.NumElements() != n || zero.Shape.Rank() > 1 {
		return fmt.Errorf("zero point %v must hold as many values as scale %v", zero.Shape, scale.Shape)
	}
	if scale.Shape.Rank() == 0 || (scale.Shape.Rank() == 1 && n == 1) {
		a.Axis = 0
		return nil
	}
	if scale.Shape.Rank() != 1 {
		return fmt.Errorf("scale %v must be a scalar or 1-D", scale.Shape)
	}
	ax, err := tensor.NormAxis(a.Axis, x.Shape.Rank())
	if err != nil {
		return err
	}
	if x.Shape[ax] != n {
		return fmt.Errorf("per-axis scale %v must have %d values (axis %d of %v)", scale.Shape, x.Shape[ax], ax, x.Shape)
	}
	a.Axis = ax
	return nil
}

// inferQuantize: float x and scale of one dtype, an I8 or U8 zero point
// whose dtype the result takes.
func inferQuantize(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, scale, zero := ins[0], ins[1], ins[2]
	if !x.DType.IsFloat() || scale.DType != x.DType || !isQuant8(zero.DType) {
		return 0, nil, fmt.Errorf("x %v and scale %v must share a float dtype, zero point %v be i8 or u8", x.DType, scale.DType, zero.DType)
	}
	if err := quantAxis(a, x, scale, zero); err != nil {
		return 0, nil, err
	}
	return zero.DType, x.Shape.Clone(), nil
}

// inferDequantize: I8, U8 or I32 q with a zero point of its dtype and a
// float scale whose dtype the result takes.
func inferDequantize(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	q, scale, zero := ins[0], ins[1], ins[2]
	if !(isQuant8(q.DType) || q.DType == tensor.I32) || zero.DType != q.DType || !scale.DType.IsFloat() {
		return 0, nil, fmt.Errorf("q %v must be i8, u8 or i32 with a zero point of its dtype (%v) and a float scale (%v)", q.DType, zero.DType, scale.DType)
	}
	if err := quantAxis(a, q, scale, zero); err != nil {
		return 0, nil, err
	}
	return scale.DType, q.Shape.Clone(), nil
}

// inferDynamicQuantize: F32 x; output 0 is x's shape in U8, outputs 1
// (F32 scale) and 2 (U8 zero point) are scalars.
func inferDynamicQuantize(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	if x.DType != tensor.F32 {
		return 0, nil, fmt.Errorf("x %v must be f32", x.DType)
	}
	switch a.Index {
	case 0:
		return tensor.U8, x.Shape.Clone(), nil
	case 1:
		return tensor.F32, tensor.Shape{}, nil
	case 2:
		return tensor.U8, tensor.Shape{}, nil
	}
	return 0, nil, fmt.Errorf("output %d: DynamicQuantizeLinear has outputs 0 (q), 1 (scale) and 2 (zero point)", a.Index)
}

// zeroFits checks that a zero point has its operand's dtype and
// broadcasts to the operand without growing it.
func zeroFits(what string, zero, x *Node) error {
	if zero.DType != x.DType {
		return fmt.Errorf("%s zero point %v must have its operand's dtype %v", what, zero.DType, x.DType)
	}
	if s, err := tensor.Broadcast(zero.Shape, x.Shape); err != nil || !s.Equal(x.Shape) {
		return fmt.Errorf("%s zero point %v does not broadcast to %v", what, zero.Shape, x.Shape)
	}
	return nil
}

// inferMatMulInteger: I8/U8 operands, zero points constant along K (so
// that an int8 GEMM can apply them as row and column corrections), an
// I32 result of matmul's shape.
func inferMatMulInteger(_ *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	a, b, az, bz := ins[0], ins[1], ins[2], ins[3]
	if !isQuant8(a.DType) || !isQuant8(b.DType) {
		return 0, nil, fmt.Errorf("operands %v and %v must be i8 or u8", a.DType, b.DType)
	}
	if err := zeroFits("a's", az, a); err != nil {
		return 0, nil, err
	}
	if err := zeroFits("b's", bz, b); err != nil {
		return 0, nil, err
	}
	_, _, _, _, out, err := MatMulDims(a.Shape, b.Shape)
	if err != nil {
		return 0, nil, err
	}
	// a's K is its last axis; b's is its second to last (its only one
	// when 1-D). A zero point broadcast along K has size 1 there.
	if r := az.Shape.Rank(); r > 0 && az.Shape[r-1] != 1 {
		return 0, nil, fmt.Errorf("a's zero point %v must be constant along K (last dim 1; [M, 1] per row)", az.Shape)
	}
	r := bz.Shape.Rank()
	if (b.Shape.Rank() == 1 && r > 0 && bz.Shape[r-1] != 1) || (b.Shape.Rank() > 1 && r > 1 && bz.Shape[r-2] != 1) {
		return 0, nil, fmt.Errorf("b's zero point %v must be constant along K ([N] or [..., 1, N] per column)", bz.Shape)
	}
	return tensor.I32, out, nil
}

// inferConvInteger: Conv2D's geometry over I8/U8 x and w, a scalar x
// zero point and a scalar or per-output-channel w zero point; I32
// result.
func inferConvInteger(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, w, xz, wz := ins[0], ins[1], ins[2], ins[3]
	if !isQuant8(x.DType) || !isQuant8(w.DType) || xz.DType != x.DType || wz.DType != w.DType {
		return 0, nil, fmt.Errorf("x %v and w %v must be i8 or u8, their zero points (%v, %v) of the same dtypes", x.DType, w.DType, xz.DType, wz.DType)
	}
	s, err := convShape(a, x.Shape, w.Shape)
	if err != nil {
		return 0, nil, err
	}
	if xz.Shape.NumElements() != 1 || xz.Shape.Rank() > 1 {
		return 0, nil, fmt.Errorf("x zero point %v must be a scalar", xz.Shape)
	}
	if n := wz.Shape.NumElements(); wz.Shape.Rank() > 1 || (n != 1 && n != s[1]) {
		return 0, nil, fmt.Errorf("w zero point %v must be a scalar or [%d] (per output channel)", wz.Shape, s[1])
	}
	return tensor.I32, s, nil
}

// inferDynQuantMatMul: F32 x [..., K] times a 2-D I8/U8 w [K, N], w's
// zero point and F32 scale scalars or one per column, an optional F32
// bias [N]; F32 [..., N].
func inferDynQuantMatMul(_ *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, w, wz, ws := ins[0], ins[1], ins[2], ins[3]
	if x.DType != tensor.F32 || !isQuant8(w.DType) || w.Shape.Rank() != 2 {
		return 0, nil, fmt.Errorf("x %v%v and w %v%v: want F32 x and a 2-D I8 or U8 w", x.DType, x.Shape, w.DType, w.Shape)
	}
	k, n := w.Shape[0], w.Shape[1]
	if x.Shape.Rank() < 1 || x.Shape[x.Shape.Rank()-1] != k {
		return 0, nil, fmt.Errorf("x %v does not end in w's K = %d", x.Shape, k)
	}
	perColumn := func(v *Node) bool {
		c := v.Shape.NumElements()
		return c == 1 && v.Shape.Rank() <= 1 || c == n && v.Shape.Rank() == 1
	}
	if wz.DType != w.DType || !perColumn(wz) || ws.DType != tensor.F32 || !perColumn(ws) {
		return 0, nil, fmt.Errorf("w's zero point %v%v and scale %v%v: want %v and F32, scalars or [%d]", wz.DType, wz.Shape, ws.DType, ws.Shape, w.DType, n)
	}
	if len(ins) == 5 {
		if b := ins[4]; b.DType != tensor.F32 || !b.Shape.Equal(tensor.Shape{n}) {
			return 0, nil, fmt.Errorf("bias %v%v: want F32 [%d]", b.DType, b.Shape, n)
		}
	}
	out := append(tensor.Shape{}, x.Shape...)
	out[len(out)-1] = n
	return tensor.F32, out, nil
}

// qdqOperands checks the operands QDQMatMul and QDQConv share: an F32 x,
// an F32 scalar xScale and U8 scalar xZero (the activations' per-tensor
// quantization), a w of wDims dims in I8 or U8, w's zero point (w's
// dtype) and F32 scale, scalars or [n], and, with Epilogue.Bias, an F32
// bias [n]; the epilogue holds at most an activation of EpilogueActs.
func qdqOperands(a *Attrs, ins []*Node, wDims int, n func(w tensor.Shape) int) error {
	x, xs, xz, w, wz, ws := ins[0], ins[1], ins[2], ins[3], ins[4], ins[5]
	if x.DType != tensor.F32 || xs.DType != tensor.F32 || xz.DType != tensor.U8 || xs.Shape.NumElements() != 1 || xz.Shape.NumElements() != 1 {
		return fmt.Errorf("x %v, scale %v%v, zero point %v%v: want F32 x quantized per tensor to U8", x.DType, xs.DType, xs.Shape, xz.DType, xz.Shape)
	}
	if !isQuant8(w.DType) || w.Shape.Rank() != wDims {
		return fmt.Errorf("w %v%v: want a %d-D I8 or U8", w.DType, w.Shape, wDims)
	}
	c := n(w.Shape)
	perChannel := func(v *Node) bool {
		k := v.Shape.NumElements()
		return k == 1 && v.Shape.Rank() <= 1 || k == c && v.Shape.Rank() == 1
	}
	if wz.DType != w.DType || !perChannel(wz) || ws.DType != tensor.F32 || !perChannel(ws) {
		return fmt.Errorf("w's zero point %v%v and scale %v%v: want %v and F32, scalars or [%d]", wz.DType, wz.Shape, ws.DType, ws.Shape, w.DType, c)
	}
	e := a.Epilogue
	if e.Act != OpInvalid && !IsEpilogueAct(e.Act) || e.Residual || e.PostAct != OpInvalid || e.Pool2x2 || e.Min != 0 || e.Max != 0 {
		return fmt.Errorf("epilogue %+v: want a bias and an activation of %v at most", e, EpilogueActs)
	}
	if len(ins) != 6+b2i(e.Bias) {
		return fmt.Errorf("%d inputs for epilogue %+v", len(ins), e)
	}
	if e.Bias {
		if b := ins[6]; b.DType != tensor.F32 || !b.Shape.Equal(tensor.Shape{c}) {
			return fmt.Errorf("bias %v%v: want F32 [%d]", b.DType, b.Shape, c)
		}
	}
	return nil
}

// inferQDQMatMul: F32 x [..., K] times w [K, N] ([N, K] with TransB);
// F32 [..., N].
func inferQDQMatMul(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	col := 1
	if a.TransB {
		col = 0
	}
	if err := qdqOperands(a, ins, 2, func(w tensor.Shape) int { return w[col] }); err != nil {
		return 0, nil, err
	}
	x, w := ins[0].Shape, ins[3].Shape
	if x.Rank() < 1 || x[x.Rank()-1] != w[1-col] {
		return 0, nil, fmt.Errorf("x %v does not end in w's K = %d", x, w[1-col])
	}
	out := append(tensor.Shape{}, x...)
	out[len(out)-1] = w[col]
	return tensor.F32, out, nil
}

// inferQDQConv: Conv2D's geometry over F32 x [N, C, H, W] and w [M,
// C/groups, kh, kw]; F32 [N, M, OH, OW].
func inferQDQConv(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := qdqOperands(a, ins, 4, func(w tensor.Shape) int { return w[0] }); err != nil {
		return 0, nil, err
	}
	s, err := convShape(a, ins[0].Shape, ins[3].Shape)
	if err != nil {
		return 0, nil, err
	}
	return tensor.F32, s, nil
}
