package ptx

import (
	"slices"

	"github.com/kilnml/kiln/internal/kdesc"
)

// collapse is kdesc.Collapse over a list of stride lists.
func collapse(shape []int, strides [][]int) ([]int, [][]int) {
	return kdesc.Collapse(shape, strides...)
}

// contiguous is the row-major element strides of dims.
func contiguous(dims []int) []int { return kdesc.Contiguous(dims) }

func product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// offsets emits, for the linear index i over dims, each operand's element
// offset Σ coord[d]·strides[o][d]: i itself for an operand laid out like
// the index space, a constant for a broadcast scalar, else from the
// coordinates (computed once, only when some operand needs them).
func (x ix) offsets(i string, dims []int, strides [][]int, base []int) []string {
	out := make([]string, len(strides))
	cont := contiguous(dims)
	var coords []string
	for o, st := range strides {
		b := 0
		if base != nil {
			b = base[o]
		}
		switch {
		case slices.Equal(st, cont) && b == 0:
			out[o] = i
			continue
		case !slices.ContainsFunc(st, func(s int) bool { return s != 0 }):
			out[o] = x.imm(b)
			continue
		}
		if coords == nil {
			coords = x.coords(i, dims)
		}
		acc := x.imm(b)
		for d, s := range st {
			if s != 0 {
				acc = x.mad(coords[d], s, acc)
			}
		}
		out[o] = acc
	}
	return out
}

// coords splits the linear index i into its coordinates over dims.
func (x ix) coords(i string, dims []int) []string {
	c := make([]string, len(dims))
	rest := i
	for d := len(dims) - 1; d > 0; d-- {
		rest, c[d] = x.divmod(rest, dims[d])
	}
	if len(dims) > 0 {
		c[0] = rest
	}
	return c
}
