package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
)

func init() {
	register("MaxPool", 1, mapMaxPool)
	register("AveragePool", 1, one(mapAvgPool))
	register("MaxUnpool", 9, one(mapMaxUnpool))
}

// ceilPads applies ceil_mode to an N-D window over spatial dims in: where
// rounding up adds an output (its window must start inside the input or
// its begin padding), the end padding grows to cover that last window.
// Padding never wins a max and never counts in a mean without
// count_include_pad, so the grown window is exact there. It reports
// whether any pad grew.
func ceilPads(in []int, w *window) bool {
	sp, grew := len(in), false
	for i := range sp {
		lo, hi, s := w.pads[i], w.pads[sp+i], w.strides[i]
		span := (w.kernel[i]-1)*w.dilations[i] + 1
		n := in[i] + lo + hi - span
		if n < 0 {
			continue // the graph reports the too-small input
		}
		out := (n+s-1)/s + 1
		if (out-1)*s >= in[i]+lo {
			out--
		}
		if extra := (out-1)*s + span - (in[i] + lo + hi); extra > 0 {
			w.pads[sp+i] += extra
			grew = true
		}
	}
	return grew
}

// fits2D reports whether a pool window runs as kiln's 2-D pool op, whose
// fast kernels take 1 or 2 spatial axes without dilation and with pads
// smaller than the kernel, on dtypes op has a kernel for.
func fits2D(c *ctx, op graph.Op, x *graph.Node, w window) bool {
	sp := len(w.kernel)
	if sp > 2 || c.supports(op, x.DType) != nil {
		return false
	}
	for i := range sp {
		if w.dilations[i] != 1 || w.pads[i] >= w.kernel[i] || w.pads[sp+i] >= w.kernel[i] {
			return false
		}
	}
	return true
}

// poolWindowND reads a pool's N-D window with ceil_mode applied, and
// reports whether ceil_mode grew a pad.
func poolWindowND(c *ctx, x *graph.Node) (window, bool, error) {
	w, err := readWindowND(c, x.Shape.Rank(), nil)
	if err != nil {
		return w, false, err
	}
	ceil, err := c.attrBool("ceil_mode", false)
	if err != nil || !ceil {
		return w, false, err
	}
	return w, ceilPads(x.Shape[2:], &w), nil
}

// mapMaxPool: the 2-D pool op where it fits and the Indices output is not
// read; otherwise MaxPoolND, whose output 1 is Indices (storage_order 1:
// spatial offsets column-major). Only the outputs the model reads are
// built.
func mapMaxPool(c *ctx) ([]*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	order, err := c.attrInt("storage_order", 0)
	if err != nil {
		return nil, err
	}
	if order != 0 && order != 1 {
		return nil, fmt.Errorf("storage_order %d, want 0 (row-major) or 1 (column-major)", order)
	}
	w, _, err := poolWindowND(c, x)
	if err != nil {
		return nil, err
	}
	if !c.used(1) && fits2D(c, graph.OpMaxPool2D, x, w) {
		w = w.as2D()
		y, err := c.apply(graph.OpMaxPool2D, graph.Attrs{Kernel: w.kernel, Strides: w.strides, Pads: w.pads}, w.to2D(c, x))
		if err != nil {
			return nil, err
		}
		return []*graph.Node{w.from2D(c, y)}, nil
	}
	if err := c.supports(graph.OpMaxPoolND, x.DType); err != nil {
		return nil, err
	}
	v, i := c.g.MaxPoolND(x, graph.PoolNDOpts{Kernel: w.kernel, Strides: w.strides, Pads: w.pads, Dilations: w.dilations, ColMajor: order == 1})
	if _, err := built(c, v); err != nil {
		return nil, err
	}
	outs := []*graph.Node{v, i}
	for o := range outs {
		if !c.used(o) {
			outs[o] = nil
		}
	}
	return outs, nil
}

// mapAvgPool: the 2-D pool op where it fits, else AvgPoolND. A window
// ceil_mode grows is exact without count_include_pad only: with it, ONNX
// counts the cells past the input that the begin padding and the
// original end padding cover, but not those ceil_mode adds.
func mapAvgPool(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	countPad, err := c.attrBool("count_include_pad", false)
	if err != nil {
		return nil, err
	}
	w, grew, err := poolWindowND(c, x)
	if err != nil {
		return nil, err
	}
	if grew && countPad {
		return nil, unsupportedf("ceil_mode=1 with count_include_pad=1 when it adds an output")
	}
	if fits2D(c, graph.OpAvgPool2D, x, w) {
		w = w.as2D()
		at := graph.Attrs{Kernel: w.kernel, Strides: w.strides, Pads: w.pads, CountPad: countPad}
		y, err := c.apply(graph.OpAvgPool2D, at, w.to2D(c, x))
		if err != nil {
			return nil, err
		}
		return w.from2D(c, y), nil
	}
	at := graph.Attrs{Kernel: w.kernel, Strides: w.strides, Pads: w.pads, Dilations: w.dilations, CountPad: countPad}
	return c.apply(graph.OpAvgPoolND, at, x)
}

// mapMaxUnpool: X and its int64 Indices (as MaxPool's) scattered into
// the inferred shape, (in-1)·stride + kernel - pads per spatial axis,
// which the indices address. An output_shape input (known at import) at
// least that large adds zeros at the end of each spatial axis, as ONNX's
// reference places the inferred result at the output's start.
func mapMaxUnpool(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	idx, err := c.need(1)
	if err != nil {
		return nil, err
	}
	w, err := readWindowND(c, x.Shape.Rank(), nil)
	if err != nil {
		return nil, err
	}
	sp := len(w.kernel)
	inferred := []int{x.Shape[0], x.Shape[1]}
	for i := range sp {
		o := (x.Shape[2+i]-1)*w.strides[i] + w.kernel[i] - w.pads[i] - w.pads[sp+i]
		if o < 1 {
			return nil, fmt.Errorf("kernel_shape %v, strides %v and pads %v leave no output for input %v", w.kernel, w.strides, w.pads, x.Shape)
		}
		inferred = append(inferred, o)
	}
	var grow []int // Pad's [begins..., ends...]
	if c.has(2) {
		out, err := c.ints(2, "output_shape")
		if err != nil {
			return nil, err
		}
		if len(out) != len(inferred) {
			return nil, fmt.Errorf("output_shape %v needs %d values", out, len(inferred))
		}
		grow = make([]int, 2*len(out))
		for i, o := range out {
			if o < inferred[i] || (i < 2 && o != inferred[i]) {
				return nil, fmt.Errorf("output_shape %v must be [%d, %d, ...] and hold the inferred %v", out, x.Shape[0], x.Shape[1], inferred)
			}
			grow[len(out)+i] = o - inferred[i]
		}
	}
	if err := c.supports(graph.OpMaxUnpool, x.DType); err != nil {
		return nil, err
	}
	y, err := built(c, c.g.MaxUnpool(x, idx, inferred))
	if err != nil || grow == nil {
		return y, err
	}
	return built(c, c.g.Pad(y, grow, graph.PadConstant, 0))
}
