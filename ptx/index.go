package ptx

import "slices"

// collapse simplifies an index space: it drops size-1 dims and merges
// neighbours that every operand walks contiguously (stride[d] ==
// stride[d+1]·shape[d+1]), so kernels divide by fewer constants. strides
// holds one element-stride list per operand, each len(shape) long.
func collapse(shape []int, strides [][]int) ([]int, [][]int) {
	var dims []int
	st := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if k := len(dims) - 1; k >= 0 {
			merge := true
			for o := range strides {
				if st[o][k] != strides[o][d]*n {
					merge = false
					break
				}
			}
			if merge {
				dims[k] *= n
				for o := range strides {
					st[o][k] = strides[o][d]
				}
				continue
			}
		}
		dims = append(dims, n)
		for o := range strides {
			st[o] = append(st[o], strides[o][d])
		}
	}
	return dims, st
}

// contiguous is the row-major element strides of dims.
func contiguous(dims []int) []int {
	st := make([]int, len(dims))
	s := 1
	for d := len(dims) - 1; d >= 0; d-- {
		st[d] = s
		s *= dims[d]
	}
	return st
}

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
