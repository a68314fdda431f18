package ops

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Gated activations must reach their limits at ±Inf instead of the NaN
// that -Inf·0 gives in the plain formula.
func TestGatedActivationLimits(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, op := range []graph.Op{graph.OpGelu, graph.OpGeluTanh, graph.OpSilu} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 4)
		g.Output(g.Apply(op, graph.Attrs{}, x))
		in, _ := tensor.FromF32(tensor.Shape{4}, []float32{-inf, inf, float32(math.NaN()), -1e30})
		out, err := Interpret(g, map[string]tensor.Tensor{"x": in})
		if err != nil {
			t.Fatal(err)
		}
		got := out[0].F32()
		if got[0] != 0 || !math.Signbit(float64(got[0])) {
			t.Errorf("%v(-Inf) = %v, want -0", op, got[0])
		}
		if !math.IsInf(float64(got[1]), 1) {
			t.Errorf("%v(+Inf) = %v, want +Inf", op, got[1])
		}
		if !math.IsNaN(float64(got[2])) {
			t.Errorf("%v(NaN) = %v, want NaN", op, got[2])
		}
		if got[3] != 0 {
			t.Errorf("%v(-1e30) = %v, want 0", op, got[3])
		}
	}
}
