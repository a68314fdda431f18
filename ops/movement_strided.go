package ops

import "github.com/kilnml/kiln/tensor"

// mover copies a strided view of a source buffer into a strided region of
// a destination buffer. Every movement op that maps output positions to
// input positions linearly (transpose, slice, split, concat, expand, tile,
// the interior of pad) is one mover, or a few.
//
// Dims are coalesced when built: size-1 dims are dropped and neighbours
// that are contiguous in both buffers are merged, so the innermost loop is
// either one copy() of a contiguous run or a strided element loop, and the
// odometer above it runs as few times as the layout allows.
type mover struct {
	esize          int   // bytes per element: 1, 2, 4 or 8
	empty          bool  // some dim is 0: nothing to copy
	dims           []int // outer loop dims, outermost first
	src, dst       []int // element strides of the outer dims
	srcOff, dstOff int   // element offsets of the first element
	run            int   // > 0: innermost is a contiguous run of this many elements
	n, ss, ds      int   // run == 0: innermost is n elements at strides ss, ds
	idx            []int // odometer scratch, all zero between runs
}

// newMover builds a mover over the given dims, with element strides src
// and dst per dim (negative and zero strides allowed) and the element
// offsets of index (0, ..., 0) in each buffer.
func newMover(esize int, dims, src, dst []int, srcOff, dstOff int) *mover {
	m := &mover{esize: esize, srcOff: srcOff, dstOff: dstOff}
	for _, n := range dims {
		if n == 0 {
			m.empty = true
			return m
		}
	}
	ds, st := coalesceDims(dims, src, dst)
	ss, ts := st[0], st[1]
	m.run = 1 // all dims of size 1: a single element
	if k := len(ds) - 1; k >= 0 {
		if ss[k] == 1 && ts[k] == 1 {
			m.run = ds[k]
		} else {
			m.run, m.n, m.ss, m.ds = 0, ds[k], ss[k], ts[k]
		}
		ds, ss, ts = ds[:k], ss[:k], ts[:k]
	}
	m.dims, m.src, m.dst = ds, ss, ts
	m.idx = make([]int, len(ds))
	return m
}

// move performs the copy. The buffers must be large enough for every
// offset the mover reaches; callers check byte lengths first.
func (m *mover) move(dst, src []byte) {
	if m.empty {
		return
	}
	switch m.esize {
	case 1:
		moveElems(m, dst, src)
	case 2:
		moveElems(m, tensor.Elems[uint16](dst), tensor.Elems[uint16](src))
	case 4:
		moveElems(m, tensor.Elems[uint32](dst), tensor.Elems[uint32](src))
	case 8:
		moveElems(m, tensor.Elems[uint64](dst), tensor.Elems[uint64](src))
	}
}

// moveElems runs the odometer over the outer dims with elements of type T
// (an unsigned word of the element's size: the bits are moved, never
// interpreted).
func moveElems[T any](m *mover, dst, src []T) {
	so, do := m.srcOff, m.dstOff
	idx := m.idx
	for {
		if m.run > 0 {
			copy(dst[do:do+m.run], src[so:so+m.run])
		} else {
			s, d := so, do
			for range m.n {
				dst[d] = src[s]
				s += m.ss
				d += m.ds
			}
		}
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			so += m.src[k]
			do += m.dst[k]
			if idx[k] < m.dims[k] {
				break
			}
			so -= m.src[k] * m.dims[k]
			do -= m.dst[k] * m.dims[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}
