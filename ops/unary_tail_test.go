package ops

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// TestGeluTails: the reference GELUs keep their relative precision far
// into the negative tail, where 1 + erf and 1 + tanh cancel to 0 in
// float64. They used to return -0 there, so Log of a GELU gave -Inf in
// the reference and NaN from the (accurate) fast kernel (cmd/fuzz seeds
// 1298, 1416, 1804, 1912, 1236). The expectations come from the
// asymptotic series Φ(-x) = φ(x)/x·(1 - 1/x² + 3/x⁴ - 15/x⁶ + 105/x⁸)
// and 1 + tanh(u) = 2e^(2u)/(1 + e^(2u)) expanded, not from erfc.
func TestGeluTails(t *testing.T) {
	phiTail := func(x float64) float64 { // Φ(-x) for large x
		z := 1 / (x * x)
		return math.Exp(-x*x/2) / (x * math.Sqrt(2*math.Pi)) * (1 - z + 3*z*z - 15*z*z*z + 105*z*z*z*z)
	}
	xs := []float64{-9.5, -12, -15}
	gelu := make([]float64, len(xs))
	for i, x := range xs {
		gelu[i] = x * phiTail(-x)
	}
	run := func(op func(g *graph.Graph, n *graph.Node) *graph.Node) []float64 {
		g := graph.New()
		n := op(g, g.Input("x", tensor.F32, len(xs)))
		return hcRun(t, n, hcT(t, tensor.F32, tensor.Shape{len(xs)}, xs...))
	}
	got := run(func(g *graph.Graph, n *graph.Node) *graph.Node { return g.Gelu(n) })
	for i, w := range gelu {
		w = float64(float32(w))
		if approx.Far(got[i], w, 1e-5*math.Abs(w)) || math.Signbit(got[i]) != math.Signbit(w) {
			t.Errorf("Gelu(%v) = %g, want %g", xs[i], got[i], w)
		}
	}
	// GELU-tanh at x: u = √(2/π)(x + 0.044715x³), and for u ≪ 0,
	// 1 + tanh(u) = 2e^(2u)(1 - e^(2u) + e^(4u) - ...).
	got = run(func(g *graph.Graph, n *graph.Node) *graph.Node { return g.GeluTanh(n) })
	for i, x := range xs {
		u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
		e := math.Exp(2 * u)
		w := float64(float32(x / 2 * 2 * e * (1 - e + e*e)))
		if approx.Far(got[i], w, 1e-5*math.Abs(w)) || math.Signbit(got[i]) != math.Signbit(w) {
			t.Errorf("GeluTanh(%v) = %g, want %g", x, got[i], w)
		}
	}
}
