package fuse

import (
	"bytes"
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// qdqProducts finds ONNX Runtime's static QDQ form of a product,
//
//	y = MatMul | Gemm | Conv2D(DequantizeLinear(QuantizeLinear(x, s, z), s, z),
//	                           DequantizeLinear(w, wScale, wZero) [, bias])
//	    [+ bias] [→ activation]
//
// and makes it one QDQMatMul or QDQConv (graph/fused.go), which
// quantizes x itself, sums the int8 products exactly in int32 and
// dequantizes with a float epilogue. The pattern holds when x's
// quantization is U8 per tensor with constant (or param) scale and zero
// point, the same in both halves of the pair; w is I8 or U8, a param or
// constant, with a constant or param scale and zero point, per tensor or
// per output channel (axis 1 of a MatMul's [K, N] or a Gemm's [K, N], 0
// of a transB Gemm's [N, K] or a Conv's [M, C, kh, kw]); a Gemm has alpha
// and beta 1 and no transA, its bias [N]. A MatMul takes a following Add
// of an F32 [N] as its bias; an activation of graph.EpilogueActs that is
// the product's only consumer joins the epilogue. The Q/DQ pair stays for
// any other consumer of it (dead code goes later).
func qdqProducts(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		op, axis, at, ok := qdqProductForm(n)
		if !ok || len(n.Inputs) < 2 || n.Inputs[0].Op != graph.OpDequantizeLinear || n.Inputs[1].Op != graph.OpDequantizeLinear {
			return false, nil
		}
		x, xs, xz, why := qdqActivation(n.Inputs[0])
		if why != "" {
			log.miss("%s: x: %s", n.Name, why)
			return false, nil
		}
		w, wz, ws, why := qdqWeight(n.Inputs[1], axis)
		if why != "" {
			log.miss("%s: w: %s", n.Name, why)
			return false, nil
		}
		ins := []*graph.Node{x, xs, xz, w, wz, ws}
		last, chain := n, []*graph.Node{n}
		nOut := n.Shape[n.Shape.Rank()-1]
		if op == graph.OpQDQConv {
			nOut = n.Shape[1]
		}
		if len(n.Inputs) == 3 {
			b := n.Inputs[2]
			if b.DType != tensor.F32 || !b.Shape.Equal(tensor.Shape{nOut}) {
				log.miss("%s: bias %v%v is not F32 [%d]", n.Name, b.DType, b.Shape, nOut)
				return false, nil
			}
			ins, at.Epilogue.Bias = append(ins, b), true
		}
		if users := v.users[n.ID]; op == graph.OpQDQMatMul && len(n.Inputs) == 2 && len(users) == 1 && users[0].Op == graph.OpAdd {
			add := users[0]
			if b := otherOperand(add, n); b != nil && b.DType == tensor.F32 && b.Shape.Equal(tensor.Shape{nOut}) {
				if ok, _ := v.chainLink(n, add, nil); ok {
					ins, at.Epilogue.Bias, last, chain = append(ins, b), true, add, append(chain, add)
				}
			}
		}
		if users := v.users[last.ID]; len(users) == 1 && graph.IsEpilogueAct(users[0].Op) && len(users[0].Inputs) == 1 {
			if ok, _ := v.chainLink(last, users[0], nil); ok {
				at.Epilogue.Act, last, chain = users[0].Op, users[0], append(chain, users[0])
			}
		}
		return insertFused(g, log, op, at, ins, chain, last)
	})
}

// qdqProductForm is the fused op a product becomes, the axis of its
// weight's output channels, and the attributes it carries over.
func qdqProductForm(n *graph.Node) (op graph.Op, axis int, at graph.Attrs, ok bool) {
	switch a := n.Attrs; n.Op {
	case graph.OpMatMul:
		return graph.OpQDQMatMul, 1, at, len(n.Inputs) == 2 && n.Inputs[1].Shape.Rank() == 2
	case graph.OpGemm:
		if a.TransA || a.Alpha != 1 || (len(n.Inputs) == 3 && a.Beta != 1) {
			return 0, 0, at, false
		}
		at.TransB = a.TransB
		return graph.OpQDQMatMul, 1 - btoi(a.TransB), at, true
	case graph.OpConv2D:
		at = graph.Attrs{Strides: a.Strides, Pads: a.Pads, Dilations: a.Dilations, Groups: a.Groups}
		return graph.OpQDQConv, 0, at, true
	}
	return 0, 0, at, false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fixed reports whether n's value is set before a run: a constant or a
// param, seen through views.
func fixed(n *graph.Node) bool {
	for n.Op.IsView() {
		n = n.Inputs[0]
	}
	return n.Op == graph.OpConstant || n.Op == graph.OpParam
}

// sameValue reports whether a and b are the same node or constants of
// equal dtype, shape and bytes.
func sameValue(a, b *graph.Node) bool {
	if a == b {
		return true
	}
	ta, oka := constValue(a)
	tb, okb := constValue(b)
	return oka && okb && ta.DType == tb.DType && ta.Shape.Equal(tb.Shape) && bytes.Equal(ta.Data, tb.Data)
}

// qdqActivation reads d = DequantizeLinear(QuantizeLinear(x, s, z), s, z)
// with a U8 per-tensor quantization of an F32 x by fixed s and z; why
// says what does not fit.
func qdqActivation(d *graph.Node) (x, s, z *graph.Node, why string) {
	q := d.Inputs[0]
	switch {
	case len(d.Inputs) != 3 || q.Op != graph.OpQuantizeLinear || len(q.Inputs) != 3:
		return nil, nil, nil, fmt.Sprintf("%s does not dequantize a QuantizeLinear", d.Name)
	case q.DType != tensor.U8 || q.Inputs[0].DType != tensor.F32 || d.DType != tensor.F32:
		return nil, nil, nil, fmt.Sprintf("%s quantizes %v to %v: want F32 to U8", q.Name, q.Inputs[0].DType, q.DType)
	case d.Inputs[1].Shape.NumElements() != 1:
		return nil, nil, nil, fmt.Sprintf("%s is per axis (%v scales): want per tensor", d.Name, d.Inputs[1].Shape)
	case !sameValue(q.Inputs[1], d.Inputs[1]) || !sameValue(q.Inputs[2], d.Inputs[2]):
		return nil, nil, nil, fmt.Sprintf("%s and %s use different scales or zero points", q.Name, d.Name)
	case !fixed(d.Inputs[1]) || !fixed(d.Inputs[2]):
		return nil, nil, nil, fmt.Sprintf("%s's scale or zero point is computed in the graph", d.Name)
	}
	return q.Inputs[0], d.Inputs[1], d.Inputs[2], ""
}

// qdqWeight reads d = DequantizeLinear(w, scale, zero) with a fixed I8
// or U8 w, a fixed F32 scale and zero point, per tensor or along axis.
func qdqWeight(d *graph.Node, axis int) (w, zero, scale *graph.Node, why string) {
	w = d.Inputs[0]
	switch {
	case len(d.Inputs) != 3 || w.DType != tensor.I8 && w.DType != tensor.U8 || d.DType != tensor.F32:
		return nil, nil, nil, fmt.Sprintf("%s dequantizes %v to %v: want I8 or U8 to F32", d.Name, w.DType, d.DType)
	case !fixed(w):
		return nil, nil, nil, fmt.Sprintf("%s's weights are computed in the graph", d.Name)
	case !fixed(d.Inputs[1]) || !fixed(d.Inputs[2]):
		return nil, nil, nil, fmt.Sprintf("%s's scale or zero point is computed in the graph", d.Name)
	case d.Inputs[1].Shape.NumElements() != 1 && d.Attrs.Axis != axis:
		return nil, nil, nil, fmt.Sprintf("%s is per axis %d: want per tensor or axis %d (output channels)", d.Name, d.Attrs.Axis, axis)
	}
	return w, d.Inputs[2], d.Inputs[1], ""
}
