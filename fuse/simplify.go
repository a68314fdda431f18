package fuse

import (
	"github.com/kilnml/kiln/graph"
)

// simplify applies algebraic clean-ups until none applies:
//   - identity ops are removed: a view, Expand or Tile that keeps the
//     shape, a Transpose with the identity permutation, a Cast to the same
//     dtype, a forward Slice, Pad, Concat or Split that keeps everything,
//     and x·1, 1·x, x/1 and x-0 with a constant that keeps x's shape;
//   - chains of views (Reshape, Squeeze, Unsqueeze, Flatten) collapse into
//     one Reshape of the first view's input;
//   - Transpose of a Transpose becomes one Transpose of the composed
//     permutation.
//
// x+0 is left alone: it turns -0 into +0. A node that is a graph output
// keeps its place (outputs keep their nodes).
func simplify(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		if n.Op.IsSource() || v.out[n.ID] {
			return false, nil
		}
		if x := identityOf(n); x != nil {
			if err := replace(g, n, x); err != nil {
				return false, err
			}
			log.fused("%s (%v) removed: identity", n.Name, n.Op)
			return true, nil
		}
		in := n.Inputs[0]
		switch {
		case n.Op.IsView() && in.Op.IsView():
			base := in
			for base.Op.IsView() {
				base = base.Inputs[0]
			}
			r, err := g.Insert(graph.OpReshape, graph.Attrs{Shape: n.Shape.Clone()}, base)
			if err != nil {
				return false, err
			}
			if err := replace(g, n, r); err != nil {
				return false, err
			}
			log.fused("%s + %s collapsed into %s", in.Name, n.Name, r.Name)
			return true, nil
		case n.Op == graph.OpTranspose && in.Op == graph.OpTranspose:
			inner, outer := in.Attrs.Perm, n.Attrs.Perm
			perm := make([]int, len(outer))
			for i, p := range outer {
				perm[i] = inner[p]
			}
			t, err := g.Insert(graph.OpTranspose, graph.Attrs{Perm: perm}, in.Inputs[0])
			if err != nil {
				return false, err
			}
			if err := replace(g, n, t); err != nil {
				return false, err
			}
			log.fused("%s + %s composed into %s", in.Name, n.Name, t.Name)
			return true, nil
		}
		return false, nil
	})
}

// identityOf returns the input n passes through unchanged, or nil.
func identityOf(n *graph.Node) *graph.Node {
	keeps := func(x *graph.Node) bool { return n.DType == x.DType && n.Shape.Equal(x.Shape) }
	x := n.Inputs[0]
	switch n.Op {
	case graph.OpMul, graph.OpDiv, graph.OpSub:
		y := n.Inputs[1]
		want := 1.0
		if n.Op == graph.OpSub {
			want = 0
		}
		if c, ok := uniform(y); ok && c == want && keeps(x) {
			return x
		}
		if c, ok := uniform(x); ok && c == 1 && n.Op == graph.OpMul && keeps(y) {
			return y
		}
		return nil
	}
	if !keeps(x) {
		return nil
	}
	switch n.Op {
	case graph.OpReshape, graph.OpSqueeze, graph.OpUnsqueeze, graph.OpFlatten, graph.OpExpand, graph.OpTile,
		graph.OpCast, graph.OpPad:
		// Same shape: no dims added or removed, nothing repeated, no
		// padding (the shape would grow), no conversion.
		return x
	case graph.OpTranspose:
		for i, p := range n.Attrs.Perm {
			if p != i {
				return nil
			}
		}
		return x
	case graph.OpSlice:
		for _, s := range n.Attrs.Steps {
			if s < 0 { // a reversal keeps the shape
				return nil
			}
		}
		return x
	case graph.OpSplit: // one piece as large as the input
		return x
	case graph.OpConcat:
		if len(n.Inputs) == 1 {
			return x
		}
	}
	return nil
}
