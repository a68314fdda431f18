package ops

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TopK's reference kernel: each line along the axis is sorted whole
// (stably, by rank) and its first K elements are written, either their
// values (Attrs.Index 0) or their positions (1). topk_fast.go selects
// instead of sorting when K is small; both order by topKBefore.

func init() {
	numeric := []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64}
	Register(Entry{Op: graph.OpTopK, DTypes: numeric, Reference: prepareTopK})
}

// topKBefore reports whether element a (at position ia) comes before b (at
// ib) in TopK's output: the larger first (the smaller with smallest), NaN
// ranking above every number, and on ties the lower position first, as
// ONNX specifies. It is a strict total order on (value, position), so a
// sort and a selection by it give the same K elements in the same order.
func topKBefore[T cmp.Ordered](a T, ia int, b T, ib int, smallest bool) bool {
	c := cmp.Compare(a, b) // NaN compares below every number here
	if a != a || b != b {  // flip NaN to the top
		c = -c
	}
	if smallest {
		c = -c
	}
	return c > 0 || (c == 0 && ia < ib)
}

// topKPlan is a TopK node's line geometry and which output it writes.
type topKPlan struct {
	outer, size, inner, k int
	smallest, indices     bool
}

func topKPlanOf(n *graph.Node) (*topKPlan, error) {
	x, err := axisInput(n)
	if err != nil {
		return nil, err
	}
	ax, k := n.Attrs.Axis, n.Attrs.K
	want := x.Shape.Clone()
	if k >= 0 && k <= x.Shape[ax] {
		want[ax] = k
	} else {
		return nil, fmt.Errorf("k = %d out of range [0, %d]", k, x.Shape[ax])
	}
	wantDT := x.DType
	if n.Attrs.Index == 1 {
		wantDT = tensor.I64
	}
	if n.DType != wantDT || !n.Shape.Equal(want) {
		return nil, fmt.Errorf("result %v%v, want %v%v", n.DType, n.Shape, wantDT, want)
	}
	outer, size, inner := axisSplit(x.Shape, ax)
	return &topKPlan{outer: outer, size: size, inner: inner, k: k, smallest: n.Attrs.Smallest, indices: n.Attrs.Index == 1}, nil
}

func prepareTopK(n *graph.Node) (Kernel, error) {
	p, err := topKPlanOf(n)
	if err != nil {
		return nil, err
	}
	var k Kernel
	switch n.Inputs[0].DType {
	case tensor.F32:
		k = topKRef[float32](p)
	case tensor.F64:
		k = topKRef[float64](p)
	case tensor.I8:
		k = topKRef[int8](p)
	case tensor.U8:
		k = topKRef[uint8](p)
	case tensor.I32:
		k = topKRef[int32](p)
	case tensor.I64:
		k = topKRef[int64](p)
	default:
		return nil, fmt.Errorf("dtype %v has no reference kernel", n.Inputs[0].DType)
	}
	return sizeChecked(n, k), nil
}

func topKRef[T cmp.Ordered](p *topKPlan) Kernel {
	order := make([]int, p.size)
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x := tensor.Elems[T](ins[0].Data)
		for o := range p.outer {
			for i := range p.inner {
				base := o*p.size*p.inner + i
				for j := range order {
					order[j] = j
				}
				slices.SortStableFunc(order, func(a, b int) int {
					if topKBefore(x[base+a*p.inner], a, x[base+b*p.inner], b, p.smallest) {
						return -1
					}
					if topKBefore(x[base+b*p.inner], b, x[base+a*p.inner], a, p.smallest) {
						return 1
					}
					return 0
				})
				topKWrite(p, out, x, order[:p.k], o, i, base)
			}
		}
		return nil
	}
}

// topKWrite stores line (o, i)'s selected positions, in order, as
// values or indices.
func topKWrite[T any](p *topKPlan, out tensor.Tensor, x []T, sel []int, o, i, base int) {
	d := o*p.k*p.inner + i
	if p.indices {
		idx := out.I64()
		for r, j := range sel {
			idx[d+r*p.inner] = int64(j)
		}
		return
	}
	dst := tensor.Elems[T](out.Data)
	for r, j := range sel {
		dst[d+r*p.inner] = x[base+j*p.inner]
	}
}
