package ops

import (
	"cmp"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// TopK's fast kernel for small K: a partial selection instead of the
// reference's full sort. Each line keeps its K best positions so far in a
// binary heap whose root is the one that would come last (topKBefore),
// so an element that does not beat the root costs one comparison:
// O(n log K) per line, against O(n log n) for sorting, and only the K
// survivors are sorted at the end. Lines run in parallel, each chunk of
// lines with its own scratch. Where K is a large part of the line,
// sorting is as good and the reference runs.

func init() {
	RegisterFast(graph.OpTopK, prepareTopKFast)
}

// topKFastMin is how many elements a line must hold per selected one
// for the selection to be taken.
const topKFastMin = 4

func prepareTopKFast(n *graph.Node, env Env) (Kernel, string, error) {
	if _, err := prepareTopK(n); err != nil {
		return nil, "", nil // the reference reports it
	}
	p, err := topKPlanOf(n)
	if err != nil || p.k*topKFastMin > p.size || p.k == 0 {
		return nil, "", nil
	}
	var k Kernel
	switch n.Inputs[0].DType {
	case tensor.F32:
		k = topKSelect[float32](p, env)
	case tensor.F64:
		k = topKSelect[float64](p, env)
	case tensor.I8:
		k = topKSelect[int8](p, env)
	case tensor.U8:
		k = topKSelect[uint8](p, env)
	case tensor.I32:
		k = topKSelect[int32](p, env)
	case tensor.I64:
		k = topKSelect[int64](p, env)
	default:
		return nil, "", nil
	}
	return sizeChecked(n, k), "select", nil
}

// topKHeap is one chunk's scratch: the line (gathered when the axis is
// strided) and the heap of selected positions.
type topKHeap[T cmp.Ordered] struct {
	line     []T
	heap     []int
	smallest bool
}

// after reports whether position a comes after position b in the output.
func (h *topKHeap[T]) after(a, b int) bool {
	return topKBefore(h.line[b], b, h.line[a], a, h.smallest)
}

// sel returns the k best positions of h.line, in output order.
func (h *topKHeap[T]) sel(k int) []int {
	q := h.heap[:0]
	for j := range h.line {
		if len(q) < k {
			q = append(q, j)
			for c := len(q) - 1; c > 0; { // sift up
				p := (c - 1) / 2
				if !h.after(q[c], q[p]) {
					break
				}
				q[c], q[p] = q[p], q[c]
				c = p
			}
			continue
		}
		if !h.after(q[0], j) {
			continue // j does not beat the current last
		}
		q[0] = j
		for p := 0; ; { // sift down
			c := 2*p + 1
			if c >= len(q) {
				break
			}
			if c+1 < len(q) && h.after(q[c+1], q[c]) {
				c++
			}
			if !h.after(q[c], q[p]) {
				break
			}
			q[c], q[p] = q[p], q[c]
			p = c
		}
	}
	slices.SortFunc(q, func(a, b int) int {
		if h.after(b, a) {
			return -1
		}
		return 1 // positions are distinct, so never equal
	})
	h.heap = q
	return q
}

func topKSelect[T cmp.Ordered](p *topKPlan, env Env) Kernel {
	var x []T
	var out tensor.Tensor
	var scratch []*topKHeap[T]
	c := asm.NewChunks(asmPar(env), p.outer*p.inner, rowGrain(p.size), func(chunk, lo, hi int) {
		h := scratch[chunk]
		for l := lo; l < hi; l++ {
			o, i := l/p.inner, l%p.inner
			base := o*p.size*p.inner + i
			if p.inner == 1 {
				h.line = x[base : base+p.size]
			} else {
				for j := range h.line {
					h.line[j] = x[base+j*p.inner]
				}
			}
			topKWrite(p, out, x, h.sel(p.k), o, i, base)
		}
	})
	scratch = make([]*topKHeap[T], c.N())
	for i := range scratch {
		scratch[i] = &topKHeap[T]{heap: make([]int, 0, p.k), smallest: p.smallest}
		if p.inner != 1 {
			scratch[i].line = make([]T, p.size)
		}
	}
	return func(ins []tensor.Tensor, o tensor.Tensor) error {
		x, out = tensor.Elems[T](ins[0].Data), o
		c.Do()
		x, out = nil, tensor.Tensor{}
		return nil
	}
}
