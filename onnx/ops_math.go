package onnx

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	register("MatMul", 1, one(func(c *ctx) (*graph.Node, error) { return c.binary(graph.OpMatMul) }))
	register("Gemm", 1, one(mapGemm))
	register("Softmax", 1, one(func(c *ctx) (*graph.Node, error) { return mapSoftmax(c, graph.OpSoftmax) }))
	register("LogSoftmax", 1, one(func(c *ctx) (*graph.Node, error) { return mapSoftmax(c, graph.OpLogSoftmax) }))
	// The opset from which each reduction takes its axes as an input.
	for name, r := range map[string]struct {
		op        graph.Op
		axesInput int64
	}{
		"ReduceSum": {graph.OpReduceSum, 13}, "ReduceMean": {graph.OpReduceMean, 18},
		"ReduceMax": {graph.OpReduceMax, 18}, "ReduceMin": {graph.OpReduceMin, 18},
		"ReduceProd": {graph.OpReduceProd, 18},
	} {
		register(name, 1, one(func(c *ctx) (*graph.Node, error) { return mapReduce(c, r.op, r.axesInput) }))
	}
	register("ArgMax", 1, one(func(c *ctx) (*graph.Node, error) { return mapArg(c, graph.OpArgMax) }))
	register("ArgMin", 1, one(func(c *ctx) (*graph.Node, error) { return mapArg(c, graph.OpArgMin) }))
	register("CumSum", 11, one(mapCumSum))
	register("LayerNormalization", 17, mapLayerNorm)
	register("BatchNormalization", 1, mapBatchNorm)
}

func mapGemm(c *ctx) (*graph.Node, error) {
	a, err := c.need(0)
	if err != nil {
		return nil, err
	}
	b, err := c.need(1)
	if err != nil {
		return nil, err
	}
	alpha, err := c.attrFloat("alpha", 1)
	if err != nil {
		return nil, err
	}
	beta, err := c.attrFloat("beta", 1)
	if err != nil {
		return nil, err
	}
	ta, err := c.attrBool("transA", false)
	if err != nil {
		return nil, err
	}
	tb, err := c.attrBool("transB", false)
	if err != nil {
		return nil, err
	}
	at := graph.Attrs{Alpha: alpha, Beta: beta, TransA: ta, TransB: tb}
	if c.has(2) {
		return c.apply(graph.OpGemm, at, a, b, c.in(2))
	}
	return c.apply(graph.OpGemm, at, a, b)
}

// mapSoftmax: from opset 13 the op works along one axis (default -1).
// Before, it flattened the input to 2-D at axis (default 1) and
// normalised each row over all the trailing dims together.
func mapSoftmax(c *ctx, op graph.Op) (*graph.Node, error) {
	return mapAxisRows(c, func(x *graph.Node, ax int) (*graph.Node, error) {
		return c.apply(op, graph.Attrs{Axis: ax}, x)
	})
}

// mapAxisRows maps an op with Softmax's axis semantics (Softmax,
// LogSoftmax, Hardmax): from opset 13 f runs along the one axis (default
// -1); before, along axis 1 of the input flattened to 2-D at the axis
// (default 1). A scalar is one row of one element.
func mapAxisRows(c *ctx, f func(x *graph.Node, ax int) (*graph.Node, error)) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	def := int64(-1)
	if c.opset < 13 {
		def = 1
	}
	a, err := c.attrInt("axis", def)
	if err != nil {
		return nil, err
	}
	r := x.Shape.Rank()
	ax, err := axis(int(a), max(r, 1))
	if err != nil {
		return nil, err
	}
	if r == 0 || c.opset >= 13 || ax == r-1 {
		if r == 0 { // a scalar: one row of one element
			y, err := f(c.g.Reshape(x, 1), 0)
			if err != nil {
				return nil, err
			}
			return c.g.Reshape(y), nil
		}
		return f(x, ax)
	}
	y, err := f(c.g.Flatten(x, ax), 1)
	if err != nil {
		return nil, err
	}
	return c.g.Reshape(y, x.Shape...), nil
}

// reduceAxes reads the axes of a reduction: an attribute before
// axesInput, an optional input from it.
func reduceAxes(c *ctx, axesInput int64) ([]int, error) {
	if c.opset >= axesInput {
		if !c.has(1) {
			return nil, nil
		}
		return c.ints(1, "axes")
	}
	axes, _, err := c.attrInts("axes")
	return axes, err
}

func mapReduce(c *ctx, op graph.Op, axesInput int64) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	axes, err := reduceAxes(c, axesInput)
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
		return x, nil
	}
	return c.apply(op, graph.Attrs{Axes: axes, KeepDims: keep}, x)
}

// mapArg: select_last_index runs the op on the axis reversed and maps the
// index back (n-1-i), so ties pick the last position.
func mapArg(c *ctx, op graph.Op) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, err
	}
	keep, err := c.attrBool("keepdims", true)
	if err != nil {
		return nil, err
	}
	last, err := c.attrBool("select_last_index", false)
	if err != nil {
		return nil, err
	}
	ax, err := axis(int(a), x.Shape.Rank())
	if err != nil {
		return nil, err
	}
	if !last {
		return c.apply(op, graph.Attrs{Axis: ax, KeepDims: keep}, x)
	}
	rev := c.g.Slice(x, graph.SliceSpec{Axes: []int{ax}, Starts: []int{-1}, Ends: []int{-1 << 62}, Steps: []int{-1}})
	idx, err := c.apply(op, graph.Attrs{Axis: ax, KeepDims: keep}, rev)
	if err != nil {
		return nil, err
	}
	return c.g.Sub(c.constLike(tensor.I64, float64(x.Shape[ax]-1)), idx), nil
}

func mapCumSum(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	ax, err := c.ints(1, "axis")
	if err != nil {
		return nil, err
	}
	if len(ax) != 1 {
		return nil, unsupportedf("axis must hold one value, got %v", ax)
	}
	excl, err := c.attrBool("exclusive", false)
	if err != nil {
		return nil, err
	}
	rev, err := c.attrBool("reverse", false)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpCumSum, graph.Attrs{Axis: ax[0], Exclusive: excl, Reverse: rev}, x)
}

// mapLayerNorm: scale and bias broadcast to the normalised shape in ONNX;
// kiln wants them exactly that shape, so they are expanded when needed.
func mapLayerNorm(c *ctx) ([]*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	a, err := c.attrInt("axis", -1)
	if err != nil {
		return nil, err
	}
	eps, err := c.attrFloat("epsilon", 1e-5)
	if err != nil {
		return nil, err
	}
	ax, err := axis(int(a), x.Shape.Rank())
	if err != nil {
		return nil, err
	}
	norm := x.Shape[ax:]
	fit := func(i int) (*graph.Node, error) {
		p := c.in(i)
		if p == nil {
			return nil, nil
		}
		if p.DType != x.DType {
			p = c.g.Cast(p, x.DType)
		}
		if !p.Shape.Equal(norm) {
			if p.Shape.Rank() > norm.Rank() {
				p = c.g.Reshape(p, p.Shape.TrimLeadingOnes(norm.Rank())...)
			}
			p = c.g.Expand(p, norm...)
		}
		return p, nil
	}
	scale, err := fit(1)
	if err != nil {
		return nil, err
	}
	if scale == nil {
		return nil, unsupportedf("missing Scale input")
	}
	bias, _ := fit(2)
	y, err := c.apply(graph.OpLayerNorm, graph.Attrs{Axis: ax, Eps: eps}, nonNil(x, scale, bias)...)
	if err != nil || !c.used(1) && !c.used(2) {
		return []*graph.Node{y}, err
	}
	stash, err := c.attrInt("stash_type", 1)
	if err != nil {
		return nil, err
	}
	if stash != typeFloat {
		return nil, unsupportedf("the Mean and InvStdDev outputs with stash_type %s", TypeName(int32(stash)))
	}
	mean, inv := layerNormStats(c.g, x, ax, eps)
	return []*graph.Node{y, mean, inv}, nil
}

// layerNormStats computes LayerNormalization's optional Mean and
// InvStdDev outputs: float32 (the stash type), with the normalised dims
// kept as ones. They are separate nodes from the fused OpLayerNorm, which
// does not expose its statistics; models that read them are rare.
func layerNormStats(g *graph.Graph, x *graph.Node, ax int, eps float32) (mean, inv *graph.Node) {
	if x.DType != tensor.F32 {
		x = g.Cast(x, tensor.F32)
	}
	axes := make([]int, 0, x.Shape.Rank()-ax)
	for i := ax; i < x.Shape.Rank(); i++ {
		axes = append(axes, i)
	}
	mean = g.ReduceMean(x, true, axes...)
	d := g.Sub(x, mean)
	variance := g.ReduceMean(g.Mul(d, d), true, axes...)
	return mean, g.Rsqrt(g.Add(variance, g.Scalar(eps)))
}

func nonNil(ns ...*graph.Node) []*graph.Node {
	out := ns[:0:0]
	for _, n := range ns {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

func mapBatchNorm(c *ctx) ([]*graph.Node, error) {
	for i := 1; i < len(c.n.Outputs); i++ {
		if c.used(i) {
			return nil, unsupportedf("training outputs (running mean and variance)")
		}
	}
	train, err := c.attrBool("training_mode", false)
	if err != nil {
		return nil, err
	}
	if train {
		return nil, unsupportedf("training_mode=1")
	}
	eps, err := c.attrFloat("epsilon", 1e-5)
	if err != nil {
		return nil, err
	}
	var ins [5]*graph.Node
	for i := range ins {
		if ins[i], err = c.need(i); err != nil {
			return nil, err
		}
		if ins[i].DType != ins[0].DType { // opset 15 allows other types for the stats
			ins[i] = c.g.Cast(ins[i], ins[0].DType)
		}
	}
	y, err := c.apply(graph.OpBatchNorm, graph.Attrs{Eps: eps}, ins[:]...)
	return []*graph.Node{y}, err
}
