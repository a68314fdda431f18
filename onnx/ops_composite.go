package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// ONNX ops that kiln builds from its own ops (graph/build_composite.go):
// the reductions beyond Sum/Mean/Max/Min/Prod, Hardmax, Trilu, EyeLike,
// OneHot and the normalisations MeanVarianceNormalization and LRN; and
// InstanceNormalization and TopK, which are kiln ops of their own.

// reduceComposite is one of the composite reductions: the reduction
// itself, and what it is over no axes (noop_with_empty_axes), where every
// element is its own reduction.
type reduceComposite struct {
	reduce func(g *graph.Graph, x *graph.Node, keep bool, axes ...int) *graph.Node
	none   func(g *graph.Graph, x *graph.Node) *graph.Node
}

func init() {
	// All five take their axes as an input from opset 18.
	for name, r := range map[string]reduceComposite{
		"ReduceL1":        {(*graph.Graph).ReduceL1, (*graph.Graph).Abs},
		"ReduceL2":        {(*graph.Graph).ReduceL2, (*graph.Graph).Abs}, // sqrt(x²)
		"ReduceLogSum":    {(*graph.Graph).ReduceLogSum, (*graph.Graph).Log},
		"ReduceLogSumExp": {(*graph.Graph).ReduceLogSumExp, func(_ *graph.Graph, x *graph.Node) *graph.Node { return x }},
		"ReduceSumSquare": {(*graph.Graph).ReduceSumSquare, func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Mul(x, x) }},
	} {
		register(name, 1, one(func(c *ctx) (*graph.Node, error) { return mapReduceComposite(c, r) }))
	}
	register("Hardmax", 1, one(func(c *ctx) (*graph.Node, error) {
		return mapAxisRows(c, func(x *graph.Node, ax int) (*graph.Node, error) { return built(c, c.g.Hardmax(x, ax)) })
	}))
	register("Trilu", 14, one(mapTrilu))
	register("EyeLike", 9, one(mapEyeLike))
	register("OneHot", 11, one(mapOneHot))
	register("MeanVarianceNormalization", 9, one(mapMVN))
	register("InstanceNormalization", 6, one(mapInstanceNorm))
	register("LRN", 1, one(mapLRN))
	register("TopK", 1, mapTopK)
}

// mapTopK: K is an attribute before opset 10 and an input known at
// import from it; largest and sorted come with opset 11. sorted=0 leaves
// the order unspecified, so kiln's sorted order serves it too. Only the
// outputs the model reads are built.
func mapTopK(c *ctx) ([]*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	var k int
	if c.opset < 10 {
		kv, err := c.attrInt("k", -1)
		if err != nil {
			return nil, err
		}
		k = int(max(-1, min(kv, 1<<40)))
	} else {
		ks, err := c.ints(1, "K")
		if err != nil {
			return nil, err
		}
		if len(ks) != 1 {
			return nil, fmt.Errorf("K must hold one value, got %v", ks)
		}
		k = ks[0]
	}
	a, err := c.attrInt("axis", -1)
	if err != nil {
		return nil, err
	}
	ax, err := axis(int(a), x.Shape.Rank())
	if err != nil {
		return nil, err
	}
	if k < 0 || k > x.Shape[ax] {
		return nil, fmt.Errorf("K = %d out of range [0, %d] for axis %d of %v", k, x.Shape[ax], ax, x.Shape)
	}
	largest, err := c.attrBool("largest", true)
	if err != nil {
		return nil, err
	}
	if _, err := c.attrBool("sorted", true); err != nil {
		return nil, err
	}
	if err := c.supports(graph.OpTopK, x.DType); err != nil {
		return nil, err
	}
	v, i := c.g.TopK(x, k, ax, !largest)
	if _, err := built(c, v); err != nil {
		return nil, err
	}
	outs := []*graph.Node{v, i}
	for o := range outs {
		if !c.used(o) {
			outs[o] = nil
		}
	}
	return outs, nil
}

// built returns a node a builder method made, or the error the builder
// recorded on the graph.
func built(c *ctx, n *graph.Node) (*graph.Node, error) {
	if err := c.g.Err(); err != nil {
		return nil, err
	}
	if !n.Valid() {
		return nil, fmt.Errorf("the graph builder refused the node")
	}
	return n, nil
}

// floatInput returns input i, which must be a float tensor.
func floatInput(c *ctx, i int) (*graph.Node, error) {
	x, err := c.need(i)
	if err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		return nil, unsupportedf("input %d is %v; kiln supports this op on floats", i, x.DType)
	}
	return x, nil
}

func mapReduceComposite(c *ctx, r reduceComposite) (*graph.Node, error) {
	x, err := floatInput(c, 0)
	if err != nil {
		return nil, err
	}
	axes, err := reduceAxes(c, 18)
	if err != nil {
		return nil, err
	}
	keep, err := c.attrBool("keepdims", true)
	if err != nil {
		return nil, err
	}
	noop, err := c.attrBool("noop_with_empty_axes", false)
	if err != nil {
		return nil, err
	}
	if len(axes) == 0 && noop {
		return built(c, r.none(c.g, x))
	}
	return built(c, r.reduce(c.g, x, keep, axes...))
}

func mapTrilu(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	upper, err := c.attrBool("upper", true)
	if err != nil {
		return nil, err
	}
	k := 0
	if c.has(1) {
		ks, err := c.ints(1, "k")
		if err != nil {
			return nil, err
		}
		if len(ks) != 1 {
			return nil, fmt.Errorf("k must hold one value, got %v", ks)
		}
		k = ks[0]
	}
	return built(c, c.g.Trilu(x, upper, k))
}

// mapEyeLike: the result depends only on the input's shape, so it is a
// constant.
func mapEyeLike(c *ctx) (*graph.Node, error) {
	if !c.has(0) {
		return nil, fmt.Errorf("missing required input 0")
	}
	dt := c.dtype(0)
	code, err := c.attrInt("dtype", -1)
	if err != nil {
		return nil, err
	}
	if code >= 0 {
		if dt, err = DType(int32(code)); err != nil {
			return nil, unsupportedf("attribute dtype: %v", err)
		}
	}
	k, err := c.attrInt("k", 0)
	if err != nil {
		return nil, err
	}
	s := c.shape(0)
	if s.Rank() != 2 {
		return nil, fmt.Errorf("input has shape %v, want 2-D", s)
	}
	k = max(-int64(s[0]), min(k, int64(s[1])))
	return built(c, c.g.EyeLike(s, dt, int(k)))
}

// mapOneHot: depth must be known at import (it sets the result's shape);
// indices of a float type are truncated to integers, as ONNX casts them.
func mapOneHot(c *ctx) (*graph.Node, error) {
	idx, err := c.need(0)
	if err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, fmt.Errorf("missing required input 1 (depth)")
	}
	depth, ok := c.scalar(1)
	if !ok {
		return nil, unsupportedf("depth (input 1) must be one value known at import time")
	}
	if !(depth >= 1 && depth <= 1<<31) {
		return nil, fmt.Errorf("depth %v out of range [1, 2^31]", depth)
	}
	vals, err := c.need(2)
	if err != nil {
		return nil, err
	}
	if !vals.Shape.Equal(tensor.Shape{2}) {
		return nil, fmt.Errorf("values has shape %v, want [2] (off, on)", vals.Shape)
	}
	ax, err := c.attrInt("axis", -1)
	if err != nil {
		return nil, err
	}
	if !idx.DType.IsInt() {
		idx = c.g.Cast(idx, tensor.I64)
	}
	pick := func(i int64) *graph.Node {
		t, _ := tensor.FromI64(tensor.Shape{}, []int64{i})
		return c.g.Gather(vals, c.g.Constant(t), 0)
	}
	return built(c, c.g.OneHot(idx, int(depth), int(ax), pick(1), pick(0)))
}

func mapMVN(c *ctx) (*graph.Node, error) {
	x, err := floatInput(c, 0)
	if err != nil {
		return nil, err
	}
	axes, ok, err := c.attrInts("axes")
	if err != nil {
		return nil, err
	}
	if !ok {
		axes = []int{0, 2, 3}
	}
	return built(c, c.g.MeanVarianceNorm(x, axes...))
}

func mapInstanceNorm(c *ctx) (*graph.Node, error) {
	var ins [3]*graph.Node
	for i := range ins {
		n, err := floatInput(c, i)
		if err != nil {
			return nil, err
		}
		ins[i] = n
	}
	eps, err := c.attrFloat("epsilon", 1e-5)
	if err != nil {
		return nil, err
	}
	return built(c, c.g.InstanceNorm(ins[0], ins[1], ins[2], eps))
}

func mapLRN(c *ctx) (*graph.Node, error) {
	x, err := floatInput(c, 0)
	if err != nil {
		return nil, err
	}
	size, err := c.attrInt("size", 0)
	if err != nil {
		return nil, err
	}
	if size < 1 || size > 1<<16 {
		return nil, unsupportedf("attribute size = %d (want 1 to 65536)", size)
	}
	alpha, err := c.attrFloat("alpha", 1e-4)
	if err != nil {
		return nil, err
	}
	beta, err := c.attrFloat("beta", 0.75)
	if err != nil {
		return nil, err
	}
	bias, err := c.attrFloat("bias", 1)
	if err != nil {
		return nil, err
	}
	return built(c, c.g.LRN(x, int(size), alpha, beta, bias))
}
