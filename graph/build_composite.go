package graph

import (
	"math"

	"github.com/kilnml/kiln/tensor"
)

// Composite ops: ONNX operators that are exact compositions of kiln's own
// ops. Each builds those ops, so it runs on their reference kernels, their
// fast CPU kernels (ReduceSum's row kernels, for one) and
// their CUDA and Metal lowerings, and fuses like any other chain; nothing
// here needs a kernel of its own.

// constOf adds a constant of dtype dt and shape s holding vals (converted
// from float64, exact for every integer below 2^53).
func (g *Graph) constOf(dt tensor.DType, s tensor.Shape, vals []float64) *Node {
	if g.err != nil {
		return &Node{Op: OpInvalid}
	}
	t, err := tensor.FromFloat64s(dt, s, vals)
	if err != nil {
		return g.fail("Constant: %v", err)
	}
	return g.Constant(t)
}

// scalarLike is a scalar constant of x's dtype.
func (g *Graph) scalarLike(x *Node, v float64) *Node {
	return g.constOf(x.DType, tensor.Shape{}, []float64{v})
}

// ReduceL1 is Σ|x| over axes (all when none are given): ReduceSum of Abs.
func (g *Graph) ReduceL1(x *Node, keepDims bool, axes ...int) *Node {
	return g.ReduceSum(g.Abs(x), keepDims, axes...)
}

// ReduceSumSquare is Σx² over axes: ReduceSum of x·x.
func (g *Graph) ReduceSumSquare(x *Node, keepDims bool, axes ...int) *Node {
	return g.ReduceSum(g.Mul(x, x), keepDims, axes...)
}

// ReduceL2 is sqrt(Σx²) over axes.
func (g *Graph) ReduceL2(x *Node, keepDims bool, axes ...int) *Node {
	return g.Sqrt(g.ReduceSumSquare(x, keepDims, axes...))
}

// ReduceLogSum is log(Σx) over axes.
func (g *Graph) ReduceLogSum(x *Node, keepDims bool, axes ...int) *Node {
	return g.Log(g.ReduceSum(x, keepDims, axes...))
}

// ReduceLogSumExp is log(Σexp x) over axes, computed as m + log(Σexp(x-m))
// with m the maximum, so that large inputs do not overflow exp. A maximum
// that is not finite (±Inf, NaN) is replaced by 0 for the shift: then an
// axis holding +Inf gives +Inf, an axis of -Inf gives -Inf and a NaN stays
// NaN, as the unshifted formula does.
func (g *Graph) ReduceLogSumExp(x *Node, keepDims bool, axes ...int) *Node {
	if !x.Valid() || g.err != nil {
		return g.ReduceSum(x, keepDims, axes...)
	}
	m := g.ReduceMax(x, true, axes...)
	if !m.Valid() {
		return m
	}
	finite := g.Less(g.Abs(m), g.scalarLike(x, math.Inf(1)))
	shift := g.Where(finite, m, g.scalarLike(x, 0))
	s := g.Log(g.ReduceSum(g.Exp(g.Sub(x, shift)), keepDims, axes...))
	if !s.Valid() {
		return s
	}
	if !keepDims {
		shift = g.Reshape(shift, s.Shape...)
	}
	return g.Add(s, shift)
}

// axisIota is an I64 constant of rank dims counting 0..n-1 along axis and
// of size 1 elsewhere, to compare indices against with broadcasting.
func (g *Graph) axisIota(rank, axis, n int) *Node {
	s := make(tensor.Shape, rank)
	for i := range s {
		s[i] = 1
	}
	s[axis] = n
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return g.constOf(tensor.I64, s, v)
}

// Hardmax is 1 at the first largest element along axis and 0 elsewhere
// (ONNX Hardmax from opset 13; the first NaN counts as the largest, as in
// ArgMax): ArgMax compared with the positions along the axis.
func (g *Graph) Hardmax(x *Node, axis int) *Node {
	if !x.Valid() || g.err != nil {
		return g.ArgMax(x, axis, true)
	}
	r := x.Shape.Rank()
	ax, err := tensor.NormAxis(axis, r)
	if err != nil {
		return g.fail("Hardmax: %v", err)
	}
	am := g.ArgMax(x, ax, true)
	return g.Cast(g.Equal(am, g.axisIota(r, ax, x.Shape[ax])), x.DType)
}

// triluMask is the Bool [rows, cols] mask of Trilu: j-i >= k for the
// upper triangle, j-i <= k for the lower.
func (g *Graph) triluMask(rows, cols, k int, upper bool) *Node {
	v := make([]float64, rows*cols)
	for i := range rows {
		for j := range cols {
			if d := j - i; (upper && d >= k) || (!upper && d <= k) {
				v[i*cols+j] = 1
			}
		}
	}
	return g.constOf(tensor.Bool, tensor.Shape{rows, cols}, v)
}

// Trilu keeps the upper (j-i >= k) or lower (j-i <= k) triangle of the
// last two axes of x and zeroes the rest (ONNX Trilu): Where over a
// constant mask.
func (g *Graph) Trilu(x *Node, upper bool, k int) *Node {
	if !x.Valid() || g.err != nil {
		return g.Where(x, x, x)
	}
	r := x.Shape.Rank()
	if r < 2 {
		return g.fail("Trilu: input %v has rank %d, want at least 2", x.Shape, r)
	}
	// k beyond either dim selects all or nothing; clamping keeps the
	// arithmetic small.
	k = max(-x.Shape[r-2]-1, min(k, x.Shape[r-1]+1))
	mask := g.triluMask(x.Shape[r-2], x.Shape[r-1], k, upper)
	return g.Where(mask, x, g.scalarLike(x, 0))
}

// EyeLike is a constant of shape s (2-D) and dtype dt with ones on the
// diagonal j-i = k and zeros elsewhere (ONNX EyeLike).
func (g *Graph) EyeLike(s tensor.Shape, dt tensor.DType, k int) *Node {
	if len(s) != 2 {
		return g.fail("EyeLike: shape %v is not 2-D", s)
	}
	v := make([]float64, s.NumElements())
	for i := range s[0] {
		if j := i + k; j >= 0 && j < s[1] {
			v[i*s[1]+j] = 1
		}
	}
	return g.constOf(dt, s, v)
}

// OneHot puts on where the position along the new axis equals the index
// and off elsewhere (ONNX OneHot): indices (integers; negative ones count
// from depth) gain an axis of size depth at axis (in [0, rank]); on and
// off are scalars of the result's dtype. Indices outside [-depth, depth)
// give a row of off.
func (g *Graph) OneHot(indices *Node, depth, axis int, on, off *Node) *Node {
	if !indices.Valid() || g.err != nil {
		return g.Where(indices, on, off)
	}
	if !indices.DType.IsInt() {
		return g.fail("OneHot: indices are %v, want integers", indices.DType)
	}
	if depth < 0 {
		return g.fail("OneHot: depth %d is negative", depth)
	}
	r := indices.Shape.Rank() + 1
	ax, err := tensor.NormAxis(axis, r)
	if err != nil {
		return g.fail("OneHot: %v", err)
	}
	idx := indices
	if idx.DType != tensor.I64 {
		idx = g.Cast(idx, tensor.I64)
	}
	d := g.constOf(tensor.I64, tensor.Shape{}, []float64{float64(depth)})
	zero := g.constOf(tensor.I64, tensor.Shape{}, []float64{0})
	idx = g.Where(g.Less(idx, zero), g.Add(idx, d), idx)
	hit := g.Equal(g.Unsqueeze(idx, ax), g.axisIota(r, ax, depth))
	return g.Where(hit, on, off)
}

// MeanVarianceNorm is (x - mean) / (std + 1e-9) over axes, with the mean
// and the biased variance taken over those axes (ONNX
// MeanVarianceNormalization, whose function body adds 1e-9 to the
// standard deviation). The variance is the mean of the squared
// deviations, which does not cancel as E[x²]-E[x]² does.
func (g *Graph) MeanVarianceNorm(x *Node, axes ...int) *Node {
	d := g.Sub(x, g.ReduceMean(x, true, axes...))
	std := g.Sqrt(g.ReduceMean(g.Mul(d, d), true, axes...))
	if !std.Valid() {
		return std
	}
	return g.Div(d, g.Add(std, g.scalarLike(x, 1e-9)))
}

// LRN is local response normalisation across channels (axis 1):
// x / (bias + alpha/size · Σx²)^beta, the sum over the channels
// [c - (size-1)/2, c + ceil((size-1)/2)] that exist (ONNX LRN). The window
// sum adds size shifted slices of the zero-padded squares.
func (g *Graph) LRN(x *Node, size int, alpha, beta, bias float32) *Node {
	if !x.Valid() || g.err != nil {
		return g.Mul(x, x)
	}
	s := x.Shape
	if s.Rank() < 2 || size < 1 {
		return g.fail("LRN: input %v (want rank >= 2) with size %d (want >= 1)", s, size)
	}
	before, after := (size-1)/2, size/2
	pads := make([]int, 2*s.Rank())
	pads[1], pads[s.Rank()+1] = before, after
	sq := g.Pad(g.Mul(x, x), pads, PadConstant, 0)
	var sum *Node
	for i := range size {
		w := g.Slice(sq, SliceSpec{Axes: []int{1}, Starts: []int{i}, Ends: []int{i + s[1]}, Steps: []int{1}})
		if sum == nil {
			sum = w
		} else {
			sum = g.Add(sum, w)
		}
	}
	base := g.Add(g.scalarLike(x, float64(bias)), g.Mul(g.scalarLike(x, float64(alpha)/float64(size)), sum))
	return g.Div(x, g.Pow(base, g.scalarLike(x, float64(beta))))
}
