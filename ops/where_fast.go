package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	RegisterFast(graph.OpWhere, prepareWhereRows)
}

// prepareWhereRows takes a Where whose condition is constant along the
// last axis while both values run along it contiguously: a mask over
// rows, as the decoders' cache update keeps or replaces whole cache rows
// each step. Each output row is then one copy from x or y. The
// reference's per-element loop spent 5 ms of a 26 ms token on the 100m
// demo decoder's 24 caches. Other Wheres run the reference.
func prepareWhereRows(n *graph.Node, _ Env) (Kernel, string, error) {
	if len(n.Inputs) != 3 {
		return nil, "", nil
	}
	c, x, y := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if c.DType != tensor.Bool || x.DType != y.DType || n.DType != x.DType {
		return nil, "", nil // the reference reports it
	}
	p, err := newBcastPlan(n.Shape, c.Shape, x.Shape, y.Shape)
	if err != nil {
		return nil, "", nil
	}
	last := len(p.shape) - 1
	if last < 0 || p.shape[last] < 2 || p.strides[0][last] != 0 || p.strides[1][last] != 1 || p.strides[2][last] != 1 {
		return nil, "", nil
	}
	k := whereBySize(x.DType.Size(), p, true)
	if k == nil {
		return nil, "", nil
	}
	return sizeChecked(n, k), "rows", nil
}

// whereRowsKernel copies each output row whole from x or y, as the
// condition's one value for the row says (bits of size T, as
// whereKernel).
func whereRowsKernel[T uint8 | uint16 | uint32 | uint64](p *bcastPlan) Kernel {
	inner := p.shape[len(p.shape)-1]
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		cond, x, y, dst := ins[0].Data, tensor.Elems[T](ins[1].Data), tensor.Elems[T](ins[2].Data), tensor.Elems[T](out.Data)
		p.rows(func(o int, base []int) {
			src := y[base[2]:][:inner]
			if cond[base[0]] != 0 {
				src = x[base[1]:][:inner]
			}
			copy(dst[o:o+inner], src)
		})
		return nil
	}
}
