package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	// Tol: the fast path sums a tap's products in float32.
	Register(Entry{Op: graph.OpResize, DTypes: nativeFloats, Reference: prepareResize, Tol: 1e-6})
}

// resizeAxis is one axis of a Resize, worked out at plan time: output
// index o reads input indices idx[o*taps:(o+1)*taps] with weights
// w[o*taps:(o+1)*taps] (indices already clamped to the input, as ONNX's
// edge padding makes them), or, where outside[o], is the extrapolation
// value. Every kernel reads these tables, so no kernel divides or rounds
// per element.
type resizeAxis struct {
	in, out  int
	taps     int
	idx      []int32
	w        []float64
	outside  []bool // nil when no output is outside (tf_crop_and_resize only)
	identity bool   // out == in and output o reads input o with weight 1
}

// resizeTaps computes the taps of axis ax of spec for an input length in.
func resizeTaps(s *graph.ResizeSpec, ax, in int) resizeAxis {
	out := s.Sizes[ax]
	a := resizeAxis{in: in, out: out}
	switch s.Mode {
	case graph.ResizeNearest:
		a.taps = 1
	case graph.ResizeLinear:
		a.taps = 2
	default:
		a.taps = 4
	}
	a.idx = make([]int32, out*a.taps)
	a.w = make([]float64, out*a.taps)
	scale := s.Scales[ax]
	// The resized length the coordinate formulas divide by: in·scale as
	// ONNX's reference computes it (not rounded to the output size), or
	// exactly the output size when the scale came from it.
	length := float64(in) * scale
	if math.Abs(length-float64(out)) <= 1e-9*length {
		length = float64(out)
	}
	a.identity = out == in
	for o := range out {
		x, outside := resizeCoord(s, ax, in, length, float64(o))
		if outside {
			if a.outside == nil {
				a.outside = make([]bool, out)
			}
			a.outside[o], a.identity = true, false
			continue
		}
		idx, w := a.idx[o*a.taps:(o+1)*a.taps], a.w[o*a.taps:(o+1)*a.taps]
		fillTaps(s, x, in, idx, w)
		if a.taps == 1 && idx[0] != int32(o) || a.taps > 1 && !oneHot(idx, w, o) {
			a.identity = false
		}
	}
	if a.identity && a.taps > 1 {
		// An axis that copies through reads one sample per output: its
		// zero-weight neighbours (another channel, another image) must
		// not turn an infinity there into NaN here.
		a.taps = 1
		for o := range out {
			a.idx[o], a.w[o] = int32(o), 1
		}
		a.idx, a.w = a.idx[:out], a.w[:out]
	}
	return a
}

// oneHot reports whether taps read input o alone, with weight 1.
func oneHot(idx []int32, w []float64, o int) bool {
	for i := range idx {
		if w[i] != 0 && (idx[i] != int32(o) || w[i] != 1) {
			return false
		}
	}
	return true
}

// resizeCoord maps output coordinate x of axis ax to the input (ONNX's
// coordinate_transformation_mode), and reports tf_crop_and_resize
// coordinates that fall outside the input.
func resizeCoord(s *graph.ResizeSpec, ax, in int, length, x float64) (float64, bool) {
	scale := s.Scales[ax]
	switch s.Coord {
	case graph.CoordPytorchHalfPixel:
		if length == 1 {
			return 0, false
		}
		return (x+0.5)/scale - 0.5, false
	case graph.CoordAlignCorners:
		if length == 1 {
			return 0, false
		}
		return x * float64(in-1) / (length - 1), false
	case graph.CoordAsymmetric:
		return x / scale, false
	case graph.CoordTFHalfPixelForNN:
		return (x + 0.5) / scale, false
	case graph.CoordTFCropAndResize:
		r := len(s.Sizes)
		lo, hi := s.ROI[ax], s.ROI[r+ax]
		var v float64
		if length == 1 {
			v = (hi - lo) * float64(in-1) / 2
		} else {
			v = x * (hi - lo) * float64(in-1) / (length - 1)
		}
		v += lo * float64(in-1)
		return v, v < 0 || v > float64(in-1)
	}
	return (x+0.5)/scale - 0.5, false // half_pixel
}

// fillTaps writes the taps of input coordinate x. Linear and cubic read
// the samples around x: floor(x) and the next for linear, one more on
// each side for cubic, with the fraction t = x - floor(x) in (0, 1] (an
// integral x counts as the end of the interval before it, where its
// sample gets the whole weight). Nearest rounds by spec.Nearest; an
// integral x is itself.
func fillTaps(s *graph.ResizeSpec, x float64, in int, idx []int32, w []float64) {
	x0 := math.Floor(x)
	t := x - x0
	if t == 0 {
		x0, t = x0-1, 1
	}
	clamp := func(i float64) int32 { return int32(max(0, min(float64(in-1), i))) }
	switch s.Mode {
	case graph.ResizeNearest:
		up := false // take x0+1 rather than x0
		switch s.Nearest {
		case graph.NearestRoundPreferFloor:
			up = t > 0.5
		case graph.NearestRoundPreferCeil:
			up = t >= 0.5
		case graph.NearestFloor:
			up = t == 1
		case graph.NearestCeil:
			up = true
		}
		if up {
			idx[0] = clamp(x0 + 1)
		} else {
			idx[0] = clamp(x0)
		}
		w[0] = 1
		return
	case graph.ResizeLinear:
		idx[0], idx[1] = clamp(x0), clamp(x0+1)
		w[0], w[1] = 1-t, t
		return
	}
	a := s.CubicA
	// Keys' kernel at distances 1+t, t, 1-t and 2-t.
	far := func(d float64) float64 { return ((a*d-5*a)*d+8*a)*d - 4*a } // 1 <= d < 2
	near := func(d float64) float64 { return ((a+2)*d-(a+3))*d*d + 1 }  // 0 <= d <= 1
	w[0], w[1], w[2], w[3] = far(1+t), near(t), near(1-t), far(2-t)
	sum := 0.0
	for k := range 4 {
		i := x0 - 1 + float64(k)
		if s.ExcludeOutside && (i < 0 || i > float64(in-1)) {
			w[k] = 0
		}
		sum += w[k]
		idx[k] = clamp(i)
	}
	if s.ExcludeOutside {
		for k := range w {
			w[k] /= sum
		}
	}
}

type resizePlan struct {
	axes   []resizeAxis
	shape  tensor.Shape // input
	extrap float64
}

func newResizePlan(nd *graph.Node) (*resizePlan, error) {
	s := nd.Attrs.Resize
	x := nd.Inputs[0].Shape
	if s == nil || len(s.Sizes) != x.Rank() || !nd.Shape.Equal(tensor.Shape(s.Sizes)) {
		return nil, fmt.Errorf("resize spec does not fit input %v and result %v", x, nd.Shape)
	}
	p := &resizePlan{shape: x, extrap: s.Extrapolation}
	for ax := range x {
		p.axes = append(p.axes, resizeTaps(s, ax, x[ax]))
	}
	return p, nil
}

func prepareResize(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 1, 1, 1)
	if err != nil {
		return nil, err
	}
	p, err := newResizePlan(nd)
	if err != nil {
		return nil, err
	}
	return bindFloat(nd, dt, p, runResize[float32], runResize[float64]), nil
}

// runResize is the separable definition: each output element is the sum,
// over every combination of one tap per axis, of the product of the taps'
// weights times the input element they address, accumulated in float64.
// An output whose coordinate on some axis lies outside the input is the
// extrapolation value (ONNX's recursion over axes interpolates that value
// with weights summing to 1, which leaves it unchanged). Every tap is
// read, zero weights included, as ONNX's reference (a dot product) and
// PyTorch do: an infinite sample beside an integral coordinate gives NaN.
// Axes that copy through (N and C of an image) read only their own
// sample (resizeTaps).
func runResize[T float32 | float64](p *resizePlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	r := len(p.axes)
	strides := p.shape.Strides()
	pos := make([]int, r) // output index
	tap := make([]int, r) // tap per axis
	for i := range y {
		outside := false
		for ax, a := range p.axes {
			outside = outside || a.outside != nil && a.outside[pos[ax]]
		}
		if outside {
			y[i] = T(p.extrap)
		} else {
			clear(tap)
			var sum float64
			for {
				wt, off := 1.0, 0
				for ax, a := range p.axes {
					k := pos[ax]*a.taps + tap[ax]
					wt *= a.w[k]
					off += int(a.idx[k]) * strides[ax]
				}
				sum += wt * float64(x[off])
				ax := r - 1
				for ; ax >= 0; ax-- {
					if tap[ax]++; tap[ax] < p.axes[ax].taps {
						break
					}
					tap[ax] = 0
				}
				if ax < 0 {
					break
				}
			}
			y[i] = T(sum)
		}
		for ax := r - 1; ax >= 0; ax-- {
			if pos[ax]++; pos[ax] < p.axes[ax].out {
				break
			}
			pos[ax] = 0
		}
	}
}
