package onnx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kilnml/kiln/graph"
)

func init() { register("Einsum", 12, one(mapEinsum)) }

// Einsum is lowered to ops kiln already runs fast: a repeated label in
// one operand (a diagonal) is a transpose, a view merging the two axes
// and a Gather of every (d+1)-th entry; a label no other operand or the
// output has is a ReduceSum; and each pair of operands, left to right,
// is one batched MatMul between transposes and reshapes ([batch, kept of
// the left, contracted] × [batch, contracted, kept of the right]), so the
// GEMM kernels do the work. The result is transposed to the output's
// label order.

// ellipsisBase is where the labels standing for ellipsis dims start:
// past every letter, so they never collide with the equation's own.
const ellipsisBase = rune(0x100)

// einsumTerm is one operand: its node and one label per axis.
type einsumTerm struct {
	n      *graph.Node
	labels []rune
}

func mapEinsum(c *ctx) (*graph.Node, error) {
	eq, err := c.attrString("equation", "")
	if err != nil {
		return nil, err
	}
	terms := make([]einsumTerm, len(c.ins))
	for i := range c.ins {
		if terms[i].n, err = c.need(i); err != nil {
			return nil, err
		}
	}
	out, err := parseEinsum(eq, terms)
	if err != nil {
		return nil, err
	}
	sizes := map[rune]int{}
	for _, t := range terms {
		for a, l := range t.labels {
			d := t.n.Shape[a]
			if s, ok := sizes[l]; ok && s != d {
				if l >= ellipsisBase {
					return nil, unsupportedf("einsum %q: ellipsis dims %d and %d differ (kiln does not broadcast them)", eq, s, d)
				}
				return nil, fmt.Errorf("einsum %q: label %c has sizes %d and %d", eq, l, s, d)
			}
			sizes[l] = d
		}
	}
	for i := range terms {
		if terms[i], err = c.einsumDiagonals(terms[i], sizes); err != nil {
			return nil, err
		}
	}
	acc := terms[0]
	for i := 1; i < len(terms); i++ {
		keep := slices.Clone(out)
		for _, t := range terms[i+1:] {
			keep = append(keep, t.labels...)
		}
		if acc, err = c.einsumPair(acc, terms[i], keep, sizes); err != nil {
			return nil, err
		}
	}
	if acc, err = c.einsumSum(acc, out, nil); err != nil {
		return nil, err
	}
	return c.einsumOrder(acc, out), nil
}

// parseEinsum fills each term's labels from the equation and returns the
// output's, expanding "..." into ellipsisBase+k labels aligned on the
// right (numpy's rule), and writing the implicit output (ellipsis, then
// the letters that occur once, sorted) when there is no "->".
func parseEinsum(eq string, terms []einsumTerm) ([]rune, error) {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != len(terms) {
		return nil, fmt.Errorf("einsum %q has %d operands, the node %d inputs", eq, len(parts), len(terms))
	}
	ell := 0 // dims the ellipsis stands for, the most over the operands
	hasEll := false
	for i, p := range parts {
		letters, dots, err := einsumLabels(eq, p)
		if err != nil {
			return nil, err
		}
		r := terms[i].n.Shape.Rank()
		e := r - len(letters)
		if e < 0 || (!dots && e != 0) {
			return nil, fmt.Errorf("einsum %q: operand %d %q has rank %d", eq, i, p, r)
		}
		hasEll = hasEll || dots
		ell = max(ell, e)
	}
	count := map[rune]int{}
	for i, p := range parts {
		e := terms[i].n.Shape.Rank() - len(strings.ReplaceAll(p, "...", ""))
		before, after, _ := strings.Cut(p, "...")
		var labels []rune
		labels = append(labels, []rune(before)...)
		for k := ell - e; k < ell; k++ {
			labels = append(labels, ellipsisBase+rune(k))
		}
		labels = append(labels, []rune(after)...)
		terms[i].labels = labels
		for _, l := range labels {
			count[l]++
		}
	}
	var out []rune
	if !explicit {
		for k := range ell {
			out = append(out, ellipsisBase+rune(k))
		}
		var once []rune
		for l, n := range count {
			if n == 1 && l < ellipsisBase {
				once = append(once, l)
			}
		}
		slices.Sort(once)
		return append(out, once...), nil
	}
	letters, dots, err := einsumLabels(eq, rhs)
	if err != nil {
		return nil, err
	}
	if hasEll && !dots && ell > 0 {
		return nil, fmt.Errorf("einsum %q: the output leaves out the ellipsis dims (write ... in it)", eq)
	}
	before, after, _ := strings.Cut(rhs, "...")
	out = append(out, []rune(before)...)
	if dots {
		for k := range ell {
			out = append(out, ellipsisBase+rune(k))
		}
	}
	out = append(out, []rune(after)...)
	seen := map[rune]bool{}
	for _, l := range letters {
		if seen[l] || count[l] == 0 {
			return nil, fmt.Errorf("einsum %q: output label %c is repeated or in no operand", eq, l)
		}
		seen[l] = true
	}
	return out, nil
}

// einsumLabels checks one term: letters and at most one "...".
func einsumLabels(eq, term string) ([]rune, bool, error) {
	dots := strings.Count(term, "...")
	letters := []rune(strings.ReplaceAll(term, "...", ""))
	if dots > 1 {
		return nil, false, fmt.Errorf("einsum %q: term %q has more than one ellipsis", eq, term)
	}
	for _, l := range letters {
		if !(l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z') {
			return nil, false, fmt.Errorf("einsum %q: %q is not a label (letters and one ... only)", eq, l)
		}
	}
	return letters, dots == 1, nil
}

// einsumDiagonals takes the diagonal of every label repeated in t.
func (c *ctx) einsumDiagonals(t einsumTerm, sizes map[rune]int) (einsumTerm, error) {
	for {
		p, q := -1, -1
		for i := range t.labels {
			if j := slices.Index(t.labels[i+1:], t.labels[i]); j >= 0 {
				p, q = i, i+1+j
				break
			}
		}
		if p < 0 {
			return t, nil
		}
		l, d := t.labels[p], sizes[t.labels[p]]
		var perm []int
		var labels []rune
		var dims []int
		for i := range t.labels {
			if i != p && i != q {
				perm, labels, dims = append(perm, i), append(labels, t.labels[i]), append(dims, t.n.Shape[i])
			}
		}
		x := c.einsumTranspose(t.n, append(perm, p, q))
		x = c.g.Reshape(x, append(slices.Clone(dims), d*d)...)
		diag := make([]int64, d)
		for i := range diag {
			diag[i] = int64(i * (d + 1))
		}
		t = einsumTerm{n: c.g.Gather(x, c.indexConst(diag), len(dims)), labels: append(labels, l)}
	}
}

// einsumSum sums t over its labels that neither keep nor other holds.
func (c *ctx) einsumSum(t einsumTerm, keep, other []rune) (einsumTerm, error) {
	var axes []int
	var labels []rune
	for i, l := range t.labels {
		if slices.Contains(keep, l) || slices.Contains(other, l) {
			labels = append(labels, l)
		} else {
			axes = append(axes, i)
		}
	}
	if len(axes) == 0 {
		return t, nil
	}
	n, err := c.apply(graph.OpReduceSum, graph.Attrs{Axes: axes}, t.n)
	return einsumTerm{n: n, labels: labels}, err
}

// einsumPair contracts a with b as one batched MatMul, keeping the labels
// of keep (the output's and later operands').
func (c *ctx) einsumPair(a, b einsumTerm, keep []rune, sizes map[rune]int) (einsumTerm, error) {
	var err error
	if a, err = c.einsumSum(a, keep, b.labels); err != nil {
		return a, err
	}
	if b, err = c.einsumSum(b, keep, a.labels); err != nil {
		return b, err
	}
	var batch, aOnly, sum, bOnly []rune
	for _, l := range a.labels {
		switch {
		case !slices.Contains(b.labels, l):
			aOnly = append(aOnly, l)
		case slices.Contains(keep, l):
			batch = append(batch, l)
		default:
			sum = append(sum, l)
		}
	}
	for _, l := range b.labels {
		if !slices.Contains(a.labels, l) {
			bOnly = append(bOnly, l)
		}
	}
	prod := func(ls []rune) int {
		n := 1
		for _, l := range ls {
			n *= sizes[l]
		}
		return n
	}
	bt, m, k, n := prod(batch), prod(aOnly), prod(sum), prod(bOnly)
	x := c.einsumOrder(a, concatRunes(batch, aOnly, sum))
	y := c.einsumOrder(b, concatRunes(batch, sum, bOnly))
	x, y = c.g.Reshape(x, bt, m, k), c.g.Reshape(y, bt, k, n)
	z, err := c.apply(graph.OpMatMul, graph.Attrs{}, x, y)
	if err != nil {
		return a, err
	}
	labels := concatRunes(batch, aOnly, bOnly)
	dims := make([]int, len(labels))
	for i, l := range labels {
		dims[i] = sizes[l]
	}
	return einsumTerm{n: c.g.Reshape(z, dims...), labels: labels}, nil
}

// einsumOrder transposes t's axes into the order of labels (a
// permutation of t's).
func (c *ctx) einsumOrder(t einsumTerm, labels []rune) *graph.Node {
	perm := make([]int, len(labels))
	for i, l := range labels {
		perm[i] = slices.Index(t.labels, l)
	}
	return c.einsumTranspose(t.n, perm)
}

// einsumTranspose skips the identity permutation (no copy).
func (c *ctx) einsumTranspose(x *graph.Node, perm []int) *graph.Node {
	for i, p := range perm {
		if i != p {
			return c.g.Transpose(x, perm...)
		}
	}
	return x
}

func concatRunes(parts ...[]rune) []rune {
	var out []rune
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
