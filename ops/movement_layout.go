package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The ops in this file each read input elements at linear offsets of the
// output index, so each is one or a few movers built at prepare time.

// moveKernel wraps a single mover from input 0 to the output.
func moveKernel(io moveIO, m *mover) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		m.move(out.Data, ins[0].Data)
		return nil
	}
}

// prepTranspose: output dim i walks input dim Perm[i].
func prepTranspose(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, 1)
	if err != nil {
		return nil, err
	}
	x, perm := n.Inputs[0].Shape, n.Attrs.Perm
	if len(perm) != len(x) {
		return nil, fmt.Errorf("transpose: perm %v for rank %d", perm, len(x))
	}
	xs := x.Strides()
	want := make(tensor.Shape, len(x))
	src := make([]int, len(x))
	seen := make([]bool, len(x))
	for i, p := range perm {
		if p < 0 || p >= len(x) || seen[p] {
			return nil, fmt.Errorf("transpose: perm %v is not a permutation", perm)
		}
		seen[p] = true
		want[i], src[i] = x[p], xs[p]
	}
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	return moveKernel(io, newMover(es, n.Shape, src, n.Shape.Strides(), 0, 0)), nil
}

// prepConcat: input i is copied into the output block that starts at the
// sum of the earlier inputs' lengths along the axis.
func prepConcat(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, -1)
	if err != nil {
		return nil, err
	}
	ax, first := n.Attrs.Axis, n.Inputs[0].Shape
	if ax < 0 || ax >= len(first) {
		return nil, fmt.Errorf("concat: axis %d out of range for rank %d", ax, len(first))
	}
	os := n.Shape.Strides()
	want := first.Clone()
	want[ax] = 0
	movers := make([]*mover, len(n.Inputs))
	for i, in := range n.Inputs {
		if in.DType != n.DType || len(in.Shape) != len(first) {
			return nil, fmt.Errorf("concat: input %d is %v%v, input 0 is %v%v", i, in.DType, in.Shape, n.DType, first)
		}
		for d := range first {
			if d != ax && in.Shape[d] != first[d] {
				return nil, fmt.Errorf("concat: input %d shape %v differs from %v outside axis %d", i, in.Shape, first, ax)
			}
		}
		if len(os) == len(first) { // else the shape check below fails
			movers[i] = newMover(es, in.Shape, in.Shape.Strides(), os, 0, want[ax]*os[ax])
		}
		want[ax] += in.Shape[ax]
	}
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		for i, m := range movers {
			m.move(out.Data, ins[i].Data)
		}
		return nil
	}, nil
}

// prepSplit: piece Index starts at the sum of the earlier sizes along the
// axis.
func prepSplit(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, 1)
	if err != nil {
		return nil, err
	}
	x, a := n.Inputs[0].Shape, n.Attrs
	if a.Axis < 0 || a.Axis >= len(x) || a.Index < 0 || a.Index >= len(a.Sizes) {
		return nil, fmt.Errorf("split: axis %d, piece %d of %v for %v", a.Axis, a.Index, a.Sizes, x)
	}
	start, sum := 0, 0
	for i, s := range a.Sizes {
		if s < 0 {
			return nil, fmt.Errorf("split: negative size in %v", a.Sizes)
		}
		if i == a.Index {
			start = sum
		}
		sum += s
	}
	if sum != x[a.Axis] {
		return nil, fmt.Errorf("split: sizes %v do not sum to %d", a.Sizes, x[a.Axis])
	}
	want := x.Clone()
	want[a.Axis] = a.Sizes[a.Index]
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	xs := x.Strides()
	return moveKernel(io, newMover(es, n.Shape, xs, n.Shape.Strides(), start*xs[a.Axis], 0)), nil
}

// prepSlice: a sliced axis starts at Starts[i] and walks Steps[i] input
// elements per output element (backwards for a negative step).
func prepSlice(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, 1)
	if err != nil {
		return nil, err
	}
	x, a := n.Inputs[0].Shape, n.Attrs
	k := len(a.Axes)
	if len(a.Starts) != k || len(a.Ends) != k || len(a.Steps) != k {
		return nil, fmt.Errorf("slice: axes %v, starts %v, ends %v, steps %v differ in length", a.Axes, a.Starts, a.Ends, a.Steps)
	}
	xs := x.Strides()
	src := append([]int(nil), xs...)
	want := x.Clone()
	seen := make([]bool, len(x))
	off := 0
	for i, ax := range a.Axes {
		if ax < 0 || ax >= len(x) || seen[ax] || a.Steps[i] == 0 {
			return nil, fmt.Errorf("slice: axis %d (step %d) invalid or repeated for %v", ax, a.Steps[i], x)
		}
		seen[ax] = true
		st, step := a.Starts[i], a.Steps[i]
		cnt := graph.SliceLen(st, a.Ends[i], step)
		if last := st + (cnt-1)*step; cnt > 0 && (st < 0 || st >= x[ax] || last < 0 || last >= x[ax]) {
			return nil, fmt.Errorf("slice: [%d:%d:%d] leaves axis %d of size %d", st, a.Ends[i], step, ax, x[ax])
		}
		want[ax], src[ax] = cnt, xs[ax]*step
		if cnt > 0 {
			off += st * xs[ax]
		}
	}
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	return moveKernel(io, newMover(es, n.Shape, src, n.Shape.Strides(), off, 0)), nil
}

// prepExpand: broadcast dims read with stride 0.
func prepExpand(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, 1)
	if err != nil {
		return nil, err
	}
	x := n.Inputs[0].Shape
	want, err := tensor.Broadcast(x, n.Attrs.Shape)
	if err != nil {
		return nil, fmt.Errorf("expand: %w", err)
	}
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	return moveKernel(io, newMover(es, n.Shape, tensor.BroadcastStrides(x, n.Shape), n.Shape.Strides(), 0, 0)), nil
}

// prepTile views output dim i (of size Reps[i]*d) as two dims [Reps[i], d]
// whose row-major order is the same; the repeat dim reads with stride 0.
func prepTile(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, 1)
	if err != nil {
		return nil, err
	}
	x, reps := n.Inputs[0].Shape, n.Attrs.Reps
	if len(reps) != len(x) {
		return nil, fmt.Errorf("tile: repeats %v for %v", reps, x)
	}
	want := make(tensor.Shape, len(x))
	dims := make([]int, 0, 2*len(x))
	src := make([]int, 0, 2*len(x))
	xs := x.Strides()
	for i, r := range reps {
		if r < 0 {
			return nil, fmt.Errorf("tile: negative repeat in %v", reps)
		}
		want[i] = r * x[i]
		dims = append(dims, r, x[i])
		src = append(src, 0, xs[i])
	}
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	return moveKernel(io, newMover(es, dims, src, tensor.Shape(dims).Strides(), 0, 0)), nil
}
