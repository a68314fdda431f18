package onnx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The window generators take their length as a (scalar) input, which
// exporters make a constant: kiln evaluates the window at import and the
// node becomes a constant. A length computed at run time would make the
// output's shape dynamic, which kiln's static shapes cannot hold.

func init() {
	// cosineSum windows: w[n] = Σ_k (-1)^k a_k cos(2πkn/N₁).
	for name, a := range map[string][]float64{
		"HannWindow":     {0.5, 0.5},
		"HammingWindow":  {25.0 / 46, 1 - 25.0/46}, // ONNX's α = 25/46, β = 1 - α
		"BlackmanWindow": {0.42, 0.5, 0.08},
	} {
		register(name, 17, one(func(c *ctx) (*graph.Node, error) { return mapWindow(c, name, a) }))
	}
}

func mapWindow(c *ctx, name string, coeffs []float64) (*graph.Node, error) {
	if !c.has(0) {
		return nil, fmt.Errorf("missing required input 0 (size)")
	}
	size, ok := c.scalar(0)
	if !ok {
		return nil, unsupportedf("%s size (input 0) must be a scalar known at import time, but it is computed at run time", name)
	}
	periodic, err := c.attrBool("periodic", true)
	if err != nil {
		return nil, err
	}
	odt, err := c.attrInt("output_datatype", 1) // FLOAT
	if err != nil {
		return nil, err
	}
	dt, err := DType(int32(odt))
	if err != nil || dt == tensor.Bool {
		return nil, unsupportedf("%s output_datatype=%s", name, TypeName(int32(odt)))
	}
	if size < 0 || size > 1<<30 || size != math.Trunc(size) {
		return nil, fmt.Errorf("%s size %v is not a length", name, size)
	}
	t, err := tensor.FromFloat64s(dt, tensor.Shape{int(size)}, cosineWindow(int(size), periodic, coeffs))
	if err != nil {
		return nil, err
	}
	return c.g.Constant(t), nil
}

// cosineWindow is the window of n points: N₁ = n for a periodic window
// (the first n of n+1 symmetric points, as for spectral analysis), n-1
// for a symmetric one. A symmetric window of one point is [1], as
// torch's, where the formula would divide by zero.
func cosineWindow(n int, periodic bool, coeffs []float64) []float64 {
	n1 := float64(n)
	if !periodic {
		n1--
	}
	w := make([]float64, n)
	for i := range w {
		if n1 == 0 {
			w[i] = 1
			continue
		}
		s, sign := 0.0, 1.0
		for k, a := range coeffs {
			s += sign * a * math.Cos(2*math.Pi*float64(k)*float64(i)/n1)
			sign = -sign
		}
		w[i] = s
	}
	return w
}
