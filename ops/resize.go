package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	// Tol: the fast path sums a tap's products in float32.
	Register(Entry{Op: graph.OpResize, DTypes: nativeFloats, Reference: prepareResize, Tol: 1e-6})
}

type resizePlan struct {
	axes   []kdesc.ResizeAxis
	shape  tensor.Shape // input
	extrap float64
}

func newResizePlan(nd *graph.Node) (*resizePlan, error) {
	s := nd.Attrs.Resize
	x := nd.Inputs[0].Shape
	if s == nil || len(s.Sizes) != x.Rank() || !nd.Shape.Equal(tensor.Shape(s.Sizes)) {
		return nil, fmt.Errorf("resize spec does not fit input %v and result %v", x, nd.Shape)
	}
	p := &resizePlan{shape: x, extrap: s.Extrapolation}
	for ax := range x {
		p.axes = append(p.axes, kdesc.ResizeTaps(s, ax, x[ax]))
	}
	return p, nil
}

func prepareResize(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 1, 1, 1)
	if err != nil {
		return nil, err
	}
	p, err := newResizePlan(nd)
	if err != nil {
		return nil, err
	}
	return bindFloat(nd, dt, p, runResize[float32], runResize[float64]), nil
}

// runResize is the separable definition: each output element is the sum,
// over every combination of one tap per axis, of the product of the taps'
// weights times the input element they address, accumulated in float64.
// An output whose coordinate on some axis lies outside the input is the
// extrapolation value (ONNX's recursion over axes interpolates that value
// with weights summing to 1, which leaves it unchanged). Every tap is
// read, zero weights included, as ONNX's reference (a dot product) and
// PyTorch do: an infinite sample beside an integral coordinate gives NaN.
// Axes that copy through (N and C of an image) read only their own
// sample (kdesc.ResizeTaps).
func runResize[T float32 | float64](p *resizePlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	r := len(p.axes)
	strides := p.shape.Strides()
	pos := make([]int, r) // output index
	tap := make([]int, r) // tap per axis
	for i := range y {
		outside := false
		for ax, a := range p.axes {
			outside = outside || a.Outside != nil && a.Outside[pos[ax]]
		}
		if outside {
			y[i] = T(p.extrap)
		} else {
			clear(tap)
			var sum float64
			for {
				wt, off := 1.0, 0
				for ax, a := range p.axes {
					k := pos[ax]*a.Taps + tap[ax]
					wt *= a.W[k]
					off += int(a.Idx[k]) * strides[ax]
				}
				sum += wt * float64(x[off])
				ax := r - 1
				for ; ax >= 0; ax-- {
					if tap[ax]++; tap[ax] < p.axes[ax].Taps {
						break
					}
					tap[ax] = 0
				}
				if ax < 0 {
					break
				}
			}
			y[i] = T(sum)
		}
		for ax := r - 1; ax >= 0; ax-- {
			if pos[ax]++; pos[ax] < p.axes[ax].Out {
				break
			}
			pos[ax] = 0
		}
	}
}
