package msl

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestHostPow compiles Pow, Sin and Cos kernels as C++ and compares them
// with the CPU reference: integer Pow wrapping in every integer dtype
// (results far past 2^24, where a float pow is inexact), float Pow over
// every pair of its special values and negative bases, and Sin/Cos of
// large arguments. The host's pow/sin/cos stand in for Metal's precise
// ones, so this checks the generated code, not Apple's libm.
func TestHostPow(t *testing.T) {
	h := &hostBuilder{t: t, g: graph.New(), rng: rand.New(rand.NewPCG(5, 6))}
	emit := emitNode
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		s := tensor.Shape{64}
		x := ints(dt, s, func(i int) int64 { return int64(i*7919%201) - 100 })
		y := ints(dt, s, func(i int) int64 { return int64(i * 13 % 45) })
		if dt == tensor.U8 {
			x = ints(dt, s, func(i int) int64 { return int64(i * 7919 % 256) })
		}
		h.add(h.g.Pow(h.input(x), h.input(y)), []tensor.Tensor{x, y}, 0, emit)
	}
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, -0.5, 3, -3, 1.5, 1e-3, 100}
	var xs, ys []float64
	for _, a := range specials {
		for _, b := range specials {
			xs, ys = append(xs, a), append(ys, b)
		}
	}
	s := tensor.Shape{len(xs)}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16} {
		x, _ := tensor.FromFloat64s(dt, s, xs)
		y, _ := tensor.FromFloat64s(dt, s, ys)
		h.add(h.g.Pow(h.input(x), h.input(y)), []tensor.Tensor{x, y}, 2e-6, emit)
	}
	big := hostData(h.rng, tensor.F32, tensor.Shape{200}, false, 0)
	for i, v := range big.F32() {
		big.F32()[i] = v * float32(math.Pow(10, float64(i%30)))
	}
	bi := h.input(big)
	h.add(h.g.Sin(bi), []tensor.Tensor{big}, 2e-6, emit)
	h.add(h.g.Cos(bi), []tensor.Tensor{big}, 2e-6, emit)
	outs := runHost(t, h.cases)
	for i, c := range h.cases {
		compareHost(t, c, outs[i])
	}
}

// TestPowSource checks the MSL forms: float Pow must be precise::pow
// (fast::pow is undefined for negative bases), integer Pow an exact loop
// rather than a float pow rounded back.
func TestPowSource(t *testing.T) {
	for _, c := range []struct {
		dt           tensor.DType
		want, reject string
	}{
		{tensor.F32, "precise::pow(v0, v1)", "rint"},
		{tensor.BF16, "precise::pow(v0, v1)", "rint"},
		{tensor.I32, "pr *= pb", "pow("},
		{tensor.I64, "pr *= pb", "pow("},
	} {
		k, err := EmitElementwise(&Elementwise{Name: "p", Shape: []int{4}, Out: c.dt,
			Inputs: []Operand{{DType: c.dt, Strides: []int{1}}, {DType: c.dt, Strides: []int{0}}},
			Body:   []Instr{{Op: graph.OpPow, Args: []int{0, 1}, DType: c.dt}}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(k.Source, c.want) || strings.Contains(k.Source, c.reject) {
			t.Errorf("%v Pow:\n%s", c.dt, k.Source)
		}
	}
}
