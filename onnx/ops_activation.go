package onnx

import (
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Activations with attributes, trig and hyperbolic functions, Sign,
// IsNaN/IsInf, Mod, BitShift and Xor.

func init() {
	unary := map[string]struct {
		op    graph.Op
		since int64
	}{
		"Softplus": {graph.OpSoftplus, 1}, "Softsign": {graph.OpSoftsign, 1},
		"Tan": {graph.OpTan, 7}, "Asin": {graph.OpAsin, 7}, "Acos": {graph.OpAcos, 7}, "Atan": {graph.OpAtan, 7},
		"Sinh": {graph.OpSinh, 9}, "Cosh": {graph.OpCosh, 9}, "Asinh": {graph.OpAsinh, 9},
		"Acosh": {graph.OpAcosh, 9}, "Atanh": {graph.OpAtanh, 9}, "Sign": {graph.OpSign, 9},
	}
	for name, u := range unary {
		register(name, u.since, one(func(c *ctx) (*graph.Node, error) {
			x, err := c.need(0)
			if err != nil {
				return nil, err
			}
			return c.apply(u.op, graph.Attrs{}, x)
		}))
	}
	// alpha-only activations: op, default alpha, first opset.
	for name, a := range map[string]struct {
		op    graph.Op
		alpha float32
		since int64
	}{
		"Elu": {graph.OpElu, 1, 6}, "Celu": {graph.OpCelu, 1, 12}, "ThresholdedRelu": {graph.OpThresholdedRelu, 1, 10},
	} {
		register(name, a.since, one(func(c *ctx) (*graph.Node, error) {
			x, err := c.need(0)
			if err != nil {
				return nil, err
			}
			alpha, err := c.attrFloat("alpha", a.alpha)
			if err != nil {
				return nil, err
			}
			if a.op == graph.OpCelu && alpha == 0 {
				return nil, unsupportedf("Celu alpha=0 (the formula divides by alpha)")
			}
			return c.apply(a.op, graph.Attrs{Alpha: alpha}, x)
		}))
	}
	register("Selu", 6, one(mapSelu))
	register("Shrink", 9, one(mapShrink))
	register("IsNaN", 9, one(mapIsNaN))
	register("IsInf", 10, one(mapIsInf))
	register("Mod", 10, one(mapMod))
	register("BitShift", 11, one(mapBitShift))
	register("Xor", 7, one(func(c *ctx) (*graph.Node, error) { return c.binary(graph.OpXor) }))
}

func mapSelu(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	// ONNX's defaults, the float32 values of Klambauer et al.'s constants.
	alpha, err := c.attrFloat("alpha", 1.67326319217681884765625)
	if err != nil {
		return nil, err
	}
	gamma, err := c.attrFloat("gamma", 1.05070102214813232421875)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpSelu, graph.Attrs{Alpha: alpha, Beta: gamma}, x)
}

func mapShrink(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	lambd, err := c.attrFloat("lambd", 0.5)
	if err != nil {
		return nil, err
	}
	bias, err := c.attrFloat("bias", 0)
	if err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		return nil, unsupportedf("Shrink on %v tensors", x.DType)
	}
	return c.apply(graph.OpShrink, graph.Attrs{Alpha: lambd, Beta: bias}, x)
}

// mapIsNaN is not(x == x): only NaN differs from itself. The comparison
// runs on every backend and fuses with its neighbours.
func mapIsNaN(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		return nil, unsupportedf("IsNaN on %v tensors", x.DType)
	}
	eq, err := c.apply(graph.OpEqual, graph.Attrs{}, x, x)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpNot, graph.Attrs{}, eq)
}

// mapIsInf compares with the infinities the attributes ask for: |x| ==
// +Inf for both signs, x == ±Inf for one, all false for neither.
func mapIsInf(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		return nil, unsupportedf("IsInf on %v tensors", x.DType)
	}
	neg, err := c.attrBool("detect_negative", true)
	if err != nil {
		return nil, err
	}
	pos, err := c.attrBool("detect_positive", true)
	if err != nil {
		return nil, err
	}
	switch {
	case neg && pos:
		a, err := c.apply(graph.OpAbs, graph.Attrs{}, x)
		if err != nil {
			return nil, err
		}
		return c.apply(graph.OpEqual, graph.Attrs{}, a, c.constLike(x.DType, math.Inf(1)))
	case pos:
		return c.apply(graph.OpEqual, graph.Attrs{}, x, c.constLike(x.DType, math.Inf(1)))
	case neg:
		return c.apply(graph.OpEqual, graph.Attrs{}, x, c.constLike(x.DType, math.Inf(-1)))
	}
	f, _ := tensor.FromBool(tensor.Shape{}, []bool{false})
	return c.g.Expand(c.g.Constant(f), x.Shape...), nil
}

// mapMod: fmod=1 is C's fmod (Fmod), fmod=0 the remainder with the
// divisor's sign (Mod). ONNX requires fmod=1 for floats; its reference
// computes numpy.mod for fmod=0 there, and so does kiln's Mod.
func mapMod(c *ctx) (*graph.Node, error) {
	fmod, err := c.attrInt("fmod", 0)
	if err != nil {
		return nil, err
	}
	switch fmod {
	case 0:
		return c.binary(graph.OpMod)
	case 1:
		return c.binary(graph.OpFmod)
	}
	return nil, unsupportedf("Mod fmod=%d (want 0 or 1)", fmod)
}

func mapBitShift(c *ctx) (*graph.Node, error) {
	dir, err := c.attrString("direction", "")
	if err != nil {
		return nil, err
	}
	switch dir {
	case "LEFT":
		return c.binary(graph.OpShiftLeft)
	case "RIGHT":
		return c.binary(graph.OpShiftRight)
	}
	return nil, unsupportedf("BitShift direction=%q (want LEFT or RIGHT)", dir)
}
