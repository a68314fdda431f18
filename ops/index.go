package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Indexing ops (GatherElements, GatherND, ScatterElements, ScatterND).
// Gathers move elements as bytes, so they take every dtype exactly; the
// scatters do too when they only replace, and combine in the dtype's own
// arithmetic otherwise (see combinerOf). Every index is checked before the
// first byte is written: an index out of range is a run-time error naming
// it, the output is left as it was, and nothing outside a tensor is read
// or written. The reference kernels move one element (GatherND one block)
// at a time through an offset table; index_fast.go has the kernels the
// executor runs for GatherElements and ScatterND.

func init() {
	for _, r := range []struct {
		op      graph.Op
		prep    Prepare
		inPlace bool
	}{
		{graph.OpGatherElements, prepGatherElements, false},
		{graph.OpGatherND, prepGatherND, false},
		// A scatter's output is its data with some positions changed:
		// written over data, it skips the copy, which is what makes a
		// KV-cache update cost its update's size rather than the cache's.
		{graph.OpScatterElements, prepScatterElements, true},
		{graph.OpScatterND, prepScatterND, true},
	} {
		Register(Entry{Op: r.op, DTypes: tensor.DTypes(), Reference: r.prep, InPlace: r.inPlace})
	}
}

// indices views I32 or I64 index data (a struct rather than a closure,
// so reading indices allocates nothing).
type indices struct {
	i32 []int32
	i64 []int64
}

func indicesOf(dt tensor.DType, data []byte) indices {
	if dt == tensor.I64 {
		return indices{i64: tensor.Elems[int64](data)}
	}
	return indices{i32: tensor.Elems[int32](data)}
}

// at is index j.
func (v indices) at(j int) int {
	if v.i64 != nil {
		return int(v.i64[j])
	}
	return int(v.i32[j])
}

// normIndex maps an index into [0, d), counting negatives from the end;
// ok is false outside [-d, d).
func normIndex(k, d int) (int, bool) {
	if k < -d || k >= d {
		return 0, false
	}
	if k < 0 {
		k += d
	}
	return k, true
}

// indexError is the run-time error of an index out of range.
func indexError(op graph.Op, k, pos, d int, where string) error {
	return fmt.Errorf("%v: index %d (position %d of indices) is out of range [%d, %d) for %s of size %d",
		op, k, pos, -d, d, where, d)
}

// nextCoord advances c through shape in row-major order.
func nextCoord(c []int, shape tensor.Shape) {
	for d := len(c) - 1; d >= 0; d-- {
		if c[d]++; c[d] < shape[d] {
			return
		}
		c[d] = 0
	}
}

// indexPrep checks what every indexing node shares: inputs, element size,
// an I32 or I64 index input 1, and for a scatter (three inputs) updates of
// the data's dtype and a combiner for its reduction.
func indexPrep(n *graph.Node, inputs int) (int, moveIO, combiner, error) {
	es, io, err := movePrep(n, inputs)
	if err != nil {
		return 0, io, nil, err
	}
	if dt := n.Inputs[1].DType; dt != tensor.I32 && dt != tensor.I64 {
		return 0, io, nil, fmt.Errorf("%v: indices must be i32 or i64, got %v", n.Op, dt)
	}
	if inputs < 3 {
		return es, io, nil, nil
	}
	if n.Inputs[2].DType != n.DType {
		return 0, io, nil, fmt.Errorf("%v: updates dtype %v differs from data %v", n.Op, n.Inputs[2].DType, n.DType)
	}
	if err := moveShapeCheck(n, n.Inputs[0].Shape); err != nil {
		return 0, io, nil, err
	}
	comb, err := combinerOf(n.DType, n.Attrs.Reduction)
	if err != nil {
		return 0, io, nil, fmt.Errorf("%v: %w", n.Op, err)
	}
	return es, io, comb, nil
}

// elementsPrep checks GatherElements and ScatterElements: indices of the
// data's rank, no larger off the axis.
func elementsPrep(n *graph.Node) error {
	x, idx, ax := n.Inputs[0].Shape, n.Inputs[1].Shape, n.Attrs.Axis
	if ax < 0 || ax >= len(x) || len(idx) != len(x) {
		return fmt.Errorf("%v: axis %d, indices %v for data %v", n.Op, ax, idx, x)
	}
	for d := range x {
		if d != ax && idx[d] > x[d] {
			return fmt.Errorf("%v: indices %v exceed data %v on axis %d", n.Op, idx, x, d)
		}
	}
	if len(n.Inputs) == 3 && !n.Inputs[2].Shape.Equal(idx) {
		return fmt.Errorf("%v: updates %v and indices %v differ", n.Op, n.Inputs[2].Shape, idx)
	}
	return nil
}

// elementOffsets fills offs[p] with the data element that position p of
// the indices names (its coordinates, the axis one replaced by the index),
// or reports the first index out of range.
func elementOffsets(n *graph.Node, ix indices, offs, coord []int) error {
	x, idx, ax := n.Inputs[0].Shape, n.Inputs[1].Shape, n.Attrs.Axis
	xs, d := x.Strides(), x[ax]
	clear(coord)
	for p := range offs {
		off := 0
		for dd, c := range coord {
			if dd == ax {
				k, ok := normIndex(ix.at(p), d)
				if !ok {
					return indexError(n.Op, ix.at(p), p, d, fmt.Sprintf("axis %d", ax))
				}
				c = k
			}
			off += c * xs[dd]
		}
		offs[p] = off
		nextCoord(coord, idx)
	}
	return nil
}

// prepGatherElements: out[p] = x[elementOffsets(p)].
func prepGatherElements(n *graph.Node) (Kernel, error) {
	es, io, _, err := indexPrep(n, 2)
	if err != nil {
		return nil, err
	}
	if err := elementsPrep(n); err != nil {
		return nil, err
	}
	if err := moveShapeCheck(n, n.Inputs[1].Shape); err != nil {
		return nil, err
	}
	offs, coord := make([]int, n.Shape.NumElements()), make([]int, n.Shape.Rank())
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		if err := elementOffsets(n, indicesOf(n.Inputs[1].DType, ins[1].Data), offs, coord); err != nil {
			return err
		}
		for p, o := range offs {
			copy(out.Data[p*es:(p+1)*es], ins[0].Data[o*es:(o+1)*es])
		}
		return nil
	}, nil
}

// prepScatterElements: out = data, then updates[p] combined into
// out[elementOffsets(p)] in row-major order of p.
func prepScatterElements(n *graph.Node) (Kernel, error) {
	_, io, comb, err := indexPrep(n, 3)
	if err != nil {
		return nil, err
	}
	if err := elementsPrep(n); err != nil {
		return nil, err
	}
	offs, coord := make([]int, n.Inputs[1].Shape.NumElements()), make([]int, n.Shape.Rank())
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		if err := elementOffsets(n, indicesOf(n.Inputs[1].DType, ins[1].Data), offs, coord); err != nil {
			return err
		}
		copy(out.Data, ins[0].Data) // a no-op when the plan wrote out over data
		for p, o := range offs {
			comb(out.Data, o, ins[2].Data, p, 1)
		}
		return nil
	}, nil
}

// ndLayout is the geometry GatherND and ScatterND share: the data viewed
// as [batch, tuple dims..., block] and the indices as [batch, tuples, k].
type ndLayout struct {
	batch   int   // product of the batch dims
	tuples  int   // index tuples per batch entry
	k       int   // coordinates per tuple
	dims    []int // the data dims a tuple indexes
	strides []int // their strides, in blocks
	block   int   // elements each tuple selects
	stride  int   // elements of one batch entry of the data
}

// ndLayoutOf checks a GatherND or ScatterND node (ScatterND has no batch
// dims) and derives its layout.
func ndLayoutOf(n *graph.Node, b int) (ndLayout, error) {
	x, idx := n.Inputs[0].Shape, n.Inputs[1].Shape
	q := len(idx)
	if q == 0 || b < 0 || b >= min(len(x), q) || !idx[:b].Equal(x[:b]) {
		return ndLayout{}, fmt.Errorf("%v: indices %v for data %v with %d batch dims", n.Op, idx, x, b)
	}
	k := idx[q-1]
	if k < 1 || k > len(x)-b {
		return ndLayout{}, fmt.Errorf("%v: index tuples of length %d for data %v", n.Op, k, x)
	}
	l := ndLayout{batch: x[:b].NumElements(), k: k, dims: x[b : b+k], block: x[b+k:].NumElements(),
		stride: x[b:].NumElements()}
	l.tuples = idx[b : q-1].NumElements()
	l.strides = tensor.Shape(l.dims).Strides()
	return l, nil
}

// offsets fills offs[t] with the first element of the block that tuple t
// (over all batch entries) selects, or reports the first index out of
// range.
func (l ndLayout) offsets(op graph.Op, ix indices, offs []int) error {
	for t := range offs {
		off := (t / max(l.tuples, 1)) * l.stride
		for j, d := range l.dims {
			p := t*l.k + j
			c, ok := normIndex(ix.at(p), d)
			if !ok {
				return indexError(op, ix.at(p), p, d, fmt.Sprintf("coordinate %d of a tuple", j))
			}
			off += c * l.strides[j] * l.block
		}
		offs[t] = off
	}
	return nil
}

// prepGatherND: block t of the output is the data block tuple t selects.
func prepGatherND(n *graph.Node) (Kernel, error) {
	es, io, _, err := indexPrep(n, 2)
	if err != nil {
		return nil, err
	}
	l, err := ndLayoutOf(n, n.Attrs.BatchDims)
	if err != nil {
		return nil, err
	}
	idx := n.Inputs[1].Shape
	if err := moveShapeCheck(n, append(idx[:len(idx)-1].Clone(), n.Inputs[0].Shape[n.Attrs.BatchDims+l.k:]...)); err != nil {
		return nil, err
	}
	offs, bb := make([]int, l.batch*l.tuples), l.block*es
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		if err := l.offsets(n.Op, indicesOf(n.Inputs[1].DType, ins[1].Data), offs); err != nil {
			return err
		}
		for t, o := range offs {
			copy(out.Data[t*bb:(t+1)*bb], ins[0].Data[o*es:o*es+bb])
		}
		return nil
	}, nil
}

// prepScatterND: out = data, then update block t combined into the block
// tuple t selects, in tuple order.
func prepScatterND(n *graph.Node) (Kernel, error) {
	_, io, comb, err := indexPrep(n, 3)
	if err != nil {
		return nil, err
	}
	l, err := ndLayoutOf(n, 0)
	if err != nil {
		return nil, err
	}
	idx := n.Inputs[1].Shape
	if want := append(idx[:len(idx)-1].Clone(), n.Shape[l.k:]...); !n.Inputs[2].Shape.Equal(want) {
		return nil, fmt.Errorf("%v: updates %v, want %v", n.Op, n.Inputs[2].Shape, want)
	}
	offs := make([]int, l.tuples)
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		if err := l.offsets(n.Op, indicesOf(n.Inputs[1].DType, ins[1].Data), offs); err != nil {
			return err
		}
		copy(out.Data, ins[0].Data)
		for t, o := range offs {
			for i := range l.block {
				comb(out.Data, o+i, ins[2].Data, t*l.block+i, 1)
			}
		}
		return nil
	}, nil
}
