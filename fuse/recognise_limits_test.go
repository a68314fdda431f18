package fuse_test

import (
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// actLimitInputs are the values the recognised activations are checked
// at: ±Inf, NaN, huge values, the tails where the gates underflow or
// saturate, and ordinary values (32 of them, so that every assembly
// variant computes them in its vector body). Not beyond ±1.7e38: there
// torch's GELU export, x·(1 + erf(x/√2))·0.5, overflows in its
// intermediate x·2 and gives +Inf where Gelu gives x (see
// recogniseActivations).
func actLimitInputs() []float32 {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negz := float32(math.Copysign(0, -1))
	xs := []float32{-inf, inf, nan, -1.5e38, 1.5e38, -1e30, 1e30, -200, 200, -100, 100,
		-20, 20, -9, 9, negz, 0, -1, 1, -0.5, 0.5, 1e-30, -1e-30, -2.5, 2.5}
	for len(xs) < 32 {
		xs = append(xs, -inf, inf, nan)
	}
	return xs[:32]
}

// spelledActivations are the exporters' spellings the recognise pass
// rewrites into one op.
var spelledActivations = []struct {
	name  string
	want  graph.Op
	build func(g *graph.Graph, x *graph.Node) *graph.Node
}{
	{"gelu torch export", graph.OpGelu, func(g *graph.Graph, x *graph.Node) *graph.Node {
		return g.Mul(g.Mul(x, g.Add(g.Erf(g.Div(x, g.Scalar(float32(math.Sqrt2)))), g.Scalar(1))), g.Scalar(0.5))
	}},
	{"gelu tanh", graph.OpGeluTanh, func(g *graph.Graph, x *graph.Node) *graph.Node {
		inner := g.Mul(g.Scalar(float32(math.Sqrt(2/math.Pi))), g.Add(x, g.Mul(g.Scalar(0.044715), g.Pow(x, g.Scalar(3)))))
		return g.Mul(g.Mul(g.Scalar(0.5), x), g.Add(g.Scalar(1), g.Tanh(inner)))
	}},
	{"silu as torch exports it", graph.OpSilu, func(g *graph.Graph, x *graph.Node) *graph.Node {
		return g.Mul(g.Sigmoid(x), x)
	}},
	{"silu as a division", graph.OpSilu, func(g *graph.Graph, x *graph.Node) *graph.Node {
		return g.Div(x, g.Add(g.Scalar(1), g.Exp(g.Neg(x))))
	}},
	{"sigmoid spelled", graph.OpSigmoid, func(g *graph.Graph, x *graph.Node) *graph.Node {
		return g.Reciprocal(g.Add(g.Scalar(1), g.Exp(g.Neg(x))))
	}},
}

// TestRecognisedActivationLimits: a spelled-out activation the recognise
// pass turns into one op computes, compiled with every pass, what the
// spelled-out graph computes on the reference kernels at ±Inf, NaN and
// the float32 extremes too, with the reference kernels and with the fast
// ones: x·sigmoid(x) is NaN at -Inf (-Inf·0), and so must Silu be (fuzz
// seeds 8297093 and 8309585 found Silu giving -0 there).
func TestRecognisedActivationLimits(t *testing.T) {
	xs := actLimitInputs()
	for _, c := range spelledActivations {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			g.Output(c.build(g, g.Input("x", tensor.F32, len(xs))))
			in, err := tensor.FromF32(tensor.Shape{len(xs)}, xs)
			if err != nil {
				t.Fatal(err)
			}
			feeds := map[string]tensor.Tensor{"x": in}
			want := interpret(t, g, feeds)[0].F32()
			for _, ref := range []bool{true, false} {
				got, cg := compiledRun(t, session(true, ref), g, feeds)
				if rep := cg.Report(); !strings.Contains(rep, "("+c.want.String()+")") {
					t.Fatalf("reference kernels %v: %v not recognised:\n%s", ref, c.want, rep)
				}
				for i, w := range want {
					v := got[0].F32()[i]
					// Finite values within the spelled-out form's own rounding
					// (1 + erf(z) cancels in its negative tail), relative to
					// max(1, |want|); NaN only for NaN, an infinity only for
					// itself.
					if !approx.Close(float64(v), float64(w), 1e-6*max(1, math.Abs(float64(w)))) {
						t.Errorf("reference kernels %v: %v(%v) = %v, spelled out %v", ref, c.want, xs[i], v, w)
					}
				}
			}
		})
	}
}

// TestRecogniseActivationInfinityMisses: cones equal to an activation at
// every finite point but not at an infinity stay spelled out, so the
// compiled graph computes what the spelled-out one does there.
func TestRecogniseActivationInfinityMisses(t *testing.T) {
	xs := actLimitInputs()
	for name, build := range map[string]func(g *graph.Graph, x *graph.Node) *graph.Node{
		// x·(1 - sigmoid(-x)) = x·sigmoid(x), but NaN at +Inf (Inf - Inf·0).
		"silu as x minus x·sigmoid(-x)": func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Sub(x, g.Mul(x, g.Sigmoid(g.Neg(x))))
		},
		// e^x/(1 + e^x) = sigmoid(x), but Inf/Inf = NaN at +Inf.
		"sigmoid as exp over one plus exp": func(g *graph.Graph, x *graph.Node) *graph.Node {
			e := g.Exp(x)
			return g.Div(e, g.Add(g.Scalar(1), e))
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			g.Output(build(g, g.Input("x", tensor.F32, len(xs))))
			in, err := tensor.FromF32(tensor.Shape{len(xs)}, xs)
			if err != nil {
				t.Fatal(err)
			}
			feeds := map[string]tensor.Tensor{"x": in}
			want := interpret(t, g, feeds)
			got, cg := compiledRun(t, session(true, true), g, feeds)
			rep := cg.Report()
			for _, op := range []graph.Op{graph.OpSilu, graph.OpSigmoid} {
				if strings.Contains(rep, "("+op.String()+")") {
					t.Errorf("recognised as %v:\n%s", op, rep)
				}
			}
			if err := agree(got, want, 1e-6); err != nil {
				t.Error(err)
			}
		})
	}
}
