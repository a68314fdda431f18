package onnx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Ops whose result is known at import time: they become Constants, which
// is how shape sub-graphs (Shape → Gather → Concat → Reshape) fold away.

func init() {
	register("Shape", 1, one(mapShape))
	register("Size", 1, one(func(c *ctx) (*graph.Node, error) {
		if _, err := c.need(0); err != nil {
			return nil, err
		}
		t, _ := tensor.FromI64(tensor.Shape{}, []int64{int64(c.shape(0).NumElements())})
		return c.g.Constant(t), nil
	}))
	register("Constant", 1, one(mapConstant))
	register("ConstantOfShape", 9, one(mapConstantOfShape))
	register("Range", 11, one(mapRange))
}

// mapShape: from opset 15, start and end pick a sub-range of the dims
// (negative from the end, clamped).
func mapShape(c *ctx) (*graph.Node, error) {
	if _, err := c.need(0); err != nil {
		return nil, err
	}
	s := c.shape(0)
	r := int64(len(s))
	start, err := c.attrInt("start", 0)
	if err != nil {
		return nil, err
	}
	end, err := c.attrInt("end", r)
	if err != nil {
		return nil, err
	}
	norm := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return max(0, min(v, r))
	}
	start, end = norm(start), norm(end)
	dims := []int64{}
	for i := start; i < end; i++ {
		dims = append(dims, int64(s[i]))
	}
	t, _ := tensor.FromI64(tensor.Shape{len(dims)}, dims)
	return c.g.Constant(t), nil
}

// mapConstant reads whichever value attribute the node has.
func mapConstant(c *ctx) (*graph.Node, error) {
	if len(c.n.Attrs) != 1 {
		return nil, fmt.Errorf("a Constant needs exactly one value attribute, has %d", len(c.n.Attrs))
	}
	a := c.n.Attrs[0]
	var t tensor.Tensor
	var err error
	switch a.Name {
	case "value":
		if a.T == nil {
			return nil, fmt.Errorf("value attribute without a tensor")
		}
		if t, err = tensorOf(a.T, c.imp.ext); err != nil {
			return nil, err
		}
		t = t.Clone()
	case "value_float":
		t, err = tensor.FromF32(tensor.Shape{}, []float32{a.F})
	case "value_floats":
		t, err = tensor.FromF32(tensor.Shape{len(a.Floats)}, a.Floats)
	case "value_int":
		t, err = tensor.FromI64(tensor.Shape{}, []int64{a.I})
	case "value_ints":
		t, err = tensor.FromI64(tensor.Shape{len(a.Ints)}, a.Ints)
	default:
		return nil, unsupportedf("a Constant given by %q", a.Name)
	}
	if err != nil {
		return nil, err
	}
	return c.g.Constant(t), nil
}

// mapConstantOfShape fills a shape with the value attribute's single
// element (float 0 by default). A large result is an Expand of a scalar,
// computed at run time instead of held in the graph.
func mapConstantOfShape(c *ctx) (*graph.Node, error) {
	dims, err := c.ints(0, "shape")
	if err != nil {
		return nil, err
	}
	s := tensor.Shape(dims)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	fill := tensor.New(tensor.F32)
	if a, err := c.attr("value", AttrTensor); err != nil {
		return nil, err
	} else if a != nil && a.T != nil {
		v, err := tensorOf(a.T, nil)
		if err != nil {
			return nil, err
		}
		if v.NumElements() != 1 {
			return nil, fmt.Errorf("value must hold one element, has %d", v.NumElements())
		}
		fill = v.Clone()
		fill.Shape = nil
	}
	scalar := c.g.Constant(fill)
	if s.NumElements() > foldLimit || !c.imp.spend(s.NumElements()*fill.DType.Size()) {
		return c.g.Expand(scalar, dims...), nil
	}
	out, err := tensor.Make(fill.DType, s)
	if err != nil {
		return nil, err
	}
	sz := fill.DType.Size()
	for i := 0; i < len(out.Data); i += sz {
		copy(out.Data[i:], fill.Data)
	}
	return c.g.Constant(out), nil
}

// mapRange computes start, start+delta, ... below limit (above, for a
// negative delta) at import time; its inputs must be known. Integers are
// stepped exactly (float64 loses digits past 2^53).
func mapRange(c *ctx) (*graph.Node, error) {
	for i := range 3 {
		if t, ok := c.known(i); !ok || t.NumElements() != 1 {
			return nil, unsupportedf("Range with inputs computed at run time")
		}
	}
	dt := c.dtype(0)
	if dt.IsInt() {
		var v [3]int
		for i := range v {
			x, err := c.ints(i, "Range input")
			if err != nil {
				return nil, err
			}
			v[i] = x[0]
		}
		start, limit, delta := v[0], v[1], v[2]
		if delta == 0 {
			return nil, fmt.Errorf("delta is 0")
		}
		if max(start, limit, -start, -limit) > 1<<61 { // keeps limit-start from overflowing
			return nil, fmt.Errorf("Range bounds %d, %d are too large", start, limit)
		}
		n := 0
		if span := limit - start; span != 0 && (span > 0) == (delta > 0) {
			n = (span + delta - sign(delta)) / delta // ceil for either sign
		}
		if n > foldLimit || !c.imp.spend(n*8) {
			return nil, fmt.Errorf("Range of %d elements is too large", n)
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(start + i*delta)
		}
		t, _ := tensor.FromI64(tensor.Shape{n}, out)
		if dt == tensor.I64 {
			return c.g.Constant(t), nil
		}
		return c.g.Cast(c.g.Constant(t), dt), nil
	}
	start, _ := c.scalar(0)
	limit, _ := c.scalar(1)
	delta, _ := c.scalar(2)
	if delta == 0 {
		return nil, fmt.Errorf("delta is 0")
	}
	n := math.Ceil((limit - start) / delta)
	if !(n >= 0) { // NaN too
		n = 0
	}
	if n > foldLimit || !c.imp.spend(int(n)*dt.Size()) {
		return nil, fmt.Errorf("Range of %v elements is too large", n)
	}
	vals := make([]float64, int(n))
	for i := range vals {
		vals[i] = start + float64(i)*delta
	}
	t, err := tensor.FromFloat64s(dt, tensor.Shape{len(vals)}, vals)
	if err != nil {
		return nil, err
	}
	return c.g.Constant(t), nil
}

func sign(v int) int {
	if v < 0 {
		return -1
	}
	return 1
}
