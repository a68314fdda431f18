package onnx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// supports reports, as an unsupported-feature error, an op kiln's
// catalogue has no kernel for on dt.
func (c *ctx) supports(op graph.Op, dt tensor.DType) error {
	if e, err := ops.Lookup(op); err != nil || !e.Supports(dt) {
		return unsupportedf("%v on %v tensors", op, dt)
	}
	return nil
}

// apply adds an op after checking that kiln has a kernel for the dtype
// of its first input, so a model using, say, Abs on uint8 is reported as
// unsupported rather than failing to compile. A node the builder refuses
// (inputs that do not broadcast, say) is the builder's recorded error
// here, so the mapping stops instead of building on an invalid node.
func (c *ctx) apply(op graph.Op, a graph.Attrs, ins ...*graph.Node) (*graph.Node, error) {
	if len(ins) > 0 && ins[0].Valid() {
		key := ins[0].DType
		if op == graph.OpWhere {
			key = tensor.Bool
		}
		if err := c.supports(op, key); err != nil {
			return nil, err
		}
	}
	n := c.g.Apply(op, a, ins...)
	if !n.Valid() {
		if err := c.g.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%v: the graph builder refused the node", op)
	}
	return n, nil
}

func init() {
	unary := map[string]graph.Op{
		"Neg": graph.OpNeg, "Abs": graph.OpAbs, "Exp": graph.OpExp, "Log": graph.OpLog,
		"Sqrt": graph.OpSqrt, "Reciprocal": graph.OpReciprocal, "Tanh": graph.OpTanh,
		"Sigmoid": graph.OpSigmoid, "Relu": graph.OpRelu, "Erf": graph.OpErf, "Floor": graph.OpFloor,
		"Ceil": graph.OpCeil, "Round": graph.OpRound, "Sin": graph.OpSin, "Cos": graph.OpCos,
		"Not": graph.OpNot,
	}
	for name, op := range unary {
		register(name, 1, one(func(c *ctx) (*graph.Node, error) {
			x, err := c.need(0)
			if err != nil {
				return nil, err
			}
			return c.apply(op, graph.Attrs{}, x)
		}))
	}
	binary := map[string]graph.Op{
		"Add": graph.OpAdd, "Sub": graph.OpSub, "Mul": graph.OpMul, "Div": graph.OpDiv,
		"Equal": graph.OpEqual, "Less": graph.OpLess, "Greater": graph.OpGreater,
		"LessOrEqual": graph.OpLessOrEqual, "GreaterOrEqual": graph.OpGreaterOrEqual,
		"And": graph.OpAnd, "Or": graph.OpOr,
	}
	for name, op := range binary {
		since := int64(1)
		if op == graph.OpLessOrEqual || op == graph.OpGreaterOrEqual {
			since = 12
		}
		register(name, since, one(func(c *ctx) (*graph.Node, error) { return c.binary(op) }))
	}
	register("Pow", 1, one(mapPow))
	register("LeakyRelu", 1, one(mapLeakyRelu))
	register("Gelu", 20, one(mapGelu))
	register("Clip", 11, one(mapClip))
	register("PRelu", 1, one(mapPRelu))
	register("HardSigmoid", 1, one(mapHardSigmoid))
	register("HardSwish", 14, one(mapHardSwish))
	register("Where", 1, one(mapWhere))
	for name, op := range map[string]graph.Op{"Max": graph.OpMax, "Min": graph.OpMin, "Sum": graph.OpAdd, "Mean": graph.OpAdd} {
		register(name, 1, one(func(c *ctx) (*graph.Node, error) { return c.variadic(name, op) }))
	}
	register("Cast", 1, one(mapCast))
	register("CastLike", 15, one(mapCastLike))
	register("Identity", 1, one(func(c *ctx) (*graph.Node, error) { return c.need(0) }))
	register("Dropout", 1, mapDropout)
}

func (c *ctx) binary(op graph.Op) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	y, err := c.need(1)
	if err != nil {
		return nil, err
	}
	return c.apply(op, graph.Attrs{}, x, y)
}

// variadic folds Max, Min, Sum and Mean over any number of inputs.
func (c *ctx) variadic(name string, op graph.Op) (*graph.Node, error) {
	acc, err := c.need(0)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(c.ins); i++ {
		x, err := c.need(i)
		if err != nil {
			return nil, err
		}
		if acc, err = c.apply(op, graph.Attrs{}, acc, x); err != nil {
			return nil, err
		}
	}
	if name == "Mean" && len(c.ins) > 1 {
		return c.apply(graph.OpDiv, graph.Attrs{}, acc, c.constLike(acc.DType, float64(len(c.ins))))
	}
	return acc, nil
}

// constLike is a scalar constant of dtype dt (dt must be valid: callers
// pass the dtype of a node apply returned).
func (c *ctx) constLike(dt tensor.DType, v float64) *graph.Node {
	t, err := tensor.FromFloat64s(dt, tensor.Shape{}, []float64{v})
	if err != nil {
		t = tensor.New(dt)
	}
	return c.g.Constant(t)
}

// mapPow: ONNX lets the exponent have another type; kiln casts it to the
// base's.
func mapPow(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	y, err := c.need(1)
	if err != nil {
		return nil, err
	}
	if y.DType != x.DType {
		y = c.g.Cast(y, x.DType)
	}
	return c.apply(graph.OpPow, graph.Attrs{}, x, y)
}

func mapLeakyRelu(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	alpha, err := c.attrFloat("alpha", 0.01)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpLeakyRelu, graph.Attrs{Alpha: alpha}, x)
}

func mapGelu(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	approx, err := c.attrString("approximate", "none")
	if err != nil {
		return nil, err
	}
	switch approx {
	case "none":
		return c.apply(graph.OpGelu, graph.Attrs{}, x)
	case "tanh":
		return c.apply(graph.OpGeluTanh, graph.Attrs{}, x)
	}
	return nil, unsupportedf("approximate=%q", approx)
}

// mapClip uses kiln's Clip when the bounds are known scalars with
// min <= max, and Max/Min nodes otherwise (run-time bounds, or min > max
// where ONNX, like numpy, yields max everywhere).
func mapClip(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	static := true
	if c.has(1) {
		v, ok := c.scalar(1)
		static = static && ok
		lo = v
	}
	if c.has(2) {
		v, ok := c.scalar(2)
		static = static && ok
		hi = v
	}
	if static && lo <= hi {
		return c.apply(graph.OpClip, graph.Attrs{Min: float32(lo), Max: float32(hi)}, x)
	}
	out := x
	if c.has(1) {
		if out, err = c.apply(graph.OpMax, graph.Attrs{}, out, c.in(1)); err != nil {
			return nil, err
		}
	}
	if c.has(2) {
		return c.apply(graph.OpMin, graph.Attrs{}, out, c.in(2))
	}
	return out, nil
}

// mapPRelu: x where x >= 0, slope*x elsewhere (slope broadcasts).
func mapPRelu(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	slope, err := c.need(1)
	if err != nil {
		return nil, err
	}
	neg, err := c.apply(graph.OpLess, graph.Attrs{}, x, c.constLike(x.DType, 0))
	if err != nil {
		return nil, err
	}
	scaled, err := c.apply(graph.OpMul, graph.Attrs{}, x, slope)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpWhere, graph.Attrs{}, neg, scaled, x)
}

// mapHardSigmoid: clip(alpha*x + beta, 0, 1).
func mapHardSigmoid(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	alpha, err := c.attrFloat("alpha", 0.2)
	if err != nil {
		return nil, err
	}
	beta, err := c.attrFloat("beta", 0.5)
	if err != nil {
		return nil, err
	}
	return hardSigmoid(c, x, float64(alpha), float64(beta))
}

// mapHardSwish: x · HardSigmoid(x) with alpha 1/6 and beta 1/2, which is
// x·relu6(x + 3)/6 (MobileNetV3's activation). The chain fuses into one
// elementwise region, which every backend runs.
func mapHardSwish(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	h, err := hardSigmoid(c, x, 1.0/6, 0.5)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpMul, graph.Attrs{}, x, h)
}

// hardSigmoid is clip(alpha·x + beta, 0, 1) on x.
func hardSigmoid(c *ctx, x *graph.Node, alpha, beta float64) (*graph.Node, error) {
	y, err := c.apply(graph.OpMul, graph.Attrs{}, x, c.constLike(x.DType, alpha))
	if err != nil {
		return nil, err
	}
	if y, err = c.apply(graph.OpAdd, graph.Attrs{}, y, c.constLike(x.DType, beta)); err != nil {
		return nil, err
	}
	return c.apply(graph.OpClip, graph.Attrs{Min: 0, Max: 1}, y)
}

func mapWhere(c *ctx) (*graph.Node, error) {
	var ins [3]*graph.Node
	for i := range ins {
		var err error
		if ins[i], err = c.need(i); err != nil {
			return nil, err
		}
	}
	return c.apply(graph.OpWhere, graph.Attrs{}, ins[:]...)
}

func mapCast(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	to, err := c.attrInt("to", 0)
	if err != nil {
		return nil, err
	}
	dt, err := DType(int32(to))
	if err != nil {
		return nil, unsupportedf("cast to %s", TypeName(int32(to)))
	}
	if x.DType == dt {
		return x, nil
	}
	return c.apply(graph.OpCast, graph.Attrs{To: dt}, x)
}

func mapCastLike(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	if _, err := c.need(1); err != nil {
		return nil, err
	}
	dt := c.dtype(1)
	if x.DType == dt {
		return x, nil
	}
	return c.apply(graph.OpCast, graph.Attrs{To: dt}, x)
}

// mapDropout is the identity at inference; its mask output is all true.
func mapDropout(c *ctx) ([]*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	if c.has(2) {
		train, ok := c.scalar(2)
		if !ok {
			return nil, unsupportedf("training_mode computed at run time")
		}
		if train != 0 {
			return nil, unsupportedf("training_mode=true")
		}
	}
	outs := []*graph.Node{x, nil}
	if c.used(1) {
		one, _ := tensor.FromBool(tensor.Shape{}, []bool{true})
		outs[1] = c.g.Expand(c.g.Constant(one), x.Shape...)
	}
	return outs, nil
}
