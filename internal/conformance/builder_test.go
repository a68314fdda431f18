package conformance

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// opCase is one small graph around one op: a row of the matrix is every
// case of its op. build adds the inputs (through the builder, which
// makes their data), the op's node or nodes and the outputs.
type opCase struct {
	op    graph.Op
	name  string // what this case varies: dtype, broadcast, attributes
	build func(b *builder)
}

// builder makes a case's graph and the data of its inputs and params.
type builder struct {
	g     *graph.Graph
	r     *rand.Rand
	feeds map[string]tensor.Tensor
	err   error
}

func newBuilder(seed uint64) *builder {
	return &builder{g: graph.New(), r: rand.New(rand.NewPCG(seed, 0x6b696c6e)), feeds: map[string]tensor.Tensor{}}
}

// value adds an input (or a param) of dt holding values from gen.
func (b *builder) value(param bool, dt tensor.DType, gen func() float64, dims ...int) *graph.Node {
	name := fmt.Sprintf("v%d", len(b.feeds))
	v := make([]float64, tensor.Shape(dims).NumElements())
	for i := range v {
		v[i] = gen()
	}
	t, err := tensor.FromFloat64s(dt, tensor.Shape(dims), v)
	if err != nil && b.err == nil {
		b.err = err
	}
	b.feeds[name] = t
	if param {
		return b.g.Param(name, dt, dims...)
	}
	return b.g.Input(name, dt, dims...)
}

// uniform draws floats in [lo, hi), integers in [lo, hi] and Bool half
// true.
func (b *builder) uniform(dt tensor.DType, lo, hi float64) func() float64 {
	switch {
	case dt == tensor.Bool:
		return func() float64 { return float64(b.r.IntN(2)) }
	case !dt.IsFloat():
		return func() float64 { return lo + float64(b.r.IntN(int(hi-lo)+1)) }
	}
	return func() float64 { return lo + (hi-lo)*b.r.Float64() }
}

// in is an input of dt: floats in [-3, 3), integers in [-20, 20] ([0,
// 40] for U8), Bool half true.
func (b *builder) in(dt tensor.DType, dims ...int) *graph.Node {
	lo, hi := -3.0, 3.0
	switch {
	case dt == tensor.U8:
		lo, hi = 0, 40
	case !dt.IsFloat():
		lo, hi = -20, 20
	}
	return b.value(false, dt, b.uniform(dt, lo, hi), dims...)
}

// x is an F32 input in [-3, 3).
func (b *builder) x(dims ...int) *graph.Node { return b.in(tensor.F32, dims...) }

// w is an F32 param in [-1, 1): a weight, which the CPU may pre-pack.
func (b *builder) w(dims ...int) *graph.Node {
	return b.value(true, tensor.F32, b.uniform(tensor.F32, -1, 1), dims...)
}

// ranged is an input of dt drawn uniformly from [lo, hi).
func (b *builder) ranged(dt tensor.DType, lo, hi float64, dims ...int) *graph.Node {
	return b.value(false, dt, b.uniform(dt, lo, hi), dims...)
}

// steps is an input of dt on the grid of step in [lo, hi]: ties for
// comparisons, halves for Round, repeats for ArgMax.
func (b *builder) steps(dt tensor.DType, lo, hi, step float64, dims ...int) *graph.Node {
	n := int(math.Round((hi-lo)/step)) + 1
	return b.value(false, dt, func() float64 { return lo + step*float64(b.r.IntN(n)) }, dims...)
}

// nonzero is an integer input in [-9, 9] without 0: a divisor.
func (b *builder) nonzero(dt tensor.DType, dims ...int) *graph.Node {
	return b.value(false, dt, func() float64 {
		v := float64(b.r.IntN(9) + 1)
		if b.r.IntN(2) == 0 {
			return -v
		}
		return v
	}, dims...)
}

// specialValues and hugeValues are the edge values mixed into inputs:
// specials for every op; huge finite values (past F16, near F32's
// largest, where exp overflows) only for elementwise ops, since a sum
// of their products or squares overflows an F32 accumulator where the
// reference's float64 one does not.
var (
	specialValues = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1, -1, 0.5, -2.5, 1e-40, 1e-6}
	hugeValues    = []float64{-3e38, 3e38, 70000, 88.8, -104}
)

// edges is an input of dt whose every third element is one of the
// special and huge values, the rest in [-3, 3).
func (b *builder) edges(dt tensor.DType, dims ...int) *graph.Node {
	return b.mixed(dt, append(specialValues[:len(specialValues):len(specialValues)], hugeValues...), dims...)
}

// specials is edges without the huge values.
func (b *builder) specials(dt tensor.DType, dims ...int) *graph.Node {
	return b.mixed(dt, specialValues, dims...)
}

func (b *builder) mixed(dt tensor.DType, vals []float64, dims ...int) *graph.Node {
	i := 0
	return b.value(false, dt, func() float64 {
		i++
		if i%3 == 0 {
			return vals[(i/3)%len(vals)]
		}
		return 6*b.r.Float64() - 3
	}, dims...)
}

// out marks nodes as the graph's outputs.
func (b *builder) out(ns ...*graph.Node) { b.g.Output(ns...) }
