package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// perAxis normalises an N-D window attribute: nil is def on every one of
// the sp axes; otherwise it needs n values of at least lo.
func perAxis(name string, v []int, n, def, lo int) ([]int, error) {
	if v == nil {
		v = make([]int, n)
		for i := range v {
			v[i] = def
		}
	}
	if len(v) != n || minInts(v) < lo {
		return nil, fmt.Errorf("%s %v needs %d values >= %d", name, v, n, lo)
	}
	return v, nil
}

// inferPoolND: x [N, C, s...] with 1 to 3 spatial axes gives [N, C,
// o...], each o the floor-mode window count (ceil mode is an end pad the
// importer adds); MaxPoolND's output 1 is I64.
func inferPoolND(isMax bool) inferFunc {
	return func(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
		if a.Index != 0 && (a.Index != 1 || !isMax) {
			return 0, nil, fmt.Errorf("output %d: MaxPoolND has outputs 0 (values) and 1 (indices), AvgPoolND one", a.Index)
		}
		return inferWindowND(a, ins)
	}
}

func inferWindowND(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	if !isNumeric(x.DType) {
		return 0, nil, fmt.Errorf("dtype %v not supported", x.DType)
	}
	sp := x.Shape.Rank() - 2
	if sp < 1 || sp > 3 {
		return 0, nil, fmt.Errorf("input %v must be [N, C, 1 to 3 spatial dims]", x.Shape)
	}
	var err error
	if a.Kernel, err = perAxis("kernel", a.Kernel, sp, 0, 1); err != nil {
		return 0, nil, err
	}
	if a.Strides, err = perAxis("strides", a.Strides, sp, 1, 1); err != nil {
		return 0, nil, err
	}
	if a.Dilations, err = perAxis("dilations", a.Dilations, sp, 1, 1); err != nil {
		return 0, nil, err
	}
	if a.Pads, err = perAxis("pads (begins, then ends)", a.Pads, 2*sp, 0, 0); err != nil {
		return 0, nil, err
	}
	out := tensor.Shape{x.Shape[0], x.Shape[1]}
	for i := range sp {
		// Bounds that keep the window arithmetic far from overflow.
		if max(a.Kernel[i], a.Strides[i], a.Dilations[i], a.Pads[i], a.Pads[sp+i]) > 1<<24 {
			return 0, nil, fmt.Errorf("kernel %v, strides %v, dilations %v or pads %v too large", a.Kernel, a.Strides, a.Dilations, a.Pads)
		}
		o, err := windowOut(x.Shape[2+i], a.Pads[i], a.Pads[sp+i], a.Kernel[i], a.Strides[i], a.Dilations[i])
		if err != nil {
			return 0, nil, err
		}
		out = append(out, o)
	}
	if a.Index == 1 {
		return tensor.I64, out, nil
	}
	return x.DType, out, nil
}

// inferMaxUnpool: x and its I64 indices share a shape; the output is
// Attrs.Shape, with x's N and C.
func inferMaxUnpool(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, idx := ins[0], ins[1]
	if !isNumeric(x.DType) || idx.DType != tensor.I64 {
		return 0, nil, fmt.Errorf("x %v must be numeric and indices %v I64", x.DType, idx.DType)
	}
	if x.Shape.Rank() < 3 || !idx.Shape.Equal(x.Shape) {
		return 0, nil, fmt.Errorf("x %v must be [N, C, spatial...] and indices %v the same", x.Shape, idx.Shape)
	}
	s := a.Shape
	if s.Rank() != x.Shape.Rank() || s[0] != x.Shape[0] || s[1] != x.Shape[1] || minInts(s) < 0 {
		return 0, nil, fmt.Errorf("output shape %v must be [%d, %d, spatial...] of rank %d", s, x.Shape[0], x.Shape[1], x.Shape.Rank())
	}
	return x.DType, s.Clone(), nil
}
