package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// padBorder fills the border of one axis: for every position of the outer
// axes inside the input region, the block at output position to[i] of the
// axis (all later axes, contiguous) is copied from the block at from[i].
type padBorder struct {
	dims, strides []int // outer axes: input sizes and output strides, elements
	base          int   // output element offset of the region's first outer position
	step, es      int   // output element stride of this axis; bytes per element
	block         int   // bytes of one position of this axis
	to, from      []int // output positions along this axis
	idx           []int // odometer scratch
}

// prepPad copies the input into the interior of the output. Constant mode
// fills the whole output with the value first. Reflect and edge fill the
// border axis by axis from the last: when axis k is filled, every later
// axis is already complete at the interior positions of axis k, so each
// border position is one block copied from an interior position.
func prepPad(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, 1)
	if err != nil {
		return nil, err
	}
	x, a := n.Inputs[0].Shape, n.Attrs
	r := len(x)
	if len(a.Pads) != 2*r || a.Mode > graph.PadEdge {
		return nil, fmt.Errorf("pad: pads %v (mode %v) for rank %d", a.Pads, a.Mode, r)
	}
	want := x.Clone()
	for i := range x {
		lo, hi := a.Pads[i], a.Pads[r+i]
		if lo < 0 || hi < 0 {
			return nil, fmt.Errorf("pad: negative pads %v", a.Pads)
		}
		if (lo > 0 || hi > 0) && ((a.Mode == graph.PadReflect && (lo >= x[i] || hi >= x[i])) || (a.Mode == graph.PadEdge && x[i] == 0)) {
			return nil, fmt.Errorf("pad: %v pad (%d, %d) too large for axis %d of size %d", a.Mode, lo, hi, i, x[i])
		}
		want[i] += lo + hi
	}
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	os := n.Shape.Strides()
	off := 0
	for i := range x {
		off += a.Pads[i] * os[i]
	}
	interior := newMover(es, x, x.Strides(), os, 0, off)
	empty := n.Shape.NumElements() == 0

	var fill []byte
	var borders []padBorder
	if a.Mode == graph.PadConstant {
		if fill, err = padValue(n.DType, a.Value); err != nil {
			return nil, err
		}
	} else if !empty { // a non-empty output of reflect or edge has a non-empty input
		for k := r - 1; k >= 0; k-- {
			lo, hi := a.Pads[k], a.Pads[r+k]
			if lo == 0 && hi == 0 {
				continue
			}
			b := padBorder{dims: x[:k], strides: os[:k], step: os[k], es: es, block: os[k] * es, idx: make([]int, k)}
			for j := range k {
				b.base += a.Pads[j] * os[j]
			}
			for p := range n.Shape[k] {
				i := p - lo // input index of output position p
				if i >= 0 && i < x[k] {
					continue
				}
				b.to, b.from = append(b.to, p), append(b.from, lo+padSource(i, x[k], a.Mode))
			}
			borders = append(borders, b)
		}
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		if fill != nil && !empty {
			copy(out.Data, fill)
			for w := len(fill); w < len(out.Data); w *= 2 { // doubling: few large copies
				copy(out.Data[w:], out.Data[:w])
			}
		}
		interior.move(out.Data, ins[0].Data)
		for i := range borders {
			borders[i].fill(out.Data)
		}
		return nil
	}, nil
}

// padSource maps an input index i outside [0, d) to the input index whose
// value it takes.
func padSource(i, d int, mode graph.PadMode) int {
	if mode == graph.PadReflect { // mirror about the edge, not repeating it
		if i < 0 {
			return -i
		}
		return 2*(d-1) - i
	}
	return min(max(i, 0), d-1)
}

// fill runs the border copies of one axis over every outer position.
func (b *padBorder) fill(out []byte) {
	o := b.base
	idx := b.idx
	for {
		for i, p := range b.to {
			d, s := (o+p*b.step)*b.es, (o+b.from[i]*b.step)*b.es
			copy(out[d:d+b.block], out[s:s+b.block])
		}
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			o += b.strides[k]
			if idx[k] < b.dims[k] {
				break
			}
			o -= b.strides[k] * b.dims[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// padValue encodes v as one element of dt with tensor.Convert's rules
// (integers truncate and saturate, Bool is v != 0).
func padValue(dt tensor.DType, v float32) ([]byte, error) {
	src, err := tensor.FromF32(tensor.Shape{1}, []float32{v})
	if err != nil {
		return nil, err
	}
	dst := tensor.New(dt, 1)
	if err := tensor.Convert(dst, src); err != nil {
		return nil, err
	}
	return dst.Data, nil
}
