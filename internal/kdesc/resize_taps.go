package kdesc

import (
	"math"

	"github.com/kilnml/kiln/graph"
)

// ResizeAxis is one axis of a Resize, worked out at plan time: output
// index o reads input indices Idx[o*Taps:(o+1)*Taps] with weights
// W[o*Taps:(o+1)*Taps] (indices already clamped to the input, as ONNX's
// edge padding makes them), or, where Outside[o], is the extrapolation
// value. The CPU kernels and the Metal kernel read these tables, so they
// never divide or round per element; the PTX kernel recomputes them in
// float64 with the same operations (ptx.EmitResize).
type ResizeAxis struct {
	In, Out  int
	Taps     int
	Idx      []int32
	W        []float64
	Outside  []bool // nil when no output is outside (tf_crop_and_resize only)
	Identity bool   // Out == In and output o reads input o with weight 1
}

// ResizeTaps computes the taps of axis ax of spec for an input length in.
func ResizeTaps(s *graph.ResizeSpec, ax, in int) ResizeAxis {
	out := s.Sizes[ax]
	a := ResizeAxis{In: in, Out: out}
	switch s.Mode {
	case graph.ResizeNearest:
		a.Taps = 1
	case graph.ResizeLinear:
		a.Taps = 2
	default:
		a.Taps = 4
	}
	a.Idx = make([]int32, out*a.Taps)
	a.W = make([]float64, out*a.Taps)
	length := ResizeLength(s, ax, in)
	a.Identity = out == in
	for o := range out {
		x, outside := resizeCoord(s, ax, in, length, float64(o))
		if outside {
			if a.Outside == nil {
				a.Outside = make([]bool, out)
			}
			a.Outside[o], a.Identity = true, false
			continue
		}
		idx, w := a.Idx[o*a.Taps:(o+1)*a.Taps], a.W[o*a.Taps:(o+1)*a.Taps]
		fillTaps(s, x, in, idx, w)
		if a.Taps == 1 && idx[0] != int32(o) || a.Taps > 1 && !oneHot(idx, w, o) {
			a.Identity = false
		}
	}
	if a.Identity && a.Taps > 1 {
		// An axis that copies through reads one sample per output: its
		// zero-weight neighbours (another channel, another image) must
		// not turn an infinity there into NaN here.
		a.Taps = 1
		for o := range out {
			a.Idx[o], a.W[o] = int32(o), 1
		}
		a.Idx, a.W = a.Idx[:out], a.W[:out]
	}
	return a
}

// ResizeLength is the resized length of axis ax (input length in) that
// the coordinate formulas divide by: in·scale as ONNX's reference
// computes it (not rounded to the output size), or exactly the output
// size when the scale came from it.
func ResizeLength(s *graph.ResizeSpec, ax, in int) float64 {
	out := s.Sizes[ax]
	length := float64(in) * s.Scales[ax]
	if math.Abs(length-float64(out)) <= 1e-9*length {
		length = float64(out)
	}
	return length
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
