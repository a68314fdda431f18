package graph

import (
	"errors"
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// Resize returns a copy of g specialised to another extent of a bucketed
// axis: every graph input dim equal to from becomes to, and every node is
// re-inferred in schedule order. Names, inputs, params, constants and
// outputs keep their identity and order, so a program compiled from the
// copy can share the original's weights. Params and constants keep their
// shapes (weights do not depend on the extent); a node that then no longer
// fits is an error naming it.
//
// Attributes that embed extents are adapted:
//   - Reshape: target dims that match the input's leading (or trailing)
//     dims follow the input; if the element count still differs, target
//     dims equal to from become to, or else the one dim that scales by
//     to/from does (a merged [batch*seq] dim).
//   - Expand: target dims over a real input dim follow it; broadcast dims
//     (input dim 1 or absent) equal to from become to.
//   - Slice: on a resized axis, starts and ends are clamped to the new dim
//     (an end at the old dim stays at the end); on an unchanged axis, a
//     partial slice of length from (a position table cut to the sequence)
//     gets length to.
//   - Split: on a resized axis, the one piece of size from, or equal
//     pieces, absorb the change.
//   - Tile: a size-1 dim repeated from times is repeated to times.
//
// Slice bounds are taken as absolute: a bound the builder resolved from a
// negative index is not re-resolved.
func Resize(g *Graph, from, to int) (*Graph, error) {
	if g == nil {
		return nil, errors.New("graph: Resize: nil graph")
	}
	if g.err != nil {
		return nil, g.err
	}
	if from < 1 || to < 1 {
		return nil, fmt.Errorf("graph: Resize %d→%d: extents must be positive", from, to)
	}
	c := g.Clone()
	order, err := c.TopoOrder()
	if err != nil {
		return nil, err
	}
	found := false
	for _, n := range order {
		switch n.Op {
		case OpInput:
			for i, d := range n.Shape {
				if d == from {
					n.Shape[i], found = to, true
				}
			}
			continue
		case OpParam, OpConstant:
			continue
		}
		old := g.Nodes[n.ID]
		err := resizeAttrs(n, old, from, to)
		if err == nil {
			var dt tensor.DType
			var s tensor.Shape
			dt, s, err = infer(n.Op, &n.Attrs, n.Inputs)
			if err == nil {
				err = s.Validate()
			}
			n.DType, n.Shape = dt, s
		}
		if err != nil {
			return nil, fmt.Errorf("graph: Resize %d→%d: node %d %q (%v): %v%s", from, to, n.ID, n.Name, n.Op, err, staticHint(g, old, from))
		}
	}
	if !found {
		return nil, fmt.Errorf("graph: Resize %d→%d: no input has a dim of %d", from, to, from)
	}
	if err := Verify(c); err != nil {
		return nil, err
	}
	return c, nil
}

// staticHint names a param or constant feeding n (through nodes whose
// shape does not depend on the inputs) whose shape holds the extent: the
// usual reason a resized graph does not fit.
func staticHint(g *Graph, n *Node, from int) string {
	seen := map[*Node]bool{}
	var find func(v *Node) *Node
	find = func(v *Node) *Node {
		if seen[v] {
			return nil
		}
		seen[v] = true
		if v.Op == OpInput {
			return nil
		}
		if v.Op == OpParam || v.Op == OpConstant {
			for _, d := range v.Shape {
				if d == from {
					return v
				}
			}
			return nil
		}
		for _, in := range v.Inputs {
			if s := find(in); s != nil {
				return s
			}
		}
		return nil
	}
	for _, in := range n.Inputs {
		if s := find(in); s != nil {
			return fmt.Sprintf(" (%v %q has shape %v: params and constants keep their shapes when resizing)", s.Op, s.Name, s.Shape)
		}
	}
	return ""
}

// resizeAttrs adapts the extent-bearing attributes of n, whose inputs
// already have their new shapes; old is the same node in the original
// graph.
func resizeAttrs(n, old *Node, from, to int) error {
	a := &n.Attrs
	switch n.Op {
	case OpReshape:
		t, err := resizeReshape(old.Attrs.Shape, old.Inputs[0].Shape, n.Inputs[0].Shape, from, to)
		a.Shape = t
		return err
	case OpExpand:
		a.Shape = resizeExpand(old.Attrs.Shape, old.Inputs[0].Shape, n.Inputs[0].Shape, from, to)
	case OpSlice:
		return resizeSlice(a, old.Inputs[0].Shape, n.Inputs[0].Shape, from, to)
	case OpSplit:
		return resizeSplit(a, old.Inputs[0].Shape, n.Inputs[0].Shape, from, to)
	case OpTile:
		s, s2 := old.Inputs[0].Shape, n.Inputs[0].Shape
		for i, r := range a.Reps {
			if i < len(s) && s[i] == 1 && s2[i] == 1 && r == from {
				a.Reps[i] = to
			}
		}
	}
	return nil
}

// resizeReshape adapts a reshape target t of input s, now s2 (see Resize).
func resizeReshape(t, s, s2 tensor.Shape, from, to int) (tensor.Shape, error) {
	if s.Equal(s2) {
		return t, nil
	}
	out := t.Clone()
	fixed := make([]bool, len(t))
	for i := 0; i < len(t) && i < len(s) && t[i] == s[i]; i++ {
		out[i], fixed[i] = s2[i], true
	}
	for i, j := len(t)-1, len(s)-1; i >= 0 && j >= 0 && !fixed[i] && t[i] == s[j]; i, j = i-1, j-1 {
		out[i], fixed[i] = s2[j], true
	}
	want := s2.NumElements()
	if out.NumElements() == want {
		return out, nil
	}
	try := out.Clone()
	for i, d := range t {
		if !fixed[i] && d == from {
			try[i] = to
		}
	}
	if try.NumElements() == want {
		return try, nil
	}
	var found tensor.Shape
	count := 0
	for i, d := range t {
		if fixed[i] || d*to%from != 0 {
			continue
		}
		c := out.Clone()
		c[i] = d * to / from
		if c.NumElements() == want {
			found, count = c, count+1
		}
	}
	if count == 1 {
		return found, nil
	}
	return t, fmt.Errorf("cannot adapt reshape target %v of input %v to input %v", t, s, s2)
}

// resizeExpand adapts a normalised expand target t of input s, now s2.
func resizeExpand(t, s, s2 tensor.Shape, from, to int) tensor.Shape {
	out := t.Clone()
	lead := len(t) - len(s)
	for j, d := range t {
		k := j - lead
		switch {
		case k >= 0 && s[k] != 1:
			out[j] = s2[k]
		case d == from && (k < 0 || s2[k] == 1):
			out[j] = to
		}
	}
	return out
}

// resizeSlice adapts normalised slice bounds from input s to s2.
func resizeSlice(a *Attrs, s, s2 tensor.Shape, from, to int) error {
	for i, ax := range a.Axes {
		if ax < 0 || ax >= len(s) || ax >= len(s2) {
			continue // infer reports it
		}
		st, en, sp, d, d2 := a.Starts[i], a.Ends[i], a.Steps[i], s[ax], s2[ax]
		switch {
		case d2 != d && sp > 0:
			if en == d {
				en = d2
			}
			st, en = min(st, d2), min(en, d2)
		case d2 != d:
			if st == d-1 {
				st = d2 - 1
			}
			st, en = min(st, d2-1), min(en, d2-1)
		case SliceLen(st, en, sp) == from && from < d:
			if sp > 0 {
				en = st + (to-1)*sp + 1
			} else {
				en = st + (to-1)*sp - 1
			}
			if en > d || en < -1 {
				return fmt.Errorf("slice of axis %d (dim %d) from %d cannot hold %d elements", ax, d, st, to)
			}
		}
		a.Starts[i], a.Ends[i] = st, en
	}
	return nil
}

// resizeSplit adapts split sizes along an axis that went from s to s2.
func resizeSplit(a *Attrs, s, s2 tensor.Shape, from, to int) error {
	ax := a.Axis
	if ax < 0 || ax >= len(s) || ax >= len(s2) || s[ax] == s2[ax] {
		return nil
	}
	d2 := s2[ax]
	at := -1
	for i, sz := range a.Sizes {
		if sz == from {
			if at >= 0 {
				at = -2 // ambiguous
				break
			}
			at = i
		}
	}
	if at >= 0 && s[ax]-from+to == d2 {
		a.Sizes[at] = to
		return nil
	}
	equal := true
	for _, sz := range a.Sizes {
		equal = equal && sz == a.Sizes[0]
	}
	if k := len(a.Sizes); equal && d2%k == 0 {
		for i := range a.Sizes {
			a.Sizes[i] = d2 / k
		}
		return nil
	}
	return fmt.Errorf("cannot adapt split sizes %v of axis %d from %d to %d", a.Sizes, ax, s[ax], d2)
}
