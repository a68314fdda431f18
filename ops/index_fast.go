package ops

import (
	"fmt"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Fast kernels of the indexing ops on the hot paths of exported models:
// GatherElements (torch.gather) and ScatterND (KV-cache updates). Both
// check every index in one pass over the indices before writing, as the
// reference kernels do, so their errors and untouched outputs agree.

func init() {
	RegisterFast(graph.OpGatherElements, prepareGatherElementsFast)
	RegisterFast(graph.OpScatterND, prepareScatterNDFast)
}

// scanIndices reports the first index outside [-d, d) as the op's error.
func scanIndices[I int32 | int64](op graph.Op, idx []I, d int, where string) error {
	lo, hi := I(-d), I(d)
	for p, k := range idx {
		if k < lo || k >= hi {
			return indexError(op, int(k), p, d, where)
		}
	}
	return nil
}

// prepareGatherElementsFast takes the usual torch.gather shape, indices
// equal to the data off the axis: x viewed as [outer, D, inner] and the
// indices and output as [outer, J, inner], so output row (o, j) reads
// row o of x at one index per element. Rows are split across workers.
func prepareGatherElementsFast(n *graph.Node, env Env) (Kernel, string, error) {
	if len(n.Inputs) != 2 || elementsPrep(n) != nil {
		return nil, "", nil // the reference reports what is wrong
	}
	x, idx, ax := n.Inputs[0].Shape, n.Inputs[1].Shape, n.Attrs.Axis
	for d := range x {
		if d != ax && idx[d] != x[d] {
			return nil, "", nil
		}
	}
	_, io, _, err := indexPrep(n, 2)
	if err != nil {
		return nil, "", err
	}
	g := gatherRows{outer: x[:ax].NumElements(), d: x[ax], j: idx[ax], inner: x[ax+1:].NumElements(), ax: ax}
	var k Kernel
	wide := n.Inputs[1].DType == tensor.I64
	switch es := n.DType.Size(); {
	case es == 1 && wide:
		k = gatherElementsKernel[uint8, int64](g, io, env)
	case es == 1:
		k = gatherElementsKernel[uint8, int32](g, io, env)
	case es == 2 && wide:
		k = gatherElementsKernel[uint16, int64](g, io, env)
	case es == 2:
		k = gatherElementsKernel[uint16, int32](g, io, env)
	case es == 4 && wide:
		k = gatherElementsKernel[uint32, int64](g, io, env)
	case es == 4:
		k = gatherElementsKernel[uint32, int32](g, io, env)
	case es == 8 && wide:
		k = gatherElementsKernel[uint64, int64](g, io, env)
	case es == 8:
		k = gatherElementsKernel[uint64, int32](g, io, env)
	default:
		return nil, "", nil
	}
	return k, "go", nil
}

// gatherRows is GatherElements' geometry in the fast kernel's view.
type gatherRows struct{ outer, d, j, inner, ax int }

func gatherElementsKernel[E any, I int32 | int64](g gatherRows, io moveIO, env Env) Kernel {
	var dst, src []E
	var idx []I
	where := fmt.Sprintf("axis %d", g.ax)
	// body is made once, so env.For does not allocate per run; it reads
	// the slices the kernel sets before calling it.
	body := func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := src[(r/g.j)*g.d*g.inner:][:g.d*g.inner]
			o := r * g.inner
			for i, k := range idx[o : o+g.inner] {
				if k < 0 {
					k += I(g.d)
				}
				dst[o+i] = row[int(k)*g.inner+i]
			}
		}
	}
	grain := max(1, (1<<14)/max(g.inner, 1))
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		idx = tensor.Elems[I](ins[1].Data)
		if err := scanIndices(graph.OpGatherElements, idx, g.d, where); err != nil {
			return err
		}
		dst, src = tensor.Elems[E](out.Data), tensor.Elems[E](ins[0].Data)
		env.For(g.outer*g.j, grain, body)
		dst, src, idx = nil, nil, nil // keep no tensor after returning
		return nil
	}
}

// prepareScatterNDFast writes whole blocks: it skips copying data when the
// plan wrote the output over it (a KV cache updated in place costs the
// update's bytes), copies blocks with copy and folds reductions a block at
// a time. Tuples run in order, so with duplicate indices the last update
// wins as in the reference.
func prepareScatterNDFast(n *graph.Node, env Env) (Kernel, string, error) {
	_, io, comb, err := indexPrep(n, 3)
	if err != nil {
		return nil, "", nil // the reference reports what is wrong
	}
	l, err := ndLayoutOf(n, 0)
	if err != nil {
		return nil, "", nil
	}
	offs := make([]int, l.tuples)
	dtype := n.Inputs[1].DType
	var data, dst []byte
	const chunk = 1 << 16
	copyBody := func(lo, hi int) {
		copy(dst[lo*chunk:min(hi*chunk, len(dst))], data[lo*chunk:])
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		if err := l.offsets(n.Op, indicesOf(dtype, ins[1].Data), offs); err != nil {
			return err
		}
		if len(out.Data) > 0 && unsafe.SliceData(out.Data) != unsafe.SliceData(ins[0].Data) {
			data, dst = ins[0].Data, out.Data
			env.For((len(dst)+chunk-1)/chunk, 4, copyBody)
			data, dst = nil, nil
		}
		for t, o := range offs {
			comb(out.Data, o, ins[2].Data, t*l.block, l.block)
		}
		return nil
	}, "go", nil
}
