package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	register("Reshape", 5, one(mapReshape))
	register("Transpose", 1, one(mapTranspose))
	register("Concat", 4, one(mapConcat))
	register("Split", 2, mapSplit)
	register("Slice", 10, one(mapSlice))
	register("Squeeze", 1, one(mapSqueeze))
	register("Unsqueeze", 1, one(mapUnsqueeze))
	register("Flatten", 1, one(mapFlatten))
	register("Expand", 8, one(mapExpand))
	register("Tile", 6, one(mapTile))
	register("Pad", 11, one(mapPad))
	register("Gather", 1, one(mapGather))
}

// mapReshape resolves ONNX's target: 0 copies the input's dim at that
// position (unless allowzero, where it is a real 0) and -1 is inferred.
func mapReshape(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.ints(1, "shape")
	if err != nil {
		return nil, err
	}
	allowZero, err := c.attrBool("allowzero", false)
	if err != nil {
		return nil, err
	}
	for i, d := range dims {
		if d == 0 && !allowZero {
			if i >= x.Shape.Rank() {
				return nil, fmt.Errorf("shape %v copies dim %d of the rank-%d input", dims, i, x.Shape.Rank())
			}
			dims[i] = x.Shape[i]
		}
	}
	return c.g.Reshape(x, dims...), nil
}

func mapTranspose(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	perm, _, err := c.attrInts("perm")
	if err != nil {
		return nil, err
	}
	return c.g.Transpose(x, perm...), nil
}

func mapConcat(c *ctx) (*graph.Node, error) {
	if _, ok := c.attrs["axis"]; !ok {
		return nil, fmt.Errorf("missing axis")
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, err
	}
	var xs []*graph.Node
	for i := range c.ins {
		if c.has(i) {
			xs = append(xs, c.in(i))
		}
	}
	return c.g.Concat(int(a), xs...), nil
}

// mapSplit: sizes from the 'split' attribute (before opset 13) or input
// (from 13); otherwise equal pieces, one per output (from opset 18 the
// num_outputs attribute, where the last piece may be smaller).
func mapSplit(c *ctx) ([]*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, err
	}
	ax, err := axis(int(a), x.Shape.Rank())
	if err != nil {
		return nil, err
	}
	var sizes []int
	if c.opset < 13 {
		sizes, _, err = c.attrInts("split")
	} else if c.has(1) {
		sizes, err = c.ints(1, "split")
	}
	if err != nil {
		return nil, err
	}
	if len(sizes) == 0 {
		n := len(c.n.Outputs)
		num, err := c.attrInt("num_outputs", int64(n))
		if err != nil {
			return nil, err
		}
		if num != int64(n) || n < 1 {
			return nil, fmt.Errorf("num_outputs %d for %d outputs", num, n)
		}
		each := (x.Shape[ax] + n - 1) / n
		for rest := x.Shape[ax]; len(sizes) < n; rest -= min(each, rest) {
			sizes = append(sizes, min(each, rest))
		}
	}
	if len(sizes) != len(c.n.Outputs) {
		return nil, fmt.Errorf("%d split sizes for %d outputs", len(sizes), len(c.n.Outputs))
	}
	return c.g.Split(x, ax, sizes...), nil
}

func mapSlice(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	var sp graph.SliceSpec
	if sp.Starts, err = c.ints(1, "starts"); err != nil {
		return nil, err
	}
	if sp.Ends, err = c.ints(2, "ends"); err != nil {
		return nil, err
	}
	if c.has(3) {
		if sp.Axes, err = c.ints(3, "axes"); err != nil {
			return nil, err
		}
	}
	if c.has(4) {
		if sp.Steps, err = c.ints(4, "steps"); err != nil {
			return nil, err
		}
	}
	return c.g.Slice(x, sp), nil
}

// axesArg reads the axes of Squeeze and Unsqueeze: an attribute before
// opset 13, an input from it.
func axesArg(c *ctx) ([]int, bool, error) {
	if c.opset >= 13 {
		if !c.has(1) {
			return nil, false, nil
		}
		a, err := c.ints(1, "axes")
		return a, true, err
	}
	return c.attrInts("axes")
}

func mapSqueeze(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	axes, _, err := axesArg(c)
	if err != nil {
		return nil, err
	}
	return c.g.Squeeze(x, axes...), nil
}

func mapUnsqueeze(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	axes, _, err := axesArg(c)
	if err != nil {
		return nil, err
	}
	return c.g.Unsqueeze(x, axes...), nil
}

func mapFlatten(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	a, err := c.attrInt("axis", 1)
	if err != nil {
		return nil, err
	}
	return c.g.Flatten(x, int(a)), nil
}

func mapExpand(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.ints(1, "shape")
	if err != nil {
		return nil, err
	}
	for _, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("shape %v has a negative dim", dims)
		}
	}
	return c.g.Expand(x, dims...), nil
}

func mapTile(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	reps, err := c.ints(1, "repeats")
	if err != nil {
		return nil, err
	}
	return c.g.Tile(x, reps...), nil
}

// mapPad: ONNX pads are [begins..., ends...] over all axes (or over the
// 'axes' input from opset 18). Negative pads crop, done with a Slice.
func mapPad(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	mode, err := c.attrString("mode", "constant")
	if err != nil {
		return nil, err
	}
	var m graph.PadMode
	switch mode {
	case "constant":
		m = graph.PadConstant
	case "reflect":
		m = graph.PadReflect
	case "edge":
		m = graph.PadEdge
	default:
		return nil, unsupportedf("mode=%q", mode)
	}
	raw, err := c.ints(1, "pads")
	if err != nil {
		return nil, err
	}
	val := 0.0
	if c.has(2) {
		v, ok := c.scalar(2)
		if !ok {
			return nil, unsupportedf("a constant_value computed at run time")
		}
		val = v
	}
	r := x.Shape.Rank()
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.has(3) {
		if axes, err = c.ints(3, "axes"); err != nil {
			return nil, err
		}
	}
	if len(raw) != 2*len(axes) {
		return nil, fmt.Errorf("pads %v need 2 values per axis %v", raw, axes)
	}
	pads := make([]int, 2*r)
	var crop graph.SliceSpec
	for i, a := range axes {
		ax, err := axis(a, r)
		if err != nil {
			return nil, err
		}
		lo, hi := raw[i], raw[len(axes)+i]
		if lo < 0 || hi < 0 {
			crop.Axes = append(crop.Axes, ax)
			crop.Starts = append(crop.Starts, max(0, -lo))
			crop.Ends = append(crop.Ends, x.Shape[ax]-max(0, -hi))
		}
		pads[ax], pads[r+ax] = max(lo, 0), max(hi, 0)
	}
	if crop.Axes != nil {
		x = c.g.Slice(x, crop)
	}
	return c.g.Pad(x, pads, m, float32(val)), nil
}

func mapGather(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	idx, err := c.need(1)
	if err != nil {
		return nil, err
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, err
	}
	if idx.DType != tensor.I32 && idx.DType != tensor.I64 {
		return nil, fmt.Errorf("indices must be int32 or int64, got %v", idx.DType)
	}
	return c.g.Gather(x, idx, int(a)), nil
}
