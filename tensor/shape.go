package tensor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shape is a list of dimensions, outermost first. A nil or empty Shape is a
// scalar (rank 0, one element). Dims of size 0 are allowed.
type Shape []int

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// NumElements is the product of the dims (1 for a scalar).
func (s Shape) NumElements() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// MaxElements bounds the element count of any shape kiln accepts, so that
// byte sizes never overflow an int.
const MaxElements = 1 << 46

// Validate checks that no dim is negative and that the product of the
// non-zero dims is at most MaxElements. Zero dims are skipped in that
// product so that the answer does not depend on where a zero sits, and so
// that Strides (products of trailing dims) never overflow.
func (s Shape) Validate() error {
	n := 1
	for i, d := range s {
		if d < 0 {
			return fmt.Errorf("shape %v: dim %d is negative (%d)", s, i, d)
		}
		if d == 0 {
			continue
		}
		if n > MaxElements/d {
			return fmt.Errorf("shape %v: more than %d elements", s, MaxElements)
		}
		n *= d
	}
	return nil
}

// Strides are the row-major element strides of s.
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// Equal reports whether two shapes have the same dims.
func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// TrimLeadingOnes drops leading size-1 dims while the rank exceeds rank:
// the same elements in the same order, as broadcasting reads them.
func (s Shape) TrimLeadingOnes(rank int) Shape {
	for len(s) > rank && s[0] == 1 {
		s = s[1:]
	}
	return s
}

// Clone returns a copy that does not share memory with s.
func (s Shape) Clone() Shape {
	if s == nil {
		return nil
	}
	return append(Shape{}, s...)
}

// String formats the shape as [2 3 4]; a scalar is [].
func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// NormAxis maps a possibly negative axis into [0, rank) or reports an error.
func NormAxis(axis, rank int) (int, error) {
	if axis < -rank || axis >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += rank
	}
	return axis, nil
}

// Broadcast returns the numpy broadcast of the given shapes: shapes are
// right-aligned and each dim pair must be equal or contain a 1.
func Broadcast(shapes ...Shape) (Shape, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(Shape, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			switch o := out[off+i]; {
			case o == d || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast: dim %d is %d in one and %d in another",
					shapes, i-len(s), o, d)
			}
		}
	}
	return out, nil
}

// BroadcastStrides returns element strides for reading a tensor of shape s
// as if it had shape out (which must be a broadcast of s): broadcast dims
// get stride 0. The result has len(out) entries.
func BroadcastStrides(s, out Shape) []int {
	st := make([]int, len(out))
	own := s.Strides()
	off := len(out) - len(s)
	for i := range s {
		if s[i] != 1 || out[off+i] == 1 {
			st[off+i] = own[i]
		}
	}
	return st
}

// Reduced is s without the given axes (a reduction's output shape), or
// with them as 1 when keep is set.
func (s Shape) Reduced(axes []int, keep bool) Shape {
	out := Shape{}
	for i, d := range s {
		switch {
		case !slices.Contains(axes, i):
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}
