package asm

import "math"

// The float64 formulas of the activations, which are also the reference
// formulas of kiln's ops of the same names. They are written here, once:
// ops imports asm (asm cannot import ops), Activation.Apply needs them,
// and ops' elementwise table (ops/elementwise.go) takes the formula of
// Relu, Gelu, GeluTanh, Silu, Sigmoid and Tanh from Activation.Formula
// instead of writing its own. A table owned here, rather than a hook ops
// sets at start-up, keeps asm correct on its own (its tests, and any
// program that links asm without ops) with no initialisation order to
// get right.
var actFormulas = [numActs]func(x float64) float64{
	ActNone: nil,
	// x < 0 rather than max(x, 0) keeps NaN as NaN (and -0 as -0).
	ActRelu: func(x float64) float64 {
		if x < 0 {
			return 0
		}
		return x
	},
	// 1 + erf(z) and 1 + tanh(z) cancel to 0 for z below about -6 and -18,
	// which would make GELU -0 where its true value is still a normal
	// float32 (and Log of it -Inf instead of NaN): the gates are written
	// as erfc and as a sigmoid, which keep their relative precision in
	// the tail.
	//
	// The x·gate(x) activations are their formulas in IEEE arithmetic at
	// the infinities too (see graph.Silu): +Inf at +Inf, and NaN at -Inf,
	// where the gate is 0 and -Inf·0 is NaN (or -Inf/Inf, as written
	// here), as in PyTorch, ONNX Runtime and ONNX's own reference, and as
	// in the spelled-out forms that fuse recognises as these ops.
	ActGelu: func(x float64) float64 { return x / 2 * math.Erfc(-x/math.Sqrt2) },
	ActGeluTanh: func(x float64) float64 {
		return x / (1 + math.Exp(-2*sqrt2OverPi*(x+0.044715*x*x*x)))
	},
	ActSilu:    func(x float64) float64 { return x / (1 + math.Exp(-x)) },
	ActSigmoid: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	ActTanh:    math.Tanh,
}

// sqrt2OverPi is the constant of the tanh approximation of GELU.
var sqrt2OverPi = math.Sqrt(2 / math.Pi)

// Formula is the activation's float64 formula (nil for ActNone and
// unknown values).
func (a Activation) Formula() func(x float64) float64 {
	if a < numActs {
		return actFormulas[a]
	}
	return nil
}
