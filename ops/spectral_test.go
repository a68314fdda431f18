package ops_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// naiveDFT transforms sig (zero-padded or truncated to n) with complex
// exponentials, the textbook sum, independent of graph.DFT's matrix: bins
// values, divided by n for the inverse.
func naiveDFT(sig []complex128, n, bins int, inverse bool) []complex128 {
	s := -1.0
	if inverse {
		s = 1
	}
	out := make([]complex128, bins)
	for k := range bins {
		for j := range min(n, len(sig)) {
			out[k] += sig[j] * cmplx.Exp(complex(0, s*2*math.Pi*float64(j*k)/float64(n)))
		}
		if inverse {
			out[k] /= complex(float64(n), 0)
		}
	}
	return out
}

// TestDFTComposition checks graph.DFT (padding, truncation, onesided,
// inverse of a complex input, a middle axis, F32 and F64) against
// naiveDFT, through the reference interpreter.
func TestDFTComposition(t *testing.T) {
	for _, c := range []struct {
		dt                tensor.DType
		shape             []int // [a, b, comps]; the transform runs along axis
		axis, n           int
		inverse, onesided bool
	}{
		{tensor.F64, []int{3, 5, 1}, 1, 0, false, false},
		{tensor.F64, []int{2, 5, 1}, 1, 8, false, false}, // zero-padded to 8
		{tensor.F32, []int{6, 3, 1}, 0, 4, false, true},  // truncated to 4, onesided: 3 bins
		{tensor.F64, []int{4, 7, 2}, 1, 0, true, false},  // complex inverse
		{tensor.F32, []int{7, 2, 2}, 0, 9, false, false}, // complex, padded
	} {
		t.Run(fmt.Sprintf("%v%v_axis%d_n%d_inv%v_one%v", c.dt, c.shape, c.axis, c.n, c.inverse, c.onesided), func(t *testing.T) {
			r := rand.New(rand.NewPCG(23, uint64(len(c.shape)*c.n+c.axis)))
			x := tensor.New(c.dt, c.shape...)
			v := make([]float64, x.NumElements())
			for i := range v {
				v[i] = float64(float32(r.Float64()*4 - 2))
			}
			x, _ = tensor.FromFloat64s(c.dt, x.Shape, v)
			g := graph.New()
			g.Output(g.DFT(g.Input("x", c.dt, c.shape...), c.axis, c.n, c.inverse, c.onesided))
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			got, err := ops.Interpret(g, map[string]tensor.Tensor{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			a, b, comps := c.shape[0], c.shape[1], c.shape[2]
			n := c.n
			if n == 0 {
				n = c.shape[c.axis]
			}
			bins := n
			if c.onesided {
				bins = n/2 + 1
			}
			outer, length := b, a // the other axis and the transformed one
			if c.axis == 1 {
				outer, length = a, b
			}
			want := make([]float64, outer*bins*2)
			wantShape := []int{bins, b, 2}
			if c.axis == 1 {
				wantShape = []int{a, bins, 2}
			}
			at := func(o, j int) int { // x's element (o, j) of the transformed axis
				if c.axis == 1 {
					return (o*b + j) * comps
				}
				return (j*b + o) * comps
			}
			for o := range outer {
				sig := make([]complex128, length)
				for j := range sig {
					re, im := v[at(o, j)], 0.0
					if comps == 2 {
						im = v[at(o, j)+1]
					}
					sig[j] = complex(re, im)
				}
				for k, y := range naiveDFT(sig, n, bins, c.inverse) {
					i := (o*bins + k) * 2
					if c.axis == 0 {
						i = (k*outer + o) * 2
					}
					want[i], want[i+1] = real(y), imag(y)
				}
			}
			if !got[0].Shape.Equal(tensor.Shape(wantShape)) {
				t.Fatalf("shape %v, want %v", got[0].Shape, wantShape)
			}
			approx.Slices(t, "DFT", got[0].Float64s(), want, 1e-6, 1e-9)
		})
	}
}

// TestSTFTComposition checks graph.STFT's framing and window against
// naiveDFT of each windowed frame.
func TestSTFTComposition(t *testing.T) {
	const L, step, fl = 23, 4, 8
	r := rand.New(rand.NewPCG(23, 8))
	sig := make([]float64, 2*L)
	for i := range sig {
		sig[i] = r.Float64()*2 - 1
	}
	win := make([]float64, fl)
	for i := range win {
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/fl)
	}
	xs, _ := tensor.FromFloat64s(tensor.F64, tensor.Shape{2, L, 1}, sig)
	ws, _ := tensor.FromFloat64s(tensor.F64, tensor.Shape{fl}, win)
	g := graph.New()
	g.Output(g.STFT(g.Input("x", tensor.F64, 2, L, 1), step, g.Input("w", tensor.F64, fl), fl, true))
	got, err := ops.Interpret(g, map[string]tensor.Tensor{"x": xs, "w": ws})
	if err != nil {
		t.Fatal(err)
	}
	frames, bins := (L-fl)/step+1, fl/2+1
	var want []float64
	for b := range 2 {
		for f := range frames {
			frame := make([]complex128, fl)
			for j := range frame {
				frame[j] = complex(sig[b*L+f*step+j]*win[j], 0)
			}
			for _, y := range naiveDFT(frame, fl, bins, false) {
				want = append(want, real(y), imag(y))
			}
		}
	}
	if s := (tensor.Shape{2, frames, bins, 2}); !got[0].Shape.Equal(s) {
		t.Fatalf("shape %v, want %v", got[0].Shape, s)
	}
	approx.Slices(t, "STFT", got[0].Float64s(), want, 1e-9, 1e-12)
}

// TestSpectralErrors checks that the compositions refuse what they cannot
// compute, naming the op.
func TestSpectralErrors(t *testing.T) {
	for name, build := range map[string]func(g *graph.Graph){
		"last axis":        func(g *graph.Graph) { g.DFT(g.Input("x", tensor.F32, 4, 1), 1, 0, false, false) },
		"three components": func(g *graph.Graph) { g.DFT(g.Input("x", tensor.F32, 4, 3), 0, 0, false, false) },
		"onesided complex": func(g *graph.Graph) { g.DFT(g.Input("x", tensor.F32, 4, 2), 0, 0, false, true) },
		"integer":          func(g *graph.Graph) { g.DFT(g.Input("x", tensor.I32, 4, 1), 0, 0, false, false) },
		"frame too long":   func(g *graph.Graph) { g.STFT(g.Input("x", tensor.F32, 1, 4, 1), 1, nil, 5, true) },
		"window length": func(g *graph.Graph) {
			g.STFT(g.Input("x", tensor.F32, 1, 9, 1), 2, g.Input("w", tensor.F32, 3), 4, true)
		},
	} {
		g := graph.New()
		build(g)
		if err := g.Err(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
