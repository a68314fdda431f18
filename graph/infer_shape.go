package graph

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/tensor"
)

// Shape and data-movement ops work on every dtype.

func inferReshape(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	if err := a.Shape.Validate(); err != nil {
		return 0, nil, err
	}
	if a.Shape.NumElements() != x.Shape.NumElements() {
		return 0, nil, fmt.Errorf("cannot reshape %v (%d elements) to %v", x.Shape, x.Shape.NumElements(), a.Shape)
	}
	return x.DType, a.Shape.Clone(), nil
}

func inferTranspose(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	r := x.Shape.Rank()
	if a.Perm == nil { // numpy default: reverse the axes
		for i := r - 1; i >= 0; i-- {
			a.Perm = append(a.Perm, i)
		}
	}
	if len(a.Perm) != r {
		return 0, nil, fmt.Errorf("perm %v has %d entries for rank %d", a.Perm, len(a.Perm), r)
	}
	out := make(tensor.Shape, r)
	seen := make([]bool, r)
	for i, p := range a.Perm {
		if p < 0 || p >= r || seen[p] {
			return 0, nil, fmt.Errorf("perm %v is not a permutation of 0..%d", a.Perm, r-1)
		}
		seen[p] = true
		out[i] = x.Shape[p]
	}
	return x.DType, out, nil
}

func inferConcat(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	first := ins[0]
	ax, err := tensor.NormAxis(a.Axis, first.Shape.Rank())
	if err != nil {
		return 0, nil, err
	}
	a.Axis = ax
	out := first.Shape.Clone()
	out[ax] = 0
	for i, in := range ins {
		if in.DType != first.DType {
			return 0, nil, fmt.Errorf("input %d: dtype %v differs from %v", i, in.DType, first.DType)
		}
		if in.Shape.Rank() != first.Shape.Rank() {
			return 0, nil, fmt.Errorf("input %d: rank %d differs from %d", i, in.Shape.Rank(), first.Shape.Rank())
		}
		for d := range in.Shape {
			if d != ax && in.Shape[d] != first.Shape[d] {
				return 0, nil, fmt.Errorf("input %d: shape %v differs from %v outside axis %d", i, in.Shape, first.Shape, ax)
			}
		}
		out[ax] += in.Shape[ax]
	}
	return first.DType, out, nil
}

func inferSplit(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	ax, err := tensor.NormAxis(a.Axis, x.Shape.Rank())
	if err != nil {
		return 0, nil, err
	}
	a.Axis = ax
	sum := 0
	for _, s := range a.Sizes {
		if s < 0 {
			return 0, nil, fmt.Errorf("negative split size in %v", a.Sizes)
		}
		sum += s
	}
	if sum != x.Shape[ax] {
		return 0, nil, fmt.Errorf("split sizes %v sum to %d, axis %d has %d", a.Sizes, sum, ax, x.Shape[ax])
	}
	if a.Index < 0 || a.Index >= len(a.Sizes) {
		return 0, nil, fmt.Errorf("piece %d out of range for %d pieces", a.Index, len(a.Sizes))
	}
	out := x.Shape.Clone()
	out[ax] = a.Sizes[a.Index]
	return x.DType, out, nil
}

// SliceLen is the number of elements a normalised slice selects.
func SliceLen(start, end, step int) int {
	// 1 + (span-1)/|step| cannot overflow for any step, even MaxInt or
	// MinInt (where -step wraps to MinInt and the quotient is still 0).
	if step > 0 && end > start {
		return 1 + (end-start-1)/step
	}
	if step < 0 && end < start {
		return 1 + (start-end-1)/-step
	}
	return 0
}

// inferSlice validates bounds normalised by the builder: a positive step
// has 0 <= start <= end <= dim; a negative step has -1 <= end <= start < dim
// (end -1 means "through index 0") unless the slice is empty.
func inferSlice(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	n := len(a.Axes)
	if len(a.Starts) != n || len(a.Ends) != n || len(a.Steps) != n {
		return 0, nil, fmt.Errorf("starts %v, ends %v, steps %v and axes %v differ in length", a.Starts, a.Ends, a.Steps, a.Axes)
	}
	out := x.Shape.Clone()
	seen := map[int]bool{}
	for i, ax := range a.Axes {
		if ax < 0 || ax >= x.Shape.Rank() || seen[ax] {
			return 0, nil, fmt.Errorf("axis %d invalid or repeated for rank %d", ax, x.Shape.Rank())
		}
		seen[ax] = true
		st, en, sp, d := a.Starts[i], a.Ends[i], a.Steps[i], x.Shape[ax]
		switch {
		case sp == 0:
			return 0, nil, fmt.Errorf("step 0 on axis %d", ax)
		case sp > 0 && (st < 0 || en > d || st > d || en < 0):
			return 0, nil, fmt.Errorf("bounds [%d:%d] not normalised for dim %d", st, en, d)
		case sp < 0 && (st >= d || en < -1 || st < -1 || en >= d):
			return 0, nil, fmt.Errorf("bounds [%d:%d:%d] not normalised for dim %d", st, en, sp, d)
		}
		out[ax] = SliceLen(st, en, sp)
	}
	return x.DType, out, nil
}

func inferGather(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, idx := ins[0], ins[1]
	if idx.DType != tensor.I32 && idx.DType != tensor.I64 {
		return 0, nil, fmt.Errorf("indices must be i32 or i64, got %v", idx.DType)
	}
	ax, err := tensor.NormAxis(a.Axis, x.Shape.Rank())
	if err != nil {
		return 0, nil, err
	}
	a.Axis = ax
	out := append(append(x.Shape[:ax].Clone(), idx.Shape...), x.Shape[ax+1:]...)
	return x.DType, out, nil
}

func inferExpand(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	s, err := tensor.Broadcast(x.Shape, a.Shape)
	if err != nil {
		return 0, nil, err
	}
	a.Shape = s // ONNX Expand broadcasts both ways
	return x.DType, s.Clone(), nil
}

func inferSqueeze(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	axes, err := normAxes(a.Axes, x.Shape.Rank())
	if err != nil {
		return 0, nil, err
	}
	if len(axes) == 0 { // no axes: every dim of size 1
		for i, d := range x.Shape {
			if d == 1 {
				axes = append(axes, i)
			}
		}
	}
	for _, ax := range axes {
		if x.Shape[ax] != 1 {
			return 0, nil, fmt.Errorf("axis %d has size %d, not 1", ax, x.Shape[ax])
		}
	}
	a.Axes = axes
	return x.DType, x.Shape.Reduced(axes, false), nil
}

func inferUnsqueeze(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	r := x.Shape.Rank() + len(a.Axes)
	axes, err := normAxes(a.Axes, r)
	if err != nil {
		return 0, nil, err
	}
	if len(axes) == 0 {
		return 0, nil, fmt.Errorf("no axes given")
	}
	a.Axes = axes
	out := make(tensor.Shape, 0, r)
	src := 0
	for i := 0; i < r; i++ {
		if slices.Contains(axes, i) {
			out = append(out, 1)
		} else {
			out = append(out, x.Shape[src])
			src++
		}
	}
	return x.DType, out, nil
}

func inferFlatten(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	r := x.Shape.Rank()
	ax := a.Axis
	if ax < 0 {
		ax += r
	}
	if ax < 0 || ax > r { // Flatten accepts axis == rank
		return 0, nil, fmt.Errorf("axis %d out of range for rank %d", a.Axis, r)
	}
	a.Axis = ax
	return x.DType, tensor.Shape{x.Shape[:ax].NumElements(), x.Shape[ax:].NumElements()}, nil
}

func inferPad(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	r := x.Shape.Rank()
	if len(a.Pads) != 2*r {
		return 0, nil, fmt.Errorf("pads %v need %d values [begins..., ends...] for rank %d", a.Pads, 2*r, r)
	}
	out := x.Shape.Clone()
	for i := range x.Shape {
		lo, hi := a.Pads[i], a.Pads[r+i]
		if lo < 0 || hi < 0 {
			return 0, nil, fmt.Errorf("negative pads %v are not supported", a.Pads)
		}
		if lo > tensor.MaxElements || hi > tensor.MaxElements { // the sum would overflow
			return 0, nil, fmt.Errorf("pads %v are too large", a.Pads)
		}
		if a.Mode == PadReflect && (lo >= x.Shape[i] || hi >= x.Shape[i]) && (lo > 0 || hi > 0) {
			return 0, nil, fmt.Errorf("reflect pad (%d, %d) on axis %d must be smaller than its size %d", lo, hi, i, x.Shape[i])
		}
		if a.Mode == PadEdge && x.Shape[i] == 0 && (lo > 0 || hi > 0) {
			return 0, nil, fmt.Errorf("edge pad of empty axis %d", i)
		}
		out[i] += lo + hi
	}
	if a.Mode > PadEdge {
		return 0, nil, fmt.Errorf("unknown pad mode %d", a.Mode)
	}
	return x.DType, out, nil
}

func inferTile(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	if len(a.Reps) != x.Shape.Rank() {
		return 0, nil, fmt.Errorf("repeats %v need one value per dim of %v", a.Reps, x.Shape)
	}
	out := x.Shape.Clone()
	for i, r := range a.Reps {
		if r < 0 {
			return 0, nil, fmt.Errorf("negative repeat %d", r)
		}
		if r > 0 && out[i] > tensor.MaxElements/r { // the product would overflow
			return 0, nil, fmt.Errorf("repeat %d of dim %d is too large", r, i)
		}
		out[i] *= r
	}
	return x.DType, out, out.Validate()
}
