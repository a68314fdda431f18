package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// GridSample reads x [N, C, H, W] at the points of grid [N, Ho, Wo, 2],
// as ONNX (opset 16) and torch's grid_sample define it. A point becomes
// at most 16 taps (input cell, weight), computed in float64 by gridTaps;
// the reference kernel takes them for every output element, the fast
// kernel (gridsample_fast.go) once per point for all C channels.

func init() {
	Register(Entry{Op: graph.OpGridSample, DTypes: nativeFloats, Reference: prepareGridSample, Tol: 1e-6})
}

// gridPlan is a GridSample node's geometry.
type gridPlan struct {
	spec          graph.GridSampleSpec
	n, c, h, w    int
	ho, wo        int
	plane, points int // H·W and Ho·Wo
}

func gridPlanOf(n *graph.Node) (*gridPlan, error) {
	if len(n.Inputs) != 2 || n.Inputs[0].Shape.Rank() != 4 || n.Inputs[1].Shape.Rank() != 4 || n.Shape.Rank() != 4 {
		return nil, fmt.Errorf("inputs and result %v do not form a GridSample", n.Shape)
	}
	x, o := n.Inputs[0].Shape, n.Shape
	return &gridPlan{spec: n.Attrs.GridSample, n: x[0], c: x[1], h: x[2], w: x[3], ho: o[2], wo: o[3],
		plane: x[2] * x[3], points: o[2] * o[3]}, nil
}

// gridTaps are one point's taps: offsets within an input plane and their
// weights. n < 0 marks a point with a NaN coordinate, whose output is NaN.
type gridTaps struct {
	at [16]int32
	wt [16]float64
	n  int
}

// unnormalise maps a grid coordinate in [-1, 1] to the input's cell
// coordinates along an axis of the given size.
func (p *gridPlan) unnormalise(v float64, size int) float64 {
	if p.spec.AlignCorners {
		return (v + 1) / 2 * float64(size-1)
	}
	return ((v+1)*float64(size) - 1) / 2
}

// pad applies the padding mode to a cell coordinate: border clips it into
// the input, reflection mirrors it at the borders (the corner centres with
// AlignCorners, else the outer edges) and then clips; zeros leaves it.
func (p *gridPlan) pad(v float64, size int) float64 {
	switch p.spec.Padding {
	case graph.PadBorder:
		return clipCoord(v, size)
	case graph.PadReflection:
		if p.spec.AlignCorners {
			v = reflectCoord(v, 0, float64(size-1))
		} else {
			v = reflectCoord(v, -0.5, float64(size)-0.5)
		}
		return clipCoord(v, size)
	}
	return v
}

func clipCoord(v float64, size int) float64 { return min(max(v, 0), float64(size-1)) }

// reflectCoord mirrors v into [lo, hi] as many times as it takes.
func reflectCoord(v, lo, hi float64) float64 {
	span := hi - lo
	if span <= 0 {
		return 0
	}
	v = math.Abs(v - lo)
	extra := math.Mod(v, span)
	if int64(math.Floor(v/span))%2 == 0 {
		return lo + extra
	}
	return hi - extra
}

// farOut bounds the cell coordinates turned into integers; past it a
// coordinate is outside any input (and far from int overflow).
const farOut = 1 << 30

// taps computes the taps of grid point (gx, gy). Taps outside the input
// (zeros padding) are left out: they read zero.
func (p *gridPlan) taps(gx, gy float64, t *gridTaps) {
	t.n = 0
	if math.IsNaN(gx) || math.IsNaN(gy) {
		t.n = -1
		return
	}
	add := func(x, y int, w float64) {
		if x >= 0 && x < p.w && y >= 0 && y < p.h {
			t.at[t.n], t.wt[t.n] = int32(y*p.w+x), w
			t.n++
		}
	}
	ix, iy := p.unnormalise(gx, p.w), p.unnormalise(gy, p.h)
	switch p.spec.Mode {
	case graph.SampleBilinear, graph.SampleNearest:
		ix, iy = p.pad(ix, p.w), p.pad(iy, p.h)
		if math.Abs(ix) > farOut || math.Abs(iy) > farOut {
			return
		}
		if p.spec.Mode == graph.SampleNearest {
			add(int(math.RoundToEven(ix)), int(math.RoundToEven(iy)), 1)
			return
		}
		x0, y0 := math.Floor(ix), math.Floor(iy)
		fx, fy := ix-x0, iy-y0
		xi, yi := int(x0), int(y0)
		add(xi, yi, (1-fx)*(1-fy))
		add(xi+1, yi, fx*(1-fy))
		add(xi, yi+1, (1-fx)*fy)
		add(xi+1, yi+1, fx*fy)
	case graph.SampleBicubic:
		// The 4×4 neighbours around the unpadded coordinate; padding
		// applies to each neighbour's own (integer) coordinate.
		if math.Abs(ix) > farOut || math.Abs(iy) > farOut {
			if p.spec.Padding == graph.PadZeros {
				return
			}
			ix, iy = max(min(ix, farOut), -farOut), max(min(iy, farOut), -farOut)
		}
		x0, y0 := math.Floor(ix), math.Floor(iy)
		cx, cy := cubicCoeffs(ix-x0), cubicCoeffs(iy-y0)
		for j := range 4 {
			yy := p.pad(y0-1+float64(j), p.h)
			for i := range 4 {
				xx := p.pad(x0-1+float64(i), p.w)
				add(int(xx), int(yy), cx[i]*cy[j])
			}
		}
	}
}

// cubicCoeffs are the cubic convolution weights (A = -0.75, as torch and
// ONNX's GridSample) of the four neighbours x0-1 … x0+2 at fraction t.
func cubicCoeffs(t float64) [4]float64 {
	const a = -0.75
	near := func(x float64) float64 { return ((a+2)*x-(a+3))*x*x + 1 }
	far := func(x float64) float64 { return ((a*x-5*a)*x+8*a)*x - 4*a }
	return [4]float64{far(t + 1), near(t), near(1 - t), far(2 - t)}
}

// sample applies a point's taps to one input plane.
func sample[T float32 | float64](t *gridTaps, plane []T) T {
	if t.n < 0 {
		return T(math.NaN())
	}
	s := 0.0
	for k := range t.n {
		s += t.wt[k] * float64(plane[t.at[k]])
	}
	return T(s)
}

func prepareGridSample(n *graph.Node) (Kernel, error) {
	p, err := gridPlanOf(n)
	if err != nil {
		return nil, err
	}
	switch n.DType {
	case tensor.F32:
		return sizeChecked(n, gridSampleRef[float32](p)), nil
	case tensor.F64:
		return sizeChecked(n, gridSampleRef[float64](p)), nil
	}
	return nil, fmt.Errorf("dtype %v has no reference kernel", n.DType)
}

// gridSampleRef computes every output element on its own: the point's
// taps, then their weighted sum over the element's plane.
func gridSampleRef[T float32 | float64](p *gridPlan) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, grid, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
		var t gridTaps
		for b := range p.n {
			for c := range p.c {
				plane := x[(b*p.c+c)*p.plane:][:p.plane]
				for i := range p.points {
					g := grid[(b*p.points+i)*2:]
					p.taps(float64(g[0]), float64(g[1]), &t)
					y[(b*p.c+c)*p.points+i] = sample(&t, plane)
				}
			}
		}
		return nil
	}
}
