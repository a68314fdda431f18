package onnx

import (
	"cmp"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// NonZero and Unique have outputs whose length depends on the input's
// values. kiln's shapes are fixed when a graph is built, so these ops are
// computed at import when their input is known there (an initializer, a
// folded constant, or a value bound with WithInputValue) and refused with
// one error otherwise.

func init() {
	register("NonZero", 9, one(mapNonZero))
	register("Unique", 11, mapUnique)
}

// dataDependent is the error of such an op over a run-time input.
func dataDependent(op, what string) error {
	return unsupportedf("%s (input 0) is computed at run time: %s's output length depends on its values, and kiln's shapes are static (a constant input is computed at import: give it as an initializer or bind it with WithInputValue)", what, op)
}

func i64Const(c *ctx, s tensor.Shape, v []int64) *graph.Node {
	t, _ := tensor.FromI64(s, v)
	return c.g.Constant(t)
}

// mapNonZero: the coordinates of the non-zero elements, [rank, count],
// in row-major order (NaN counts as non-zero, as in numpy). A scalar is
// read as one element, as numpy's nonzero does.
func mapNonZero(c *ctx) (*graph.Node, error) {
	x, ok := c.known(0)
	if !ok {
		return nil, dataDependent("NonZero", "X")
	}
	shape := x.Shape
	if shape.Rank() == 0 {
		shape = tensor.Shape{1}
	}
	var hits []int
	for i, v := range x.Float64s() {
		if v != 0 {
			hits = append(hits, i)
		}
	}
	r, strides := shape.Rank(), shape.Strides()
	out := make([]int64, r*len(hits))
	for j, h := range hits {
		for d := range r {
			out[d*len(hits)+j] = int64(h / strides[d] % shape[d])
		}
	}
	return i64Const(c, tensor.Shape{r, len(hits)}, out), nil
}

// mapUnique: the distinct slices of X along axis (its elements when there
// is no axis), sorted (lexicographically) or in order of first
// occurrence, with the index of each one's first occurrence, each input
// slice's position in the result and each one's count.
func mapUnique(c *ctx) ([]*graph.Node, error) {
	x, ok := c.known(0)
	if !ok {
		return nil, dataDependent("Unique", "X")
	}
	sorted, err := c.attrBool("sorted", true)
	if err != nil {
		return nil, err
	}
	shape := x.Shape
	ax := 0
	if _, has := c.attrs["axis"]; has {
		a, err := c.attrInt("axis", 0)
		if err != nil {
			return nil, err
		}
		if ax, err = axis(int(a), shape.Rank()); err != nil {
			return nil, err
		}
	} else {
		shape = tensor.Shape{x.NumElements()}
	}
	outer, d, inner := shape[:ax].NumElements(), shape[ax], shape[ax+1:].NumElements()
	// slice j's elements, in order, as comparable keys: int64 for I64
	// (float64 would merge large values), float64 for every other dtype.
	var cmpSlices func(i, j int) int
	if x.DType == tensor.I64 {
		cmpSlices = sliceCompare(x.I64(), outer, d, inner)
	} else {
		cmpSlices = sliceCompare(x.Float64s(), outer, d, inner)
	}
	// Sorting positions stably by their slices puts equal slices next to
	// each other, each run led by its first occurrence.
	byValue := make([]int, d)
	for j := range byValue {
		byValue[j] = j
	}
	slices.SortStableFunc(byValue, cmpSlices)
	var groups [][]int // runs of equal slices, in sorted order
	for i, j := range byValue {
		if i == 0 || cmpSlices(byValue[i-1], j) != 0 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], j)
	}
	if !sorted { // order of first occurrence instead
		slices.SortFunc(groups, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })
	}
	n := len(groups)
	es := x.DType.Size()
	yShape := shape.Clone()
	yShape[ax] = n
	y := tensor.New(x.DType, yShape...)
	idx, cnt, inv := make([]int64, n), make([]int64, n), make([]int64, d)
	for pos, g := range groups {
		idx[pos], cnt[pos] = int64(g[0]), int64(len(g))
		for _, j := range g {
			inv[j] = int64(pos)
		}
		for o := range outer {
			src := (o*d + g[0]) * inner * es
			dst := (o*n + pos) * inner * es
			copy(y.Data[dst:dst+inner*es], x.Data[src:src+inner*es])
		}
	}
	return []*graph.Node{c.g.Constant(y), i64Const(c, tensor.Shape{n}, idx),
		i64Const(c, tensor.Shape{d}, inv), i64Const(c, tensor.Shape{n}, cnt)}, nil
}

// sliceCompare orders slices i and j of v viewed as [outer, d, inner]
// lexicographically in row-major order of their elements.
func sliceCompare[T cmp.Ordered](v []T, outer, d, inner int) func(i, j int) int {
	return func(i, j int) int {
		for o := range outer {
			a, b := v[(o*d+i)*inner:][:inner], v[(o*d+j)*inner:][:inner]
			if c := slices.Compare(a, b); c != 0 {
				return c
			}
		}
		return 0
	}
}
