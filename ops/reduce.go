package ops

import (
	"cmp"
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Reference kernels of the reductions, ArgMax/ArgMin, Softmax/LogSoftmax
// and CumSum. Sums accumulate sequentially in float64 for floats (int64,
// truncated at the end, for integers: the same as wrapping in T) and round
// once, so the F32 reference is far more accurate than an F32 accumulator.

func init() {
	floats := []tensor.DType{tensor.F32, tensor.F64}
	numeric := []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64}
	for _, op := range []graph.Op{graph.OpReduceSum, graph.OpReduceMax, graph.OpReduceMin, graph.OpReduceProd} {
		Register(Entry{Op: op, DTypes: numeric, Reference: prepareReduce, Tol: 1e-5})
	}
	Register(Entry{Op: graph.OpReduceMean, DTypes: floats, Reference: prepareReduce, Tol: 1e-5})
	Register(Entry{Op: graph.OpArgMax, DTypes: numeric, Reference: prepareArg})
	Register(Entry{Op: graph.OpArgMin, DTypes: numeric, Reference: prepareArg})
	Register(Entry{Op: graph.OpSoftmax, DTypes: floats, Reference: prepareSoftmax, Tol: 1e-5})
	Register(Entry{Op: graph.OpLogSoftmax, DTypes: floats, Reference: prepareSoftmax, Tol: 1e-5})
	Register(Entry{Op: graph.OpCumSum, DTypes: numeric, Reference: prepareCumSum, Tol: 1e-5})
}

// wide is the accumulator type of a reduction: float64 or int64.
type wide interface{ float64 | int64 }

// reducePlan walks the input in row-major order, tracking the offset of
// the output element each input element folds into: the output is read
// with keep-dims strides, 0 along reduced axes.
type reducePlan struct {
	dims  []int // input dims
	outSt []int // output stride per input dim
	idx   []int // odometer scratch
	count int   // input elements per output element
}

func newReducePlan(in tensor.Shape, axes []int) *reducePlan {
	kept := in.Clone()
	count := 1
	for _, ax := range axes {
		count *= in[ax]
		kept[ax] = 1
	}
	return &reducePlan{dims: in.Clone(), outSt: tensor.BroadcastStrides(kept, in), idx: make([]int, len(in)), count: count}
}

// fold sets acc[j] = init for every output j, then acc[j] = comb(acc[j],
// x[i]) for every input i in order.
func fold[T ewNum, W wide](p *reducePlan, acc []W, x []T, init W, comb func(a, b W) W) {
	for j := range acc {
		acc[j] = init
	}
	clear(p.idx)
	off := 0
	for _, v := range x {
		acc[off] = comb(acc[off], W(v))
		for d := len(p.dims) - 1; d >= 0; d-- {
			p.idx[d]++
			off += p.outSt[d]
			if p.idx[d] < p.dims[d] {
				break
			}
			off -= p.outSt[d] * p.dims[d]
			p.idx[d] = 0
		}
	}
}

func prepareReduce(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(n.Inputs))
	}
	x := n.Inputs[0]
	axes := n.Attrs.Axes
	for i, ax := range axes {
		if ax < 0 || ax >= x.Shape.Rank() || (i > 0 && ax <= axes[i-1]) {
			return nil, fmt.Errorf("axes %v are not sorted, unique and in [0, %d)", axes, x.Shape.Rank())
		}
	}
	if want := x.Shape.Reduced(axes, n.Attrs.KeepDims); n.DType != x.DType || !n.Shape.Equal(want) {
		return nil, fmt.Errorf("result %v%v, want %v%v", n.DType, n.Shape, x.DType, want)
	}
	p := newReducePlan(x.Shape, axes)
	if (n.Op == graph.OpReduceMax || n.Op == graph.OpReduceMin) && p.count == 0 && n.Shape.NumElements() > 0 {
		return nil, fmt.Errorf("%v over an empty axis has no identity", n.Op)
	}
	if n.Op == graph.OpReduceMean && !x.DType.IsFloat() {
		return nil, fmt.Errorf("%v needs a float input, got %v", n.Op, x.DType)
	}
	outN := n.Shape.NumElements()
	var k Kernel
	var err error
	switch x.DType {
	case tensor.F32:
		k, err = reduceKernel[float32, float64](n.Op, p, outN, math.Inf(-1), math.Inf(1))
	case tensor.F64:
		k, err = reduceKernel[float64, float64](n.Op, p, outN, math.Inf(-1), math.Inf(1))
	case tensor.I8:
		k, err = reduceKernel[int8, int64](n.Op, p, outN, math.MinInt64, math.MaxInt64)
	case tensor.U8:
		k, err = reduceKernel[uint8, int64](n.Op, p, outN, math.MinInt64, math.MaxInt64)
	case tensor.I32:
		k, err = reduceKernel[int32, int64](n.Op, p, outN, math.MinInt64, math.MaxInt64)
	case tensor.I64:
		k, err = reduceKernel[int64, int64](n.Op, p, outN, math.MinInt64, math.MaxInt64)
	default:
		err = fmt.Errorf("dtype %v has no reference kernel", x.DType)
	}
	if err != nil {
		return nil, err
	}
	return sizeChecked(n, k), nil
}

// reduceKernel folds into a scratch accumulator of outN W (lowest and
// highest are W's identities for Max and Min) and rounds into the output.
func reduceKernel[T ewNum, W wide](op graph.Op, p *reducePlan, outN int, lowest, highest W) (Kernel, error) {
	var init W
	var comb func(a, b W) W
	switch op {
	case graph.OpReduceSum, graph.OpReduceMean:
		init, comb = 0, func(a, b W) W { return a + b }
	case graph.OpReduceProd:
		init, comb = 1, func(a, b W) W { return a * b }
	case graph.OpReduceMax:
		init, comb = lowest, func(a, b W) W { return max(a, b) } // NaN propagates
	case graph.OpReduceMin:
		init, comb = highest, func(a, b W) W { return min(a, b) }
	default:
		return nil, fmt.Errorf("%v is not a reduction", op)
	}
	mean := op == graph.OpReduceMean
	// The divisor of a mean of an empty axis is 0: 0/0 is NaN, like numpy.
	count := W(p.count)
	acc := make([]W, outN)
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		fold(p, acc, tensor.Elems[T](ins[0].Data), init, comb)
		dst := tensor.Elems[T](out.Data)
		for j, a := range acc {
			if mean {
				a /= count
			}
			dst[j] = T(a)
		}
		return nil
	}, nil
}

// axisSplit views s as [outer, s[axis], inner] in row-major order.
func axisSplit(s tensor.Shape, axis int) (outer, n, inner int) {
	return s[:axis].NumElements(), s[axis], s[axis+1:].NumElements()
}

// axisInput checks the single input of an axis op and its Attrs.Axis.
func axisInput(n *graph.Node) (*graph.Node, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(n.Inputs))
	}
	x := n.Inputs[0]
	if ax := n.Attrs.Axis; ax < 0 || ax >= x.Shape.Rank() {
		return nil, fmt.Errorf("axis %d out of range for rank %d", ax, x.Shape.Rank())
	}
	return x, nil
}

func prepareArg(n *graph.Node) (Kernel, error) {
	x, err := axisInput(n)
	if err != nil {
		return nil, err
	}
	ax := n.Attrs.Axis
	if want := x.Shape.Reduced([]int{ax}, n.Attrs.KeepDims); n.DType != tensor.I64 || !n.Shape.Equal(want) {
		return nil, fmt.Errorf("result %v%v, want i64%v", n.DType, n.Shape, want)
	}
	outer, size, inner := axisSplit(x.Shape, ax)
	if size == 0 && outer*inner > 0 {
		return nil, fmt.Errorf("%v over an empty axis", n.Op)
	}
	isMax := n.Op == graph.OpArgMax
	var k Kernel
	switch x.DType {
	case tensor.F32:
		k = argKernel[float32](isMax, outer, size, inner)
	case tensor.F64:
		k = argKernel[float64](isMax, outer, size, inner)
	case tensor.I8:
		k = argKernel[int8](isMax, outer, size, inner)
	case tensor.U8:
		k = argKernel[uint8](isMax, outer, size, inner)
	case tensor.I32:
		k = argKernel[int32](isMax, outer, size, inner)
	case tensor.I64:
		k = argKernel[int64](isMax, outer, size, inner)
	default:
		return nil, fmt.Errorf("dtype %v has no reference kernel", x.DType)
	}
	return sizeChecked(n, k), nil
}

// argKernel finds the first index of the largest (smallest) element along
// the axis. As in numpy, the first NaN counts as the extreme: once the best
// is NaN nothing replaces it.
func argKernel[T cmp.Ordered](isMax bool, outer, size, inner int) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x := tensor.Elems[T](ins[0].Data)
		dst := out.I64()
		for o := range outer {
			for i := range inner {
				base := o*size*inner + i
				best, bv := 0, x[base]
				for k := 1; k < size && bv == bv; k++ {
					v := x[base+k*inner]
					if v != v || (isMax && v > bv) || (!isMax && v < bv) {
						best, bv = k, v
					}
				}
				dst[o*inner+i] = int64(best)
			}
		}
		return nil
	}
}

func prepareSoftmax(n *graph.Node) (Kernel, error) {
	x, err := axisInput(n)
	if err != nil {
		return nil, err
	}
	if n.DType != x.DType || !n.Shape.Equal(x.Shape) {
		return nil, fmt.Errorf("result %v%v differs from input %v%v", n.DType, n.Shape, x.DType, x.Shape)
	}
	outer, size, inner := axisSplit(x.Shape, n.Attrs.Axis)
	log := n.Op == graph.OpLogSoftmax
	var k Kernel
	switch x.DType {
	case tensor.F32:
		k = softmaxKernel[float32](log, outer, size, inner)
	case tensor.F64:
		k = softmaxKernel[float64](log, outer, size, inner)
	default:
		return nil, fmt.Errorf("dtype %v has no reference kernel", x.DType)
	}
	return sizeChecked(n, k), nil
}

// softmaxKernel computes, in float64 along the axis, m = max x,
// s = Σ exp(x-m), then exp(x-m)/s or x-m-log(s). A NaN anywhere in a line
// makes the whole line NaN; a line of -Inf is NaN too (as in numpy).
func softmaxKernel[T ewFloat](log bool, outer, size, inner int) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x := tensor.Elems[T](ins[0].Data)
		dst := tensor.Elems[T](out.Data)
		for o := range outer {
			for i := range inner {
				base := o*size*inner + i
				m := math.Inf(-1)
				for k := range size {
					m = max(m, float64(x[base+k*inner]))
				}
				s := 0.0
				for k := range size {
					s += math.Exp(float64(x[base+k*inner]) - m)
				}
				ls := math.Log(s)
				for k := range size {
					j := base + k*inner
					if log {
						dst[j] = T(float64(x[j]) - m - ls)
					} else {
						dst[j] = T(math.Exp(float64(x[j])-m) / s)
					}
				}
			}
		}
		return nil
	}
}

func prepareCumSum(n *graph.Node) (Kernel, error) {
	x, err := axisInput(n)
	if err != nil {
		return nil, err
	}
	if n.DType != x.DType || !n.Shape.Equal(x.Shape) {
		return nil, fmt.Errorf("result %v%v differs from input %v%v", n.DType, n.Shape, x.DType, x.Shape)
	}
	outer, size, inner := axisSplit(x.Shape, n.Attrs.Axis)
	ex, rev := n.Attrs.Exclusive, n.Attrs.Reverse
	var k Kernel
	switch x.DType {
	case tensor.F32:
		k = cumSumKernel[float32, float64](ex, rev, outer, size, inner)
	case tensor.F64:
		k = cumSumKernel[float64, float64](ex, rev, outer, size, inner)
	case tensor.I8:
		k = cumSumKernel[int8, int64](ex, rev, outer, size, inner)
	case tensor.U8:
		k = cumSumKernel[uint8, int64](ex, rev, outer, size, inner)
	case tensor.I32:
		k = cumSumKernel[int32, int64](ex, rev, outer, size, inner)
	case tensor.I64:
		k = cumSumKernel[int64, int64](ex, rev, outer, size, inner)
	default:
		return nil, fmt.Errorf("dtype %v has no reference kernel", x.DType)
	}
	return sizeChecked(n, k), nil
}

// cumSumKernel runs the sum along the axis in W, from the end when rev is
// set; exclusive stores the sum before adding the element. Each element is
// read before its output is written, so out may alias the input.
func cumSumKernel[T ewNum, W wide](exclusive, rev bool, outer, size, inner int) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x := tensor.Elems[T](ins[0].Data)
		dst := tensor.Elems[T](out.Data)
		for o := range outer {
			for i := range inner {
				base := o*size*inner + i
				var acc W
				for step := range size {
					k := step
					if rev {
						k = size - 1 - step
					}
					j := base + k*inner
					v := W(x[j])
					if exclusive {
						dst[j] = T(acc)
						acc += v
					} else {
						acc += v
						dst[j] = T(acc)
					}
				}
			}
		}
		return nil
	}
}
