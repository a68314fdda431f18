package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// Nodes downstream of a padded result. NonMaxSuppression's selection is
// computed at its upper bound, the rows past the data-dependent result
// being -1 (PaddedRows). A node that works row by row on such a value
// (row i of its result depends only on row i of the padded value, and on
// values without padding) computes its own result at the same upper
// bound, its rows past the selection being filler: the typical Gather of
// the selected boxes by the indices in column 2 of the selection, a Cast,
// arithmetic on them, a Concat along a later axis. PaddedSources names
// the padded node such a value's rows follow; a compiled graph trims such an
// output to the source's result rows, as it does the source itself.
// Every other reader (a reduction over the rows, a Gather of rows of the
// padded value, a MatMul with it as the right operand, ...) would mix
// filler into real results: CheckPadded refuses it.

// PaddedSources maps every node of g that follows a PaddedRows node row
// by row to that node (a PaddedRows node to itself); other nodes are
// absent. It also returns the first node that reads a padded value other
// than row by row, or nil.
func PaddedSources(g *Graph) (srcs map[*Node]*Node, bad *Node) {
	srcs = map[*Node]*Node{}
	seen := map[*Node]bool{}
	var src func(n *Node) *Node
	src = func(n *Node) *Node {
		if seen[n] {
			return srcs[n]
		}
		seen[n] = true
		s, b := n, false
		if !PaddedRows(n) {
			s, b = rowSource(n, src)
		}
		if b && bad == nil {
			bad = n
		}
		if s != nil {
			srcs[n] = s
		}
		return s
	}
	for _, n := range g.Nodes {
		src(n)
	}
	return srcs, bad
}

// rowSource is the padded source n follows row by row, given each
// input's source (src): nil if no input is padded. bad reports that an
// input is padded but n does not keep its rows (or mixes two sources).
func rowSource(n *Node, src func(*Node) *Node) (s *Node, bad bool) {
	var padded []int // inputs with a source
	for i, in := range n.Inputs {
		if is := src(in); is != nil {
			if s != nil && is != s {
				return nil, true // two selections: no one count for the rows
			}
			s = is
			padded = append(padded, i)
		}
	}
	if s == nil {
		return nil, false
	}
	rows := s.Shape[0]
	if n.Shape.Rank() == 0 || n.Shape[0] != rows {
		return nil, true
	}
	ok := false
	switch op := n.Op; {
	case op.IsElementwise(), op == OpFusedElementwise, op == OpConcat && concatAxis(n) != 0:
		// Broadcast inputs repeat along the rows; full ones align with
		// them. A padded input of lower rank would broadcast its rows
		// along a later axis.
		ok = true
		for _, i := range padded {
			ok = ok && n.Inputs[i].Shape.Rank() == n.Shape.Rank()
		}
	case op.IsView():
		ok = n.Inputs[0].Shape[0] == rows // row-major: row i stays row i
	case op == OpTranspose:
		ok = len(n.Attrs.Perm) > 0 && n.Attrs.Perm[0] == 0
	case op == OpSlice:
		ok = true
		for k, ax := range n.Attrs.Axes {
			if ax == 0 && (n.Attrs.Starts[k] != 0 || n.Attrs.Steps[k] != 1) {
				ok = false
			}
		}
	case op == OpGather:
		x, idx := n.Inputs[0], n.Inputs[1]
		ax, err := tensor.NormAxis(n.Attrs.Axis, x.Shape.Rank())
		switch {
		case err != nil:
		case len(padded) == 1 && padded[0] == 0:
			ok = ax != 0 // columns of each row
		case len(padded) == 1 && padded[0] == 1:
			ok = ax == 0 && idx.Shape.Rank() >= 1 // rows of x picked by each index row
		}
	}
	if !ok {
		return nil, true
	}
	return s, false
}

// CheckPadded reports the first node of g that reads a padded value
// (see PaddedSources) other than row by row, naming it, its op and the
// padded node.
func CheckPadded(g *Graph) error {
	srcs, n := PaddedSources(g)
	if n == nil {
		return nil
	}
	var from *Node
	for _, in := range n.Inputs {
		if from = srcs[in]; from != nil {
			break
		}
	}
	return fmt.Errorf("%s (%v) reads the %d rows of %s (%v's selection at its upper bound, the rows past the selection filler) other than row by row: "+
		"kiln's shapes are static, so only nodes keeping those rows (elementwise ops, Cast, Gather of their columns or of rows by their indices, slices and reshapes keeping axis 0, Concat along a later axis) may read them",
		n.Name, n.Op, from.Shape[0], from.Name, from.Op)
}

// concatAxis is a Concat's axis, normalised (-1 if invalid).
func concatAxis(n *Node) int {
	ax, err := tensor.NormAxis(n.Attrs.Axis, n.Shape.Rank())
	if err != nil {
		return -1
	}
	return ax
}
