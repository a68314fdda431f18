package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// Reshape gives x a new shape with the same element count; one dim may be
// -1 and is then inferred (numpy semantics: 0 is a real zero-sized dim).
func (g *Graph) Reshape(x *Node, dims ...int) *Node {
	if g.err != nil || !x.Valid() {
		return g.add(OpReshape, Attrs{}, x)
	}
	s, err := resolveReshape(x.Shape, dims)
	if err != nil {
		return g.fail("Reshape %s: %v", x.Name, err)
	}
	return g.add(OpReshape, Attrs{Shape: s}, x)
}

func resolveReshape(in tensor.Shape, dims []int) (tensor.Shape, error) {
	s := tensor.Shape(dims).Clone()
	infer, known := -1, 1
	for i, d := range s {
		switch {
		case d == -1 && infer >= 0:
			return nil, fmt.Errorf("more than one -1 in %v", dims)
		case d == -1:
			infer = i
		case d < 0:
			return nil, fmt.Errorf("negative dim %d in %v", d, dims)
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || in.NumElements()%known != 0 {
			return nil, fmt.Errorf("cannot infer -1 in %v from %v", dims, in)
		}
		s[infer] = in.NumElements() / known
	}
	return s, nil
}

// Transpose permutes the axes; no perm reverses them (numpy).
func (g *Graph) Transpose(x *Node, perm ...int) *Node {
	return g.add(OpTranspose, Attrs{Perm: perm}, x)
}

// Concat joins tensors of the same dtype along axis.
func (g *Graph) Concat(axis int, xs ...*Node) *Node {
	return g.add(OpConcat, Attrs{Axis: axis}, xs...)
}

// Split cuts x along axis into pieces of the given sizes (which must sum
// to the axis length), one node per piece.
func (g *Graph) Split(x *Node, axis int, sizes ...int) []*Node {
	if len(sizes) == 0 { // no pieces would silently produce nothing
		if g.err != nil {
			return []*Node{{Op: OpInvalid}}
		}
		return []*Node{g.fail("Split %s: no sizes given", x)}
	}
	out := make([]*Node, len(sizes))
	for i := range sizes {
		out[i] = g.add(OpSplit, Attrs{Axis: axis, Sizes: sizes, Index: i}, x)
	}
	return out
}

// SplitEqual cuts x along axis into n pieces of equal size.
func (g *Graph) SplitEqual(x *Node, axis, n int) []*Node {
	if g.err != nil || !x.Valid() {
		return []*Node{g.add(OpSplit, Attrs{}, x)}
	}
	ax, err := tensor.NormAxis(axis, x.Shape.Rank())
	if err != nil || n <= 0 || x.Shape[ax]%n != 0 {
		return []*Node{g.fail("Split %s: cannot cut axis %d of %v into %d equal pieces", x.Name, axis, x.Shape, n)}
	}
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = x.Shape[ax] / n
	}
	return g.Split(x, ax, sizes...)
}

// SliceSpec selects x[starts:ends:steps] on the given axes with ONNX
// semantics: negative starts and ends count from the end, out-of-range
// bounds are clamped, steps may be negative. Nil Axes means 0, 1, ...;
// nil Steps means all 1.
type SliceSpec struct {
	Axes, Starts, Ends, Steps []int
}

// Slice selects a strided sub-range of x.
func (g *Graph) Slice(x *Node, sp SliceSpec) *Node {
	if g.err != nil || !x.Valid() {
		return g.add(OpSlice, Attrs{}, x)
	}
	a, err := resolveSlice(x.Shape, sp)
	if err != nil {
		return g.fail("Slice %s: %v", x.Name, err)
	}
	return g.add(OpSlice, a, x)
}

func resolveSlice(s tensor.Shape, sp SliceSpec) (Attrs, error) {
	n := len(sp.Starts)
	if len(sp.Ends) != n || (sp.Axes != nil && len(sp.Axes) != n) || (sp.Steps != nil && len(sp.Steps) != n) {
		return Attrs{}, fmt.Errorf("starts %v, ends %v, axes %v and steps %v differ in length", sp.Starts, sp.Ends, sp.Axes, sp.Steps)
	}
	a := Attrs{Axes: make([]int, n), Starts: make([]int, n), Ends: make([]int, n), Steps: make([]int, n)}
	for i := range n {
		ax, step := i, 1
		if sp.Axes != nil {
			ax = sp.Axes[i]
		}
		if sp.Steps != nil {
			step = sp.Steps[i]
		}
		ax, err := tensor.NormAxis(ax, s.Rank())
		if err != nil {
			return Attrs{}, err
		}
		if step == 0 {
			return Attrs{}, fmt.Errorf("step 0 on axis %d", ax)
		}
		d := s[ax]
		st, en := sp.Starts[i], sp.Ends[i]
		if st < 0 {
			st += d
		}
		if en < 0 {
			en += d
		}
		if step > 0 {
			st, en = clamp(st, 0, d), clamp(en, 0, d)
		} else {
			st, en = clamp(st, -1, d-1), clamp(en, -1, d-1)
		}
		a.Axes[i], a.Starts[i], a.Ends[i], a.Steps[i] = ax, st, en, step
	}
	return a, nil
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// Gather picks entries of x along axis by integer indices (I32 or I64;
// negative indices count from the end; out of range is a run-time error).
func (g *Graph) Gather(x, indices *Node, axis int) *Node {
	return g.add(OpGather, Attrs{Axis: axis}, x, indices)
}

// Expand broadcasts x against dims (both ways, as ONNX Expand).
func (g *Graph) Expand(x *Node, dims ...int) *Node {
	return g.add(OpExpand, Attrs{Shape: tensor.Shape(dims)}, x)
}

// Squeeze removes the given size-1 axes (every size-1 axis when none).
func (g *Graph) Squeeze(x *Node, axes ...int) *Node {
	return g.add(OpSqueeze, Attrs{Axes: axes}, x)
}

// Unsqueeze inserts size-1 axes at the given positions of the result.
func (g *Graph) Unsqueeze(x *Node, axes ...int) *Node {
	return g.add(OpUnsqueeze, Attrs{Axes: axes}, x)
}

// Flatten reshapes x to 2-D: dims before axis, and dims from axis on.
func (g *Graph) Flatten(x *Node, axis int) *Node { return g.add(OpFlatten, Attrs{Axis: axis}, x) }

// Pad adds pads [begin per axis..., end per axis...] (ONNX order) filled
// by mode: a constant value, reflection, or the edge element.
func (g *Graph) Pad(x *Node, pads []int, mode PadMode, value float32) *Node {
	return g.add(OpPad, Attrs{Pads: pads, Mode: mode, Value: value}, x)
}

// Tile repeats x reps[i] times along each axis i.
func (g *Graph) Tile(x *Node, reps ...int) *Node { return g.add(OpTile, Attrs{Reps: reps}, x) }
