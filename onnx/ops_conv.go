package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
)

func init() {
	register("Conv", 1, one(mapConv))
	register("MaxPool", 1, mapMaxPool)
	register("AveragePool", 1, one(mapAvgPool))
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
// strides, dilations, pads and auto_pad for a rank-r input (NC + spatial).
func readWindow(c *ctx, r int, kernel []int) (window, error) {
	sp := r - 2
	if sp != 1 && sp != 2 {
		return window{}, unsupportedf("%d spatial dims (kiln has 1-D and 2-D windows)", max(sp, 0))
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
	w := window{oneD: sp == 1}
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
	if w.oneD { // height 1, no padding, stride 1 on the added axis
		kernel = []int{1, kernel[0]}
		w.strides = []int{1, w.strides[0]}
		w.dilations = []int{1, w.dilations[0]}
		pads = []int{0, pads[0], 0, pads[1]}
	}
	w.kernel, w.pads = kernel, pads
	return w, nil
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
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	wt, err := c.need(1)
	if err != nil {
		return nil, err
	}
	if wt.Shape.Rank() != x.Shape.Rank() || x.Shape.Rank() < 3 {
		return nil, fmt.Errorf("weights %v do not match input %v (both [N, C, spatial...])", wt.Shape, x.Shape)
	}
	w, err := readWindow(c, x.Shape.Rank(), wt.Shape[2:])
	if err != nil {
		return nil, err
	}
	group, err := c.attrInt("group", 1)
	if err != nil {
		return nil, err
	}
	if group < 1 {
		return nil, fmt.Errorf("group %d, want at least 1", group)
	}
	at := graph.Attrs{Strides: w.strides, Pads: w.pads, Dilations: w.dilations, Groups: int(group)}
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

// poolWindow reads a pool's window and applies ceil_mode: when rounding
// up adds an output, the end padding grows to cover it, which is exact
// for max pooling (padding never wins); avg pooling would count it, so
// there ceil_mode is accepted only when it changes nothing.
func poolWindow(c *ctx, x *graph.Node, isMax bool) (window, error) {
	w, err := readWindow(c, x.Shape.Rank(), nil)
	if err != nil {
		return w, err
	}
	for _, d := range w.dilations {
		if d != 1 {
			return w, unsupportedf("pooling dilations %v", w.dilations)
		}
	}
	ceil, err := c.attrBool("ceil_mode", false)
	if err != nil || !ceil {
		return w, err
	}
	in := x.Shape[2:]
	if w.oneD {
		in = append([]int{1}, in...)
	}
	for i := range 2 {
		lo, hi, k, s := w.pads[i], w.pads[i+2], w.kernel[i], w.strides[i]
		span := in[i] + lo + hi - k
		if span < 0 {
			continue // the graph reports the too-small input
		}
		floor := span/s + 1
		ceilOut := (span+s-1)/s + 1
		if (ceilOut-1)*s >= in[i]+lo { // the last window must start inside
			ceilOut--
		}
		if ceilOut == floor {
			continue
		}
		if !isMax {
			return w, unsupportedf("ceil_mode=1 with AveragePool when it adds an output")
		}
		w.pads[i+2] += (ceilOut-1)*s + k - (in[i] + lo + hi)
		if w.pads[i+2] >= k {
			return w, unsupportedf("ceil_mode=1 with stride %d larger than the kernel %d", s, k)
		}
	}
	return w, nil
}

func mapMaxPool(c *ctx) ([]*graph.Node, error) {
	if c.used(1) {
		return nil, unsupportedf("the Indices output")
	}
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	w, err := poolWindow(c, x, true)
	if err != nil {
		return nil, err
	}
	y, err := c.apply(graph.OpMaxPool2D, graph.Attrs{Kernel: w.kernel, Strides: w.strides, Pads: w.pads}, w.to2D(c, x))
	if err != nil {
		return nil, err
	}
	return []*graph.Node{w.from2D(c, y)}, nil
}

func mapAvgPool(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	w, err := poolWindow(c, x, false)
	if err != nil {
		return nil, err
	}
	countPad, err := c.attrBool("count_include_pad", false)
	if err != nil {
		return nil, err
	}
	at := graph.Attrs{Kernel: w.kernel, Strides: w.strides, Pads: w.pads, CountPad: countPad}
	y, err := c.apply(graph.OpAvgPool2D, at, w.to2D(c, x))
	if err != nil {
		return nil, err
	}
	return w.from2D(c, y), nil
}
