package ops

import (
	"cmp"
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The N-D pools' reference kernels (1 to 3 spatial axes, dilations,
// MaxPool's flat indices) and MaxUnpool. The 2-D pools without dilation
// keep their own op (MaxPool2D, AvgPool2D) and fast kernels; these run
// what those do not cover, one window cell at a time.

var poolNumeric = []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64}

func init() {
	Register(Entry{Op: graph.OpMaxPoolND, DTypes: poolNumeric, Reference: preparePoolND})
	Register(Entry{Op: graph.OpAvgPoolND, DTypes: nativeFloats, Reference: preparePoolND, Tol: 1e-6})
	Register(Entry{Op: graph.OpMaxUnpool, DTypes: poolNumeric, Reference: prepareMaxUnpool})
}

// poolNDPlan is an N-D pool's geometry, padded to 3 spatial axes in
// front (size 1, kernel 1, no padding), so one loop nest serves 1 to 3.
type poolNDPlan struct {
	planes                 int
	in, out, k, s, d, lo   [3]int
	inSize, outSize, cells int
	countPad, indices      bool
	colMajor               bool
}

func poolNDPlanOf(n *graph.Node) (*poolNDPlan, error) {
	x := n.Inputs[0].Shape
	sp := x.Rank() - 2
	a := n.Attrs
	if len(n.Inputs) != 1 || sp < 1 || sp > 3 || n.Shape.Rank() != x.Rank() || len(a.Kernel) != sp ||
		len(a.Strides) != sp || len(a.Dilations) != sp || len(a.Pads) != 2*sp {
		return nil, fmt.Errorf("input %v, result %v and attributes %+v do not form an N-D pool", x, n.Shape, a)
	}
	p := &poolNDPlan{planes: x[0] * x[1], cells: 1, countPad: a.CountPad, indices: a.Index == 1, colMajor: a.ColMajor}
	for i := range 3 {
		p.in[i], p.out[i], p.k[i], p.s[i], p.d[i] = 1, 1, 1, 1, 1
	}
	for i := range sp {
		j := 3 - sp + i
		p.in[j], p.out[j], p.k[j], p.s[j], p.d[j], p.lo[j] = x[2+i], n.Shape[2+i], a.Kernel[i], a.Strides[i], a.Dilations[i], a.Pads[i]
		p.cells *= a.Kernel[i]
	}
	p.inSize, p.outSize = p.in[0]*p.in[1]*p.in[2], p.out[0]*p.out[1]*p.out[2]
	return p, nil
}

// offset is a spatial cell's position within its plane: row-major, or
// column-major (the first spatial axis fastest) for storage_order 1. The
// padding axes have size 1 and coordinate 0, so they add nothing.
func (p *poolNDPlan) offset(c [3]int) int {
	if p.colMajor {
		return c[2]*p.in[1]*p.in[0] + c[1]*p.in[0] + c[0]
	}
	return (c[0]*p.in[1]+c[1])*p.in[2] + c[2]
}

// window calls f with the row-major spatial offset and the coordinates of
// every real cell of output position o's window, in row-major window
// order; padding cells are skipped.
func (p *poolNDPlan) window(o [3]int, f func(at int, c [3]int)) {
	var c [3]int
	for k0 := range p.k[0] {
		if c[0] = o[0]*p.s[0] - p.lo[0] + k0*p.d[0]; c[0] < 0 || c[0] >= p.in[0] {
			continue
		}
		for k1 := range p.k[1] {
			if c[1] = o[1]*p.s[1] - p.lo[1] + k1*p.d[1]; c[1] < 0 || c[1] >= p.in[1] {
				continue
			}
			for k2 := range p.k[2] {
				if c[2] = o[2]*p.s[2] - p.lo[2] + k2*p.d[2]; c[2] < 0 || c[2] >= p.in[2] {
					continue
				}
				f((c[0]*p.in[1]+c[1])*p.in[2]+c[2], c)
			}
		}
	}
}

// each calls f for every output position in row-major order.
func (p *poolNDPlan) each(f func(i int, o [3]int)) {
	i := 0
	for o0 := range p.out[0] {
		for o1 := range p.out[1] {
			for o2 := range p.out[2] {
				f(i, [3]int{o0, o1, o2})
				i++
			}
		}
	}
}

func preparePoolND(n *graph.Node) (Kernel, error) {
	p, err := poolNDPlanOf(n)
	if err != nil {
		return nil, err
	}
	dt := n.Inputs[0].DType
	want := dt
	if p.indices {
		want = tensor.I64
	}
	if n.DType != want {
		return nil, fmt.Errorf("result dtype %v, want %v", n.DType, want)
	}
	if n.Op == graph.OpAvgPoolND {
		switch dt {
		case tensor.F32:
			return sizeChecked(n, avgPoolND[float32](p)), nil
		case tensor.F64:
			return sizeChecked(n, avgPoolND[float64](p)), nil
		}
		return nil, fmt.Errorf("dtype %v has no reference kernel", dt)
	}
	var k Kernel
	switch dt {
	case tensor.F32:
		k = maxPoolND[float32](p, float32(math.Inf(-1)))
	case tensor.F64:
		k = maxPoolND(p, math.Inf(-1))
	case tensor.I8:
		k = maxPoolND[int8](p, math.MinInt8)
	case tensor.U8:
		k = maxPoolND[uint8](p, 0)
	case tensor.I32:
		k = maxPoolND[int32](p, math.MinInt32)
	case tensor.I64:
		k = maxPoolND[int64](p, math.MinInt64)
	default:
		return nil, fmt.Errorf("dtype %v has no reference kernel", dt)
	}
	return sizeChecked(n, k), nil
}

// maxPoolND writes each window's maximum, or its flat position in x
// ((n·C + c)·S + offset). The first maximum in window order wins a tie
// and NaN wins over every number (the first NaN), as MaxPool2D's
// builtin max propagates it. A window with no real cell (only past an
// empty input axis or a padding that ceil mode grew) gives lowest, the
// identity of max, and index -1.
func maxPoolND[T cmp.Ordered](p *poolNDPlan, lowest T) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x := tensor.Elems[T](ins[0].Data)
		var vals []T
		var idx []int64
		if p.indices {
			idx = out.I64()
		} else {
			vals = tensor.Elems[T](out.Data)
		}
		for plane := range p.planes {
			xp := x[plane*p.inSize : (plane+1)*p.inSize]
			p.each(func(i int, o [3]int) {
				best, at, found := lowest, -1, false
				p.window(o, func(j int, c [3]int) {
					v := xp[j]
					if !found || v > best || (v != v && best == best) {
						best, found = v, true
						at = p.offset(c)
					}
				})
				i += plane * p.outSize
				if !p.indices {
					vals[i] = best
				} else if at < 0 {
					idx[i] = -1
				} else {
					idx[i] = int64(plane*p.inSize + at)
				}
			})
		}
		return nil
	}
}

// avgPoolND writes each window's mean over its real cells, or over the
// whole window with countPad; a window with no real cell and no countPad
// gives NaN (0/0), as AvgPool2D.
func avgPoolND[T float32 | float64](p *poolNDPlan) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
		for plane := range p.planes {
			xp := x[plane*p.inSize : (plane+1)*p.inSize]
			p.each(func(i int, o [3]int) {
				sum, n := 0.0, 0
				p.window(o, func(j int, _ [3]int) {
					sum += float64(xp[j])
					n++
				})
				if p.countPad {
					n = p.cells
				}
				y[plane*p.outSize+i] = T(sum / float64(n))
			})
		}
		return nil
	}
}

func prepareMaxUnpool(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 2 || n.Inputs[1].DType != tensor.I64 || n.DType != n.Inputs[0].DType {
		return nil, fmt.Errorf("want x and I64 indices, result of x's dtype")
	}
	size := int64(n.Shape.NumElements())
	var k Kernel
	switch n.DType {
	case tensor.F32:
		k = maxUnpool[float32](size)
	case tensor.F64:
		k = maxUnpool[float64](size)
	case tensor.I8:
		k = maxUnpool[int8](size)
	case tensor.U8:
		k = maxUnpool[uint8](size)
	case tensor.I32:
		k = maxUnpool[int32](size)
	case tensor.I64:
		k = maxUnpool[int64](size)
	default:
		return nil, fmt.Errorf("dtype %v has no reference kernel", n.DType)
	}
	return sizeChecked(n, k), nil
}

// maxUnpool zeroes the output, then writes x's elements at their flat
// indices in order (a later one wins a shared index). An index outside
// [0, size) is an error naming it.
func maxUnpool[T any](size int64) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, idx, y := tensor.Elems[T](ins[0].Data), ins[1].I64(), tensor.Elems[T](out.Data)
		clear(y)
		for i, at := range idx {
			if at < 0 || at >= size {
				return fmt.Errorf("MaxUnpool: index %d at position %d outside the output's %d elements", at, i, size)
			}
			y[at] = x[i]
		}
		return nil
	}
}
