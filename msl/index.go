package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// Collapse merges adjacent dims that every operand walks contiguously
// and drops dims of size 1 (kdesc.Collapse).
func Collapse(shape []int, strides ...[]int) ([]int, [][]int) {
	return kdesc.Collapse(shape, strides...)
}

// Offset is the element offset of the linear index lin of dims under
// strides (kdesc.Offset): what the code from offsetCode computes.
func Offset(dims, strides []int, lin int) int { return kdesc.Offset(dims, strides, lin) }

// offsetCode writes MSL statements declaring int variables outs[i] = the
// offset of linear index lin under strides[i] over dims (as Offset), plus
// base[i]. Dims walked by no operand are skipped.
func offsetCode(ind, lin string, dims []int, strides [][]int, outs []string, base []int) string {
	var b strings.Builder
	for i, o := range outs {
		bs := 0
		if base != nil {
			bs = base[i]
		}
		fmt.Fprintf(&b, "%sint %s = %d;\n", ind, o, bs)
	}
	if len(dims) == 0 {
		return b.String()
	}
	r := "r_" + outs[0]
	fmt.Fprintf(&b, "%s{\n%s    int %s = int(%s);\n", ind, ind, r, lin)
	for d := len(dims) - 1; d >= 0; d-- {
		c := fmt.Sprintf("c%d", d)
		if d == 0 {
			fmt.Fprintf(&b, "%s    int %s = %s;\n", ind, c, r)
		} else {
			fmt.Fprintf(&b, "%s    int %s = %s %% %d; %s /= %d;\n", ind, c, r, dims[d], r, dims[d])
		}
		for i, o := range outs {
			if s := strides[i][d]; s != 0 {
				fmt.Fprintf(&b, "%s    %s += %s * %d;\n", ind, o, c, s)
			}
		}
	}
	fmt.Fprintf(&b, "%s}\n", ind)
	return b.String()
}

// PadSource maps output coordinate c of a padded dim (after subtracting
// the begin pad) to the input coordinate of an n-long dim, or reports
// that it reads the constant (ok false). Reflect mirrors without
// repeating the edge; Edge clamps.
func PadSource(mode graph.PadMode, c, n int) (int, bool) {
	if c >= 0 && c < n {
		return c, true
	}
	switch mode {
	case graph.PadReflect:
		if n == 1 {
			return 0, true
		}
		period := 2 * (n - 1)
		c %= period
		if c < 0 {
			c += period
		}
		if c >= n {
			c = period - c
		}
		return c, true
	case graph.PadEdge:
		return min(max(c, 0), n-1), true
	}
	return 0, false
}
