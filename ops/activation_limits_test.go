package ops

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The x·gate(x) activations are their formulas in IEEE arithmetic at the
// infinities: +Inf at +Inf and NaN at -Inf (-Inf·0, as the spelled-out
// Mul(Sigmoid(x), x) computes; fuzz seeds 8297093 and 8309585 found Silu
// giving -0 there), and underflow to -0 in the finite negative tail.
func TestGatedActivationLimits(t *testing.T) {
	inf := math.Inf(1)
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		for _, op := range []graph.Op{graph.OpGelu, graph.OpGeluTanh, graph.OpSilu} {
			g := graph.New()
			x := g.Input("x", dt, 5)
			g.Output(g.Apply(op, graph.Attrs{}, x))
			vals := []float64{-inf, inf, math.NaN(), -1e30, float64(float32(3e38))}
			in, err := tensor.FromF64(tensor.Shape{5}, vals)
			if dt == tensor.F32 {
				f := make([]float32, len(vals))
				for i, v := range vals {
					f[i] = float32(v)
				}
				in, err = tensor.FromF32(tensor.Shape{5}, f)
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := Interpret(g, map[string]tensor.Tensor{"x": in})
			if err != nil {
				t.Fatal(err)
			}
			got := out[0].Float64s()
			if !math.IsNaN(got[0]) {
				t.Errorf("%v %v(-Inf) = %v, want NaN", dt, op, got[0])
			}
			if !math.IsInf(got[1], 1) {
				t.Errorf("%v %v(+Inf) = %v, want +Inf", dt, op, got[1])
			}
			if !math.IsNaN(got[2]) {
				t.Errorf("%v %v(NaN) = %v, want NaN", dt, op, got[2])
			}
			if got[3] != 0 || !math.Signbit(got[3]) {
				t.Errorf("%v %v(-1e30) = %v, want -0", dt, op, got[3])
			}
			if want := float64(float32(3e38)); got[4] != want {
				t.Errorf("%v %v(3e38) = %v, want %v", dt, op, got[4], want)
			}
		}
	}
}
