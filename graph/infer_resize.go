package graph

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/tensor"
)

// inferResize checks a ResizeSpec against the input: one size and one
// finite positive scale per axis, an ROI pair per axis for
// tf_crop_and_resize, and known enum values.
func inferResize(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	if !x.DType.IsFloat() {
		return 0, nil, fmt.Errorf("dtype %v not supported (float only)", x.DType)
	}
	s := a.Resize
	if s == nil {
		return 0, nil, fmt.Errorf("no ResizeSpec")
	}
	r := x.Shape.Rank()
	if len(s.Sizes) != r || len(s.Scales) != r {
		return 0, nil, fmt.Errorf("sizes %v and scales %v need one value per input axis (%d)", s.Sizes, s.Scales, r)
	}
	for i, d := range s.Sizes {
		sc := s.Scales[i]
		if d < 0 || !(sc > 0) || math.IsInf(sc, 0) {
			return 0, nil, fmt.Errorf("axis %d: size %d must be >= 0 and scale %v finite and > 0", i, d, sc)
		}
		if d > 0 && x.Shape[i] == 0 {
			return 0, nil, fmt.Errorf("axis %d: cannot resize an empty axis to %d", i, d)
		}
	}
	if s.Mode > ResizeCubic || int(s.Coord) >= len(coordNames) || int(s.Nearest) >= len(nearestNames) {
		return 0, nil, fmt.Errorf("mode %v, coordinates %v or nearest mode %v unknown", s.Mode, s.Coord, s.Nearest)
	}
	if s.Coord == CoordTFCropAndResize {
		if len(s.ROI) != 2*r {
			return 0, nil, fmt.Errorf("tf_crop_and_resize needs an ROI of %d values, got %v", 2*r, s.ROI)
		}
		for _, v := range s.ROI {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, nil, fmt.Errorf("ROI %v must be finite", s.ROI)
			}
		}
	} else if s.ROI != nil {
		return 0, nil, fmt.Errorf("an ROI is only read by tf_crop_and_resize, not %v", s.Coord)
	}
	return x.DType, tensor.Shape(s.Sizes).Clone(), nil
}

// inferConvTranspose normalises Strides, Dilations (default 1) and Pads
// (default 0, one begin and one end per spatial axis; negative pads add
// zero cells) and computes the output: stride·(in-1) + dilation·(k-1) + 1 - begin - end per axis.
func inferConvTranspose(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	x, w := ins[0].Shape, ins[1].Shape
	sp := x.Rank() - 2
	if sp < 1 || sp > 3 || w.Rank() != x.Rank() {
		return 0, nil, fmt.Errorf("input %v and weight %v must be [N, C, 1 to 3 spatial] and [C, M/groups, k...]", x, w)
	}
	ones := func(name string, v []int) ([]int, error) {
		if v == nil {
			v = make([]int, sp)
			for i := range v {
				v[i] = 1
			}
		}
		if len(v) != sp || minInts(v) < 1 {
			return nil, fmt.Errorf("%s %v needs %d values >= 1", name, v, sp)
		}
		return v, nil
	}
	var err error
	if a.Strides, err = ones("strides", a.Strides); err != nil {
		return 0, nil, err
	}
	if a.Dilations, err = ones("dilations", a.Dilations); err != nil {
		return 0, nil, err
	}
	if a.Pads == nil {
		a.Pads = make([]int, 2*sp)
	}
	if len(a.Pads) != 2*sp {
		return 0, nil, fmt.Errorf("pads %v need %d values (begins, then ends)", a.Pads, 2*sp)
	}
	if a.Groups == 0 {
		a.Groups = 1
	}
	g := a.Groups
	if g < 0 || x[1]%g != 0 || w[0] != x[1] {
		return 0, nil, fmt.Errorf("weight %v: dim 0 must be the input channels %d, divisible by groups %d", w, x[1], g)
	}
	m := w[1] * g
	if len(ins) == 3 && !ins[2].Shape.Equal(tensor.Shape{m}) {
		return 0, nil, fmt.Errorf("bias %v must be [%d]", ins[2].Shape, m)
	}
	out := tensor.Shape{x[0], m}
	for i := range sp {
		k := w[2+i]
		if k < 1 || x[2+i] < 1 {
			return 0, nil, fmt.Errorf("kernel %v and input %v need spatial dims >= 1", w, x)
		}
		if max(k, a.Strides[i], a.Dilations[i], x[2+i], abs(a.Pads[i]), abs(a.Pads[sp+i])) > 1<<24 {
			return 0, nil, fmt.Errorf("kernel %v, input %v, strides %v, dilations %v or pads %v too large", w, x, a.Strides, a.Dilations, a.Pads)
		}
		o := a.Strides[i]*(x[2+i]-1) + a.Dilations[i]*(k-1) + 1 - a.Pads[i] - a.Pads[sp+i]
		if o < 1 {
			return 0, nil, fmt.Errorf("pads %v leave no output on spatial axis %d", a.Pads, i)
		}
		out = append(out, o)
	}
	return ins[0].DType, out, nil
}

func minInts(v []int) int {
	m := math.MaxInt
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
