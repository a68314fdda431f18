package fuse

import (
	"github.com/kilnml/kiln/graph"
)

// Exporters that predate ONNX's LayerNormalization (opset < 17) and most
// RMSNorm exports spell the norms out in primitives:
//
//	LayerNorm: d = x − mean(x); y = d / sqrt(mean(d²) + eps) [· γ] [+ β]
//	RMSNorm:   y = x / sqrt(mean(x²) + eps) [· γ]
//
// (d² as Pow(d, 2) or d·d; "/ s" as Div or · Reciprocal(s); means as
// ReduceMean over trailing axes with keepdims). recogniseNorms turns each
// into one LayerNorm / RMSNorm node, which the norm pass may then merge
// with a residual add: one row pass instead of six to nine steps that each
// stream the activations.
func recogniseNorms(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		m, ok := matchNorm(v, n)
		if !ok {
			return false, nil
		}
		var f *graph.Node
		var err error
		if m.layer {
			f, err = g.Insert(graph.OpLayerNorm, graph.Attrs{Axis: m.axis, Eps: m.eps}, nonNilNodes(m.x, m.scale, m.bias)...)
		} else {
			f, err = g.Insert(graph.OpRMSNorm, graph.Attrs{Axis: m.axis, Eps: m.eps}, nonNilNodes(m.x, m.scale)...)
		}
		if err != nil {
			log.miss("%s: %v", names(m.nodes...), err)
			return false, nil
		}
		if err := replace(g, m.out, f); err != nil {
			return false, err
		}
		log.fused("%s → %s", names(m.nodes...), f.Name)
		return true, nil
	})
}

// normMatch is a spelled-out norm found by matchNorm.
type normMatch struct {
	layer          bool // LayerNorm (else RMSNorm)
	x, scale, bias *graph.Node
	axis           int
	eps            float32
	out            *graph.Node   // the last node of the pattern
	nodes          []*graph.Node // every node of the pattern, for the report
}

// matchNorm matches a norm whose squared input is sq = Pow(c, 2) or c·c,
// n being the mean of sq.
func matchNorm(v *view, n *graph.Node) (normMatch, bool) {
	var m normMatch
	axis, ok := trailingMean(n)
	if !ok {
		return m, false
	}
	sq := n.Inputs[0]
	c, ok := squareOf(sq)
	if !ok || !c.DType.IsFloat() || !c.Shape.Equal(sq.Shape) || v.sole(sq) != n {
		return m, false
	}
	// LayerNorm when c = x − mean(x) over the same axes; else RMSNorm of c.
	m.x, m.axis = c, axis
	var mean *graph.Node
	if c.Op == graph.OpSub && c.Inputs[0].Shape.Equal(c.Shape) {
		if a, ok := trailingMean(c.Inputs[1]); ok && a == axis && c.Inputs[1].Inputs[0] == c.Inputs[0] {
			m.layer, m.x, mean = true, c.Inputs[0], c.Inputs[1]
		}
	}
	// sqrt(n + eps), then c divided by it.
	add := v.sole(n)
	if add == nil || add.Op != graph.OpAdd {
		return m, false
	}
	epsNode := otherOperand(add, n)
	eps, ok := uniform(epsNode)
	if !ok || !keepsShape(n, epsNode) || eps < 0 {
		return m, false
	}
	m.eps = float32(eps)
	root := v.sole(add)
	if root == nil || root.Op != graph.OpSqrt {
		return m, false
	}
	y, pattern, ok := divideBy(v, c, root)
	if !ok {
		return m, false
	}
	m.nodes = append([]*graph.Node{sq, n, add, root}, pattern...)
	if m.layer {
		m.nodes = append([]*graph.Node{mean, c}, m.nodes...)
		// c is read by the square and the division only; mean only by c.
		if !onlyUsers(v, c, sq, y, pattern) || v.sole(mean) != c {
			return m, false
		}
	}
	m.out = y
	// Optional affine tail: · γ then + β, each shaped like the normalised dims.
	want := m.x.Shape[axis:]
	if mul := v.sole(y); mul != nil && mul.Op == graph.OpMul {
		if s := otherOperand(mul, y); s != nil && s.Shape.Equal(want) && mul.Shape.Equal(y.Shape) && s.DType == y.DType {
			m.scale, m.out = s, mul
			m.nodes = append(m.nodes, mul)
			if add := v.sole(mul); m.layer && add != nil && add.Op == graph.OpAdd {
				if b := otherOperand(add, mul); b != nil && b.Shape.Equal(want) && add.Shape.Equal(y.Shape) && b.DType == y.DType {
					m.bias, m.out = b, add
					m.nodes = append(m.nodes, add)
				}
			}
		}
	}
	return m, m.x.Shape.Equal(y.Shape)
}

// trailingMean reports whether n is a keepdims ReduceMean over the
// trailing axes [axis, rank) of its input, and axis.
func trailingMean(n *graph.Node) (int, bool) {
	if n.Op != graph.OpReduceMean || !n.Attrs.KeepDims || len(n.Attrs.Axes) == 0 || !n.DType.IsFloat() {
		return 0, false
	}
	r, axes := len(n.Inputs[0].Shape), n.Attrs.Axes
	for i, a := range axes {
		if a != r-len(axes)+i {
			return 0, false
		}
	}
	return axes[0], true
}

// squareOf returns c when n is Pow(c, 2) or Mul(c, c).
func squareOf(n *graph.Node) (*graph.Node, bool) {
	switch n.Op {
	case graph.OpPow:
		if p, ok := uniform(n.Inputs[1]); ok && p == 2 && keepsShape(n.Inputs[0], n.Inputs[1]) {
			return n.Inputs[0], true
		}
	case graph.OpMul:
		if n.Inputs[0] == n.Inputs[1] {
			return n.Inputs[0], true
		}
	}
	return nil, false
}

// divideBy finds c / s among c's consumers: Div(c, s), or c · r with
// r = Reciprocal(s) read only there. It returns the quotient node and the
// nodes of the division.
func divideBy(v *view, c, s *graph.Node) (*graph.Node, []*graph.Node, bool) {
	u := v.sole(s)
	switch {
	case u == nil:
		return nil, nil, false
	case u.Op == graph.OpDiv && u.Inputs[0] == c && u.Inputs[1] == s:
		return u, []*graph.Node{u}, true
	case u.Op == graph.OpReciprocal:
		if mul := v.sole(u); mul != nil && mul.Op == graph.OpMul && otherOperand(mul, u) == c {
			return mul, []*graph.Node{u, mul}, true
		}
	}
	return nil, nil, false
}

// onlyUsers reports whether every consumer of c is sq, y or in pattern,
// and c is not a graph output.
func onlyUsers(v *view, c, sq, y *graph.Node, pattern []*graph.Node) bool {
	if v.out[c.ID] {
		return false
	}
	for _, u := range v.users[c.ID] {
		if u != sq && u != y && !repeated(pattern, u) {
			return false
		}
	}
	return true
}

// otherOperand is the input of binary node b that is not x (nil when x is
// not an input, or both are x).
func otherOperand(b, x *graph.Node) *graph.Node {
	switch {
	case len(b.Inputs) != 2 || b.Inputs[0] == b.Inputs[1]:
		return nil
	case b.Inputs[0] == x:
		return b.Inputs[1]
	case b.Inputs[1] == x:
		return b.Inputs[0]
	}
	return nil
}

// nonNilNodes drops the nil entries of ns.
func nonNilNodes(ns ...*graph.Node) []*graph.Node {
	out := ns[:0:0]
	for _, n := range ns {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}
