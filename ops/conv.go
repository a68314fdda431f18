package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	Register(Entry{Op: graph.OpConv2D, DTypes: nativeFloats, Reference: prepareConv2D, Tol: 1e-5})
	Register(Entry{Op: graph.OpMaxPool2D, DTypes: nativeFloats, Reference: preparePool(true), Tol: 0})
	Register(Entry{Op: graph.OpAvgPool2D, DTypes: nativeFloats, Reference: preparePool(false), Tol: 1e-6})
	Register(Entry{Op: graph.OpGlobalAvgPool, DTypes: nativeFloats, Reference: prepareGlobalAvgPool, Tol: 1e-5})
}

// window is the geometry of a 2-D sliding window over NCHW data.
type window struct {
	n, c, h, w     int // input
	oh, ow         int // output spatial dims
	kh, kw         int
	sh, sw, dh, dw int
	pt, pl         int // top and left padding; bottom and right only shape oh, ow
}

// newWindow reads the normalised window attributes, checking what the
// loops rely on, and the output spatial dims from the node's shape.
func newWindow(x, out tensor.Shape, kh, kw int, at graph.Attrs) (window, error) {
	if x.Rank() != 4 || out.Rank() != 4 {
		return window{}, fmt.Errorf("input %v and result %v must be 4-D (NCHW)", x, out)
	}
	if len(at.Strides) != 2 || len(at.Pads) != 4 || len(at.Dilations) != 2 {
		return window{}, fmt.Errorf("attributes not normalised: strides %v, pads %v, dilations %v", at.Strides, at.Pads, at.Dilations)
	}
	w := window{n: x[0], c: x[1], h: x[2], w: x[3], oh: out[2], ow: out[3], kh: kh, kw: kw,
		sh: at.Strides[0], sw: at.Strides[1], dh: at.Dilations[0], dw: at.Dilations[1], pt: at.Pads[0], pl: at.Pads[1]}
	for i, d := range [...]int{w.sh, w.sw, w.dh, w.dw} {
		if d < 1 {
			return window{}, fmt.Errorf("stride or dilation %d is %d, must be >= 1", i, d)
		}
	}
	for i, pad := range at.Pads {
		if pad < 0 {
			return window{}, fmt.Errorf("pad %d is negative (%d)", i, pad)
		}
	}
	if out[0] != x[0] || w.oh != slides(x[2]+at.Pads[0]+at.Pads[2], kh, w.sh, w.dh) ||
		w.ow != slides(x[3]+at.Pads[1]+at.Pads[3], kw, w.sw, w.dw) {
		return window{}, fmt.Errorf("result %v does not match input %v under pads %v", out, x, at.Pads)
	}
	return w, nil
}

// slides is how many positions a dilated window of k cells takes in a
// padded extent (floor mode, as graph's shape inference), or -1 when it
// does not fit at all.
func slides(padded, k, stride, dil int) int {
	n := padded - (dil*(k-1) + 1)
	if n < 0 {
		return -1
	}
	return n/stride + 1
}

type convPlan struct {
	window
	m, cpg, mpg int // output channels, input and output channels per group
	bias        bool
}

func prepareConv2D(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 2, 3, 3)
	if err != nil {
		return nil, err
	}
	p, err := newConvPlan(nd)
	if err != nil {
		return nil, err
	}
	p.bias = len(nd.Inputs) == 3
	if p.bias && !nd.Inputs[2].Shape.Equal(tensor.Shape{p.m}) {
		return nil, fmt.Errorf("bias %v must be [%d]", nd.Inputs[2].Shape, p.m)
	}
	return bindFloat(nd, dt, p, runConv2D[float32, float64], runConv2D[float64, float64]), nil
}

// newConvPlan reads the geometry of a 2-D convolution of the node's
// first two inputs (Conv2D, ConvInteger); the plan has no bias.
func newConvPlan(nd *graph.Node) (*convPlan, error) {
	return convPlanFor(nd, nd.Inputs[0].Shape, nd.Inputs[1].Shape)
}

// convPlanFor is newConvPlan for an input x and weight wt that are not the
// node's first two inputs (QDQConv).
func convPlanFor(nd *graph.Node, x, wt tensor.Shape) (*convPlan, error) {
	if wt.Rank() != 4 {
		return nil, fmt.Errorf("weight %v must be 4-D", wt)
	}
	win, err := newWindow(x, nd.Shape, wt[2], wt[3], nd.Attrs)
	if err != nil {
		return nil, err
	}
	g := nd.Attrs.Groups
	if g < 1 || x[1]%g != 0 || wt[0]%g != 0 || wt[1] != x[1]/g || nd.Shape[1] != wt[0] {
		return nil, fmt.Errorf("groups %d do not fit input %v, weight %v, result %v", g, x, wt, nd.Shape)
	}
	return &convPlan{window: win, m: wt[0], cpg: x[1] / g, mpg: wt[0] / g}, nil
}

// runConv2D is the direct definition: every output cell sums its group's
// input channels over the dilated window. Cells in the padding are zeros
// that the weights multiply, as ONNX defines padding and as ONNX Runtime
// and PyTorch (im2col) compute it: a NaN or infinite weight that meets
// only padding still makes the output NaN (0·NaN, 0·Inf), as every fast
// kernel does. The sum accumulates in A: float64 for the float kernels,
// int32 (wrapping) for ConvInteger's.
func runConv2D[T float32 | float64 | int32, A float64 | int32](p *convPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, w, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
	var bias []T
	if p.bias {
		bias = tensor.Elems[T](ins[2].Data)
	}
	i := 0 // output index, in NCHW order
	for b := range p.n {
		for m := range p.m {
			c0 := m / p.mpg * p.cpg // first input channel of m's group
			for oy := range p.oh {
				for ox := range p.ow {
					var s A
					if p.bias {
						s = A(bias[m])
					}
					for c := range p.cpg {
						xc := x[((b*p.c)+c0+c)*p.h*p.w:]
						wc := w[(m*p.cpg+c)*p.kh*p.kw:]
						for ky := range p.kh {
							iy := oy*p.sh - p.pt + ky*p.dh
							for kx := range p.kw {
								ix := ox*p.sw - p.pl + kx*p.dw
								var xv A // a padding cell: a zero the weight multiplies
								if iy >= 0 && iy < p.h && ix >= 0 && ix < p.w {
									xv = A(xc[iy*p.w+ix])
								}
								s += xv * A(wc[ky*p.kw+kx])
							}
						}
					}
					y[i] = T(s)
					i++
				}
			}
		}
	}
}

type poolPlan struct {
	window
	max      bool
	countPad bool // AvgPool: divide by kh*kw rather than the real cells
}

func preparePool(isMax bool) Prepare {
	return func(nd *graph.Node) (Kernel, error) {
		dt, err := computeDType(nd, 1, 1, 1)
		if err != nil {
			return nil, err
		}
		at := nd.Attrs
		if len(at.Kernel) != 2 || at.Kernel[0] < 1 || at.Kernel[1] < 1 {
			return nil, fmt.Errorf("kernel %v must be 2 values >= 1", at.Kernel)
		}
		win, err := newWindow(nd.Inputs[0].Shape, nd.Shape, at.Kernel[0], at.Kernel[1], at)
		if err != nil {
			return nil, err
		}
		if win.dh != 1 || win.dw != 1 || nd.Shape[1] != win.c {
			return nil, fmt.Errorf("pooling needs dilation 1 and the input's channels, got %v for %v", at.Dilations, nd.Shape)
		}
		p := &poolPlan{window: win, max: isMax, countPad: at.CountPad}
		return bindFloat(nd, dt, p, runPool[float32], runPool[float64]), nil
	}
}

// runPool takes the max or the mean of each window's real cells. Padding
// is never a candidate for the max; for the mean it only adds to the
// divisor when countPad. A window with no real cell (possible only for an
// input with an empty spatial dim) gives -Inf for max, the identity of
// max, and NaN (0/0) for a mean without countPad, as numpy's mean of
// nothing.
func runPool[T float32 | float64](p *poolPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	i := 0
	for plane := range p.n * p.c {
		xp := x[plane*p.h*p.w:]
		for oy := range p.oh {
			y0, y1 := max(oy*p.sh-p.pt, 0), min(oy*p.sh-p.pt+p.kh, p.h)
			for ox := range p.ow {
				x0, x1 := max(ox*p.sw-p.pl, 0), min(ox*p.sw-p.pl+p.kw, p.w)
				best, sum := math.Inf(-1), 0.0
				for iy := y0; iy < y1; iy++ {
					for ix := x0; ix < x1; ix++ {
						v := float64(xp[iy*p.w+ix])
						best = max(best, v) // NaN wins: the builtin propagates it
						sum += v
					}
				}
				switch {
				case p.max:
					y[i] = T(best)
				case p.countPad:
					y[i] = T(sum / float64(p.kh*p.kw))
				default:
					y[i] = T(sum / float64(max(y1-y0, 0)*max(x1-x0, 0)))
				}
				i++
			}
		}
	}
}

type globalPoolPlan struct{ planes, size int }

func prepareGlobalAvgPool(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 1, 1, 1)
	if err != nil {
		return nil, err
	}
	x := nd.Inputs[0].Shape
	if x.Rank() < 3 {
		return nil, fmt.Errorf("input %v must be [N, C, spatial...]", x)
	}
	want := tensor.Shape{x[0], x[1]}
	for range x[2:] {
		want = append(want, 1)
	}
	if !nd.Shape.Equal(want) {
		return nil, fmt.Errorf("result %v, want %v", nd.Shape, want)
	}
	p := &globalPoolPlan{planes: x[0] * x[1], size: x[2:].NumElements()}
	return bindFloat(nd, dt, p, runGlobalAvgPool[float32], runGlobalAvgPool[float64]), nil
}

// runGlobalAvgPool: an empty spatial extent gives NaN (0/0), as numpy.
func runGlobalAvgPool[T float32 | float64](p *globalPoolPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	for i := range p.planes {
		var s float64
		for _, v := range x[i*p.size : (i+1)*p.size] {
			s += float64(v)
		}
		y[i] = T(s / float64(p.size))
	}
}
