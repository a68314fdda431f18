package fuse

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// attention recognises scaled dot-product attention spelled out as
// exported models spell it,
//
//	MatMul(Softmax(mask(scale(MatMul(Q, Transpose(K)))), last axis), V)
//
// where scale is a Mul or Div by a uniform constant (or a Mul of Q by
// one), mask is an Add of a float mask or a Where(bool, ·, -Inf), both
// optional, and replaces it by one Attention node, whose kernel never
// materialises the score matrix. Rank-2 and rank-3 operands are viewed as
// rank 4. A constant additive mask that is exactly the causal pattern (0
// on and below the diagonal, -Inf above) becomes the Causal flag.
//
// Attention follows the spelled-out formula's NaN and Inf behaviour (a
// fully masked row is NaN, 0·Inf in the value product is NaN; see
// Graph.Attention), so the rewrite does not change results, with one
// exception at the edge: the Causal flag removes a position outright,
// where the constant mask it replaces adds -Inf, which a NaN or +Inf score
// (from a NaN or Inf in Q or K) turns into NaN instead.
func attention(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		if n.Op != graph.OpMatMul || n.Inputs[0].Op != graph.OpSoftmax {
			return false, nil
		}
		m, why := matchAttention(v, n)
		if m == nil {
			log.miss("%s: %s", names(n.Inputs[0], n), why)
			return false, nil
		}
		a, err := m.build(g, n)
		if err != nil {
			log.miss("%s: %v", names(m.chain...), err)
			return false, nil
		}
		if err := replace(g, n, a); err != nil {
			return false, err
		}
		log.fused("%s → %s (scale %g, causal %v, mask %v)", names(m.chain...), a.Name, m.scale, m.causal, m.mask != nil)
		return true, nil
	})
}

type attnMatch struct {
	q, k, v, mask *graph.Node
	kPerm         []int // k is Transpose(k, kPerm) when set
	scale         float64
	causal        bool
	chain         []*graph.Node // the absorbed nodes, product first
}

// matchAttention walks from the final product back to Q and K, checking
// every intermediate with the shared legality predicate.
func matchAttention(v *view, root *graph.Node) (*attnMatch, string) {
	p, val := root.Inputs[0], root.Inputs[1]
	if r := p.Shape.Rank(); p.Attrs.Axis != r-1 {
		return nil, fmt.Sprintf("softmax over axis %d, not the last", p.Attrs.Axis)
	}
	if ok, why := v.chainLink(p, root, nil); !ok {
		return nil, why
	}
	m := &attnMatch{v: val, scale: 1}
	chain := []*graph.Node{root, p}
	s := p.Inputs[0]
	next := p
	// The mask: an Add of a float mask, or Where(bool, scores, -Inf).
	switch s.Op {
	case graph.OpAdd:
		x, y := s.Inputs[0], s.Inputs[1]
		if !scoresLike(x) || !x.Shape.Equal(s.Shape) {
			x, y = y, x
		}
		if !scoresLike(x) || !x.Shape.Equal(s.Shape) || !keepsShape(x, y) {
			return nil, fmt.Sprintf("%s is not scores + mask", s.Name)
		}
		m.mask = y
	case graph.OpWhere:
		c, x, y := s.Inputs[0], s.Inputs[1], s.Inputs[2]
		if ninf, ok := uniform(y); !ok || !math.IsInf(ninf, -1) || !x.Shape.Equal(s.Shape) || !keepsShape(x, c) {
			return nil, fmt.Sprintf("%s is not Where(mask, scores, -Inf)", s.Name)
		}
		m.mask = c
	}
	if m.mask != nil {
		if ok, why := v.chainLink(s, next, nil); !ok {
			return nil, why
		}
		chain = append(chain, s)
		next, s = s, scoresOf(s)
	}
	// The scale: a Mul or Div by a uniform constant.
	if c, x, ok := scaleOf(s); ok {
		if ok, why := v.chainLink(s, next, nil); !ok {
			return nil, why
		}
		m.scale = c
		chain = append(chain, s)
		next, s = s, x
	}
	if s.Op != graph.OpMatMul {
		return nil, fmt.Sprintf("the softmax input does not come from a product (%s is %v)", s.Name, s.Op)
	}
	if ok, why := v.chainLink(s, next, nil); !ok {
		return nil, why
	}
	chain = append(chain, s)
	q, kt := s.Inputs[0], s.Inputs[1]
	if kt.Op != graph.OpTranspose || kt.Shape.Rank() < 2 {
		return nil, fmt.Sprintf("the key operand %s is not a transpose of the keys", kt.Name)
	}
	// Kᵀ = Transpose(base, perm): K is base under perm with its last two
	// entries swapped (the identity when Kᵀ just swaps K's last two axes,
	// else a transpose the simplify pass composed with the head split).
	m.k = kt.Inputs[0]
	perm := append([]int(nil), kt.Attrs.Perm...)
	perm[len(perm)-1], perm[len(perm)-2] = perm[len(perm)-2], perm[len(perm)-1]
	for i, p := range perm {
		if p != i {
			m.kPerm = perm
			break
		}
	}
	if c, x, ok := scaleOf(q); ok && q.Op == graph.OpMul && v.sole(q) == s {
		m.scale *= c
		chain = append(chain, q)
		q = x
	}
	m.q = q
	if m.scale == 0 || math.IsInf(m.scale, 0) || math.IsNaN(m.scale) {
		return nil, fmt.Sprintf("scale %v", m.scale)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 { // product first
		chain[i], chain[j] = chain[j], chain[i]
	}
	m.chain = chain
	return m, ""
}

// scoresLike reports whether n can be the scaled scores under a mask.
func scoresLike(n *graph.Node) bool {
	return n.Op == graph.OpMatMul || n.Op == graph.OpMul || n.Op == graph.OpDiv
}

// scoresOf is the scores operand of a mask node.
func scoresOf(s *graph.Node) *graph.Node {
	if s.Op == graph.OpWhere {
		return s.Inputs[1]
	}
	if scoresLike(s.Inputs[0]) && s.Inputs[0].Shape.Equal(s.Shape) {
		return s.Inputs[0]
	}
	return s.Inputs[1]
}

// scaleOf matches x·c, c·x or x/c with c a uniform constant that keeps
// x's shape, returning the factor and x.
func scaleOf(n *graph.Node) (float64, *graph.Node, bool) {
	switch n.Op {
	case graph.OpMul:
		for i := range 2 {
			x, c := n.Inputs[i], n.Inputs[1-i]
			if f, ok := uniform(c); ok && keepsShape(x, c) && x.Shape.Equal(n.Shape) {
				return f, x, true
			}
		}
	case graph.OpDiv:
		x, c := n.Inputs[0], n.Inputs[1]
		if f, ok := uniform(c); ok && keepsShape(x, c) && f != 0 {
			return 1 / f, x, true
		}
	}
	return 0, nil, false
}

// swapsLastTwo reports whether n is a Transpose exchanging the last two
// axes and keeping the others.
func swapsLastTwo(n *graph.Node) bool {
	if n.Op != graph.OpTranspose {
		return false
	}
	p := n.Attrs.Perm
	r := len(p)
	if r < 2 || p[r-1] != r-2 || p[r-2] != r-1 {
		return false
	}
	for i := range r - 2 {
		if p[i] != i {
			return false
		}
	}
	return true
}

// build inserts the Attention node (with rank-4 views around it when the
// operands have rank 2 or 3) and returns the node that replaces root.
func (m *attnMatch) build(g *graph.Graph, root *graph.Node) (*graph.Node, error) {
	if m.kPerm != nil {
		k, err := g.Insert(graph.OpTranspose, graph.Attrs{Perm: m.kPerm}, m.k)
		if err != nil {
			return nil, err
		}
		m.k, m.kPerm = k, nil
	}
	r := m.q.Shape.Rank()
	if r < 2 || r > 4 || m.k.Shape.Rank() != r || m.v.Shape.Rank() != r {
		return nil, fmt.Errorf("q %v, k %v, v %v: want equal ranks 2 to 4", m.q.Shape, m.k.Shape, m.v.Shape)
	}
	to4 := func(n *graph.Node) (*graph.Node, error) {
		if r == 4 {
			return n, nil
		}
		s := append(make(tensor.Shape, 4-r), n.Shape...)
		for i := range 4 - r {
			s[i] = 1
		}
		return g.Insert(graph.OpReshape, graph.Attrs{Shape: s}, n)
	}
	ins := make([]*graph.Node, 0, 4)
	for _, n := range []*graph.Node{m.q, m.k, m.v} {
		x, err := to4(n)
		if err != nil {
			return nil, err
		}
		ins = append(ins, x)
	}
	sq, sk := m.q.Shape[r-2], m.k.Shape[r-2]
	if m.mask != nil && m.mask.DType != tensor.Bool && causalMask(m.mask, sq, sk) {
		m.causal, m.mask = true, nil
	}
	if m.mask != nil {
		ins = append(ins, m.mask)
	}
	a, err := g.Insert(graph.OpAttention, graph.Attrs{Scale: float32(m.scale), Causal: m.causal}, ins...)
	if err != nil {
		return nil, err
	}
	if r == 4 {
		return a, nil
	}
	return g.Insert(graph.OpReshape, graph.Attrs{Shape: root.Shape.Clone()}, a)
}

// causalMask reports whether the constant n is the bottom-right aligned
// causal mask over [sq, sk] (leading dims 1): 0 where key j <= i + sk - sq,
// -Inf elsewhere. Finite values at or below -1e30 also count as -Inf when
// every row keeps a key (sk >= sq): their exp underflows to exactly 0.
func causalMask(n *graph.Node, sq, sk int) bool {
	t, ok := constValue(n)
	s := n.Shape
	if !ok || s.Rank() < 2 || s[s.Rank()-2] != sq || s[s.Rank()-1] != sk || s.NumElements() != sq*sk {
		return false
	}
	vals := t.Float64s()
	for i := range sq {
		for j := range sk {
			x := vals[i*sk+j]
			if j <= i+sk-sq {
				if x != 0 {
					return false
				}
			} else if !math.IsInf(x, -1) && !(x <= -1e30 && sk >= sq) {
				return false
			}
		}
	}
	return true
}
