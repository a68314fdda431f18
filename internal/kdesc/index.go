package kdesc

// Collapse merges adjacent dims that every operand walks contiguously
// (st[d-1] == st[d]·shape[d] for all strides) and drops dims of size 1,
// so kernels divide by fewer constants. strides holds one element-stride
// list per operand, each len(shape) long. The element at a linear index
// of the result has the same offsets as in the original (Offset agrees).
func Collapse(shape []int, strides ...[]int) ([]int, [][]int) {
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

// Offset is the element offset of the linear (row-major) index lin of
// dims under strides: what emitted offset code computes per thread.
func Offset(dims, strides []int, lin int) int {
	off := 0
	for d := len(dims) - 1; d >= 0; d-- {
		off += (lin % dims[d]) * strides[d]
		lin /= dims[d]
	}
	return off
}

// Contiguous is the row-major element strides of dims.
func Contiguous(dims []int) []int {
	st := make([]int, len(dims))
	s := 1
	for d := len(dims) - 1; d >= 0; d-- {
		st[d] = s
		s *= dims[d]
	}
	return st
}

// batchStrides are an operand's element strides over the output's batch
// dims (right-aligned numpy broadcasting; 0 where it broadcasts).
func batchStrides(own, batch []int) []int {
	full := Contiguous(own)
	st := make([]int, len(batch))
	off := len(batch) - len(own)
	for d := range own {
		if bd := off + d; bd >= 0 && own[d] != 1 {
			st[bd] = full[d]
		}
	}
	return st
}
