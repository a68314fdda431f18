package fuse

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// dynamicQuant finds ONNX Runtime's dynamically quantized MatMul,
//
//	(q, s, z) = DynamicQuantizeLinear(x)
//	y = Cast<f32>(MatMulInteger(q, w, z, wZero)) · Mul(s, wScale) [+ bias]
//
// with a 2-D weight w, and makes it one DynQuantMatMul (graph/fused.go),
// which runs the product on the int8 GEMM with the same bits. The
// quantization's outputs may feed other products (Q, K and V share
// theirs); each fused product quantizes x again, and the quantization
// itself goes when nothing else reads it.
func dynamicQuant(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		if n.Op != graph.OpMatMulInteger || len(n.Inputs) != 4 {
			return false, nil
		}
		q, w, z, wz := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3]
		if !dqlOutput(q, 0) || !dqlOutput(z, 2) || z.Inputs[0] != q.Inputs[0] || w.Shape.Rank() != 2 {
			return false, nil
		}
		x := q.Inputs[0]
		users := v.users[n.ID]
		if len(users) != 1 || users[0].Op != graph.OpCast || users[0].DType != tensor.F32 {
			log.miss("%s: not cast to f32 alone", n.Name)
			return false, nil
		}
		cast := users[0]
		if ok, why := v.chainLink(n, cast, nil); !ok {
			log.miss("%s: %s", n.Name, why)
			return false, nil
		}
		users = v.users[cast.ID]
		if len(users) != 1 || users[0].Op != graph.OpMul {
			log.miss("%s: not scaled by one Mul", cast.Name)
			return false, nil
		}
		mul := users[0]
		scale := otherOperand(mul, cast)
		ws := weightScaleOf(scale, x)
		if ws == nil {
			log.miss("%s: the scale is not x's quantization scale times the weights'", mul.Name)
			return false, nil
		}
		if ok, why := v.chainLink(cast, mul, nil); !ok {
			log.miss("%s: %s", cast.Name, why)
			return false, nil
		}
		ins := []*graph.Node{x, w, wz, ws}
		last, chain := mul, []*graph.Node{n, cast, mul}
		if users = v.users[mul.ID]; len(users) == 1 && users[0].Op == graph.OpAdd && !v.out[mul.ID] {
			add := users[0]
			if b := otherOperand(add, mul); b != nil && b.DType == tensor.F32 && b.Shape.Equal(tensor.Shape{w.Shape[1]}) {
				ins, last, chain = append(ins, b), add, append(chain, add)
			}
		}
		return insertFused(g, log, graph.OpDynQuantMatMul, graph.Attrs{}, ins, chain, last)
	})
}

// insertFused inserts a node of op on ins in place of the chain ending at
// last, reporting whether it did: a node that cannot be made, or whose
// shape is not last's, is logged as a near miss.
func insertFused(g *graph.Graph, log *Log, op graph.Op, at graph.Attrs, ins, chain []*graph.Node, last *graph.Node) (bool, error) {
	f, err := g.Insert(op, at, ins...)
	if err != nil || !f.Shape.Equal(last.Shape) {
		log.miss("%s: %v", names(chain...), err)
		return false, nil
	}
	if err := replace(g, last, f); err != nil {
		return false, err
	}
	log.fused("%s → %s", names(chain...), f.Name)
	return true, nil
}

// dqlOutput reports whether n is output i of a DynamicQuantizeLinear.
func dqlOutput(n *graph.Node, i int) bool {
	return n.Op == graph.OpDynamicQuantizeLinear && n.Attrs.Index == i && len(n.Inputs) == 1
}

// weightScaleOf returns w's scale when s is Mul(x's quantization scale, wScale)
// in either order, wScale F32 and a scalar or one value per column.
func weightScaleOf(s, x *graph.Node) *graph.Node {
	if s == nil || s.Op != graph.OpMul || len(s.Inputs) != 2 {
		return nil
	}
	for i, in := range s.Inputs {
		if dqlOutput(in, 1) && in.Inputs[0] == x {
			ws := s.Inputs[1-i]
			if ws.DType == tensor.F32 && ws.Shape.Rank() <= 1 {
				return ws
			}
		}
	}
	return nil
}
