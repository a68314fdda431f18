package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Window is the geometry of a 2-D sliding window over NCHW data, shared
// by Conv2D and the 2-D pools: output cell (oy, ox) at tap (ky, kx)
// reads input row oy·SH − PT + ky·DH, column ox·SW − PL + kx·DW; cells
// outside [0, H)×[0, W) are padding. Bottom and right padding (and
// ONNX ceil_mode, which the importer turns into more of it) only shape
// OH and OW.
type Window struct {
	N, C, H, W     int // input
	OH, OW         int // output spatial dims
	KH, KW         int
	SH, SW, PT, PL int // strides, top and left padding
	DH, DW         int // dilations
}

// Source is the input cell output (oy, ox) reads at tap (ky, kx), and
// whether it lies inside the input (outside is padding).
func (w *Window) Source(oy, ox, ky, kx int) (iy, ix int, ok bool) {
	iy, ix = oy*w.SH-w.PT+ky*w.DH, ox*w.SW-w.PL+kx*w.DW
	return iy, ix, iy >= 0 && iy < w.H && ix >= 0 && ix < w.W
}

// Span is the input rows [y0, y1) and columns [x0, x1) an undilated
// window at (oy, ox) covers, clipped to the input: the real cells a pool
// reads (the ranges are empty when the window lies in padding only).
func (w *Window) Span(oy, ox int) (y0, y1, x0, x1 int) {
	y0, x0 = oy*w.SH-w.PT, ox*w.SW-w.PL
	return max(y0, 0), min(y0+w.KH, w.H), max(x0, 0), min(x0+w.KW, w.W)
}

// windowOf reads a conv or pool node's normalised window attributes,
// taking the window size from kh, kw.
func windowOf(name string, n *graph.Node, kh, kw int) (Window, error) {
	x, a := n.Inputs[0].Shape, n.Attrs
	if x.Rank() != 4 || n.Shape.Rank() != 4 || len(a.Strides) != 2 || len(a.Pads) != 4 || len(a.Dilations) != 2 {
		return Window{}, fmt.Errorf("%s: %v of %v with strides %v pads %v dilations %v", name, n.Op, x, a.Strides, a.Pads, a.Dilations)
	}
	w := Window{N: x[0], C: x[1], H: x[2], W: x[3], OH: n.Shape[2], OW: n.Shape[3], KH: kh, KW: kw,
		SH: a.Strides[0], SW: a.Strides[1], PT: a.Pads[0], PL: a.Pads[1], DH: a.Dilations[0], DW: a.Dilations[1]}
	if min(w.SH, w.SW, w.DH, w.DW, kh, kw) < 1 || min(w.PT, w.PL) < 0 {
		return Window{}, fmt.Errorf("%s: window %dx%d, strides %v, dilations %v, pads %v", name, kh, kw, a.Strides, a.Dilations, a.Pads)
	}
	return w, nil
}

// Conv describes Conv2D of x [N, C, H, W] with w [M, C/Groups, KH, KW],
// optionally + bias [M], then Act, + Res (laid out like out:
// FusedConv2D's epilogue) and PostAct, or then Act and a 2×2 max pool
// (Pool). The
// Window's OH and OW are the conv's, before any pooling. Operands: out,
// x, w, [bias], [res].
type Conv struct {
	Name  string
	DType tensor.DType
	Window
	M      int // output channels
	Groups int
	Bias   bool
	Act    graph.Op // graph.OpInvalid for none
	// ActAttrs are Act's attributes (Epilogue.ActAttrs: a Clip's bounds).
	ActAttrs graph.Attrs
	Res      bool
	// PostAct (Epilogue.PostAct; only with Res) is applied after + Res:
	// graph.OpInvalid for none.
	PostAct graph.Op
	// Pool (Epilogue.Pool2x2; never with Res): out [N, M, OH/2, OW/2]
	// holds the max of each 2×2 block of the conv's outputs, a NaN
	// winning, as MaxPool2D.
	Pool bool
}

// OutHW is out's spatial dims: OH×OW, or halved, rounding down, when
// Pool.
func (c *Conv) OutHW() (oh, ow int) {
	if c.Pool {
		return c.OH / 2, c.OW / 2
	}
	return c.OH, c.OW
}

// ConvOf describes a Conv2D or FusedConv2D node; grouped and depthwise
// convolutions are Groups > 1.
func ConvOf(name string, n *graph.Node) (*Conv, error) {
	if n.Op != graph.OpConv2D && n.Op != graph.OpFusedConv2D || len(n.Inputs) < 2 {
		return nil, fmt.Errorf("%s: %v is not a Conv2D", name, n.Op)
	}
	wt := n.Inputs[1].Shape
	if wt.Rank() != 4 {
		return nil, fmt.Errorf("%s: weight %v must be 4-D", name, wt)
	}
	win, err := windowOf(name, n, wt[2], wt[3])
	if err != nil {
		return nil, err
	}
	conv, err := graph.ConvShape(n) // the node's shape but for a pooled epilogue
	if err != nil || conv.Rank() != 4 {
		return nil, fmt.Errorf("%s: %v (shape %v)", name, err, conv)
	}
	win.OH, win.OW = conv[2], conv[3]
	c := &Conv{Name: name, DType: n.DType, Window: win, M: wt[0], Groups: max(n.Attrs.Groups, 1)}
	if c.C%c.Groups != 0 || c.M%c.Groups != 0 || wt[1] != c.C/c.Groups || n.Shape[1] != c.M {
		return nil, fmt.Errorf("%s: groups %d do not fit input %v, weight %v, result %v", name, c.Groups, n.Inputs[0].Shape, wt, n.Shape)
	}
	extra := len(n.Inputs) - 2
	if n.Op == graph.OpFusedConv2D {
		e := n.Attrs.Epilogue
		c.Bias, c.Act, c.Res, c.PostAct, c.Pool = e.Bias, e.Act, e.Residual, e.PostAct, e.Pool2x2
		c.ActAttrs = e.ActAttrs()
		if extra != e.Inputs() || (c.Pool && c.Res) || (c.PostAct != graph.OpInvalid && !c.Res) {
			return nil, fmt.Errorf("%s: epilogue %+v with %d extra inputs", name, e, extra)
		}
	} else {
		c.Bias = extra == 1
	}
	for _, in := range n.Inputs {
		if in.DType != n.DType {
			return nil, fmt.Errorf("%s: input %s is not %v", name, in, n.DType)
		}
	}
	return c, nil
}

// Pool describes MaxPool2D or AvgPool2D (dilation 1). Padding never wins
// a max; a mean divides by KH·KW when CountPad, else by the real cells
// of the window (Span). Operands: out, x.
type Pool struct {
	Name  string
	DType tensor.DType
	Window
	Max      bool
	CountPad bool
}

// PoolOf describes a MaxPool2D or AvgPool2D node.
func PoolOf(name string, n *graph.Node) (*Pool, error) {
	if n.Op != graph.OpMaxPool2D && n.Op != graph.OpAvgPool2D {
		return nil, fmt.Errorf("%s: %v is not a 2-D pool", name, n.Op)
	}
	if len(n.Attrs.Kernel) != 2 {
		return nil, fmt.Errorf("%s: kernel %v", name, n.Attrs.Kernel)
	}
	win, err := windowOf(name, n, n.Attrs.Kernel[0], n.Attrs.Kernel[1])
	if err != nil {
		return nil, err
	}
	if win.DH != 1 || win.DW != 1 || n.Shape[1] != win.C || n.Shape[0] != win.N {
		return nil, fmt.Errorf("%s: pooling %v with dilations %v to %v", name, n.Inputs[0].Shape, n.Attrs.Dilations, n.Shape)
	}
	return &Pool{Name: name, DType: n.DType, Window: win, Max: n.Op == graph.OpMaxPool2D, CountPad: n.Attrs.CountPad}, nil
}

// Divisor is the count a mean over the window at (oy, ox) divides by.
func (p *Pool) Divisor(oy, ox int) int {
	if p.CountPad {
		return p.KH * p.KW
	}
	y0, y1, x0, x1 := p.Span(oy, ox)
	return max(y1-y0, 0) * max(x1-x0, 0)
}
