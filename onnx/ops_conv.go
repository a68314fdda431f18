package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
)

func init() {
	register("Conv", 1, one(mapConv))
	register("GlobalAveragePool", 1, one(func(c *ctx) (*graph.Node, error) {
		x, err := c.need(0)
		if err != nil {
			return nil, err
		}
		return c.apply(graph.OpGlobalAvgPool, graph.Attrs{}, x)
	}))
	register("GlobalMaxPool", 1, one(func(c *ctx) (*graph.Node, error) {
		x, err := c.need(0)
		if err != nil {
			return nil, err
		}
		if x.Shape.Rank() < 3 {
			return nil, fmt.Errorf("input %v needs rank >= 3", x.Shape)
		}
		axes := make([]int, 0, x.Shape.Rank()-2)
		for i := 2; i < x.Shape.Rank(); i++ {
			axes = append(axes, i)
		}
		return c.apply(graph.OpReduceMax, graph.Attrs{Axes: axes, KeepDims: true}, x)
	}))
}

// window holds the attributes shared by Conv and the pools, in kiln's
// 2-D form: 1-D ops are run as 2-D ones over a height of 1.
type window struct {
	oneD      bool
	kernel    []int // [kh, kw]
	strides   []int
	dilations []int
	pads      []int // [top, left, bottom, right]
}

// readWindow reads kernel_shape (or takes kernel, from the weights),
// strides, dilations, pads and auto_pad for a rank-r input (NC + spatial)
// in kiln's 2-D form.
func readWindow(c *ctx, r int, kernel []int) (window, error) {
	if sp := r - 2; sp != 1 && sp != 2 {
		return window{}, unsupportedf("%d spatial dims (kiln has 1-D and 2-D windows)", max(sp, 0))
	}
	w, err := readWindowND(c, r, kernel)
	if err != nil {
		return w, err
	}
	return w.as2D(), nil
}

// readWindowND is readWindow for 1 to 3 spatial axes, one value per axis
// (pads: begins, then ends), as the N-D ops take them.
func readWindowND(c *ctx, r int, kernel []int) (window, error) {
	sp := r - 2
	if sp < 1 || sp > 3 {
		return window{}, unsupportedf("%d spatial dims (kiln has 1-D to 3-D windows)", max(sp, 0))
	}
	ks, ok, err := c.attrInts("kernel_shape")
	if err != nil {
		return window{}, err
	}
	switch {
	case ok && kernel != nil && !equalInts(ks, kernel):
		return window{}, fmt.Errorf("kernel_shape %v disagrees with the weights %v", ks, kernel)
	case ok:
		kernel = ks
	case kernel == nil:
		return window{}, fmt.Errorf("missing kernel_shape")
	}
	list := func(name string, def int, n int) ([]int, error) {
		v, ok, err := c.attrInts(name)
		if err != nil || !ok {
			out := make([]int, n)
			for i := range out {
				out[i] = def
			}
			return out, err
		}
		if len(v) != n {
			return nil, fmt.Errorf("%s %v needs %d values", name, v, n)
		}
		return v, nil
	}
	var w window
	if len(kernel) != sp {
		return w, fmt.Errorf("kernel %v for %d spatial dims", kernel, sp)
	}
	if w.strides, err = list("strides", 1, sp); err != nil {
		return w, err
	}
	if w.dilations, err = list("dilations", 1, sp); err != nil {
		return w, err
	}
	pads, err := list("pads", 0, 2*sp)
	if err != nil {
		return w, err
	}
	autoPad, err := c.attrString("auto_pad", "NOTSET")
	if err != nil {
		return w, err
	}
	in := c.shape(0)[2:]
	for i := range sp {
		if kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || pads[i] < 0 || pads[sp+i] < 0 {
			return w, fmt.Errorf("kernel %v, strides %v and dilations %v must be at least 1, pads %v at least 0", kernel, w.strides, w.dilations, pads)
		}
		// Bounds that keep the window arithmetic far from overflow.
		if kernel[i] > 1<<24 || w.strides[i] > 1<<24 || w.dilations[i] > 1<<24 || pads[i] > 1<<24 || pads[sp+i] > 1<<24 {
			return w, fmt.Errorf("kernel %v, strides %v, dilations %v or pads %v too large", kernel, w.strides, w.dilations, pads)
		}
		switch autoPad {
		case "NOTSET":
		case "VALID":
			pads[i], pads[sp+i] = 0, 0
		case "SAME_UPPER", "SAME_LOWER":
			// Output ceil(in/stride); the odd pad goes at the end (UPPER)
			// or the beginning (LOWER).
			out := (in[i] + w.strides[i] - 1) / w.strides[i]
			span := (kernel[i]-1)*w.dilations[i] + 1
			total := max(0, (out-1)*w.strides[i]+span-in[i])
			lo := total / 2
			if autoPad == "SAME_LOWER" {
				lo = total - total/2
			}
			pads[i], pads[sp+i] = lo, total-lo
		default:
			return w, unsupportedf("auto_pad=%q", autoPad)
		}
	}
	w.kernel, w.pads = kernel, pads
	return w, nil
}

// as2D is an N-D window of 1 or 2 spatial axes in kiln's 2-D form: a 1-D
// window gets height 1, no padding and stride 1 on the added axis.
func (w window) as2D() window {
	if len(w.kernel) != 1 {
		return w
	}
	return window{oneD: true, kernel: []int{1, w.kernel[0]}, strides: []int{1, w.strides[0]},
		dilations: []int{1, w.dilations[0]}, pads: []int{0, w.pads[0], 0, w.pads[1]}}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// to2D adds a height-1 axis for 1-D windows; from2D removes it.
func (w window) to2D(c *ctx, x *graph.Node) *graph.Node {
	if w.oneD {
		return c.g.Unsqueeze(x, 2)
	}
	return x
}

func (w window) from2D(c *ctx, y *graph.Node) *graph.Node {
	if w.oneD {
		return c.g.Squeeze(y, 2)
	}
	return y
}

func mapConv(c *ctx) (*graph.Node, error) {
	x, wt, w, at, err := convOperands(c, 0, 1)
	if err != nil {
		return nil, err
	}
	ins := []*graph.Node{w.to2D(c, x), w.to2D(c, wt)}
	if c.has(2) {
		ins = append(ins, c.in(2))
	}
	y, err := c.apply(graph.OpConv2D, at, ins...)
	if err != nil {
		return nil, err
	}
	return w.from2D(c, y), nil
}

// convOperands reads a convolution's input xi and weights wi (Conv,
// ConvInteger, QLinearConv) and its window and group attributes in
// kiln's 2-D form.
func convOperands(c *ctx, xi, wi int) (x, wt *graph.Node, w window, at graph.Attrs, err error) {
	if x, err = c.need(xi); err != nil {
		return
	}
	if wt, err = c.need(wi); err != nil {
		return
	}
	if wt.Shape.Rank() != x.Shape.Rank() || x.Shape.Rank() < 3 {
		err = fmt.Errorf("weights %v do not match input %v (both [N, C, spatial...])", wt.Shape, x.Shape)
		return
	}
	if w, err = readWindow(c, x.Shape.Rank(), wt.Shape[2:]); err != nil {
		return
	}
	group, err := c.attrInt("group", 1)
	if err != nil {
		return
	}
	if group < 1 {
		err = fmt.Errorf("group %d, want at least 1", group)
		return
	}
	at = graph.Attrs{Strides: w.strides, Pads: w.pads, Dilations: w.dilations, Groups: int(group)}
	return
}
