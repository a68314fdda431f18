package fuse

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// spelledLayerNorm builds torch's opset-14 LayerNorm export over the last
// axis of x, with the variations exporters produce.
func spelledLayerNorm(g *graph.Graph, x *graph.Node, square, recip, affine bool) *graph.Node {
	c := x.Shape[len(x.Shape)-1]
	d := g.Sub(x, g.ReduceMean(x, true, -1))
	sq := g.Pow(d, g.Scalar(2))
	if square {
		sq = g.Mul(d, d)
	}
	s := g.Sqrt(g.Add(g.ReduceMean(sq, true, -1), g.Scalar(1e-5)))
	y := g.Div(d, s)
	if recip {
		y = g.Mul(d, g.Reciprocal(s))
	}
	if affine {
		y = g.Add(g.Mul(y, g.Param("gamma", tensor.F32, c)), g.Param("beta", tensor.F32, c))
	}
	return y
}

func TestRecogniseLayerNorm(t *testing.T) {
	for _, c := range []struct {
		name                  string
		square, recip, affine bool
	}{
		{"pow-div-affine", false, false, true},
		{"mul-div-affine", true, false, true},
		{"pow-reciprocal", false, true, false},
		{"mul-reciprocal-affine", true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", tensor.F32, 2, 5, 24)
			g.Output(spelledLayerNorm(g, x, c.square, c.recip, c.affine))
			log, orig := runPass(t, g, recognise)
			ln := find(g, graph.OpLayerNorm)
			if ln == nil || count(g, graph.OpReduceMean) != 0 || count(g, graph.OpSqrt) != 0 {
				t.Fatalf("not recognised: %v\n%s", log.Fused, graph.Dump(g))
			}
			if ln.Attrs.Axis != 2 || ln.Attrs.Eps != 1e-5 || ln.Inputs[0] != x || len(ln.Inputs) != map[bool]int{true: 3, false: 1}[c.affine] {
				t.Fatalf("got %v with inputs %d", ln.Attrs, len(ln.Inputs))
			}
			sameResults(t, orig, g, 1e-5)
		})
	}
}

func TestRecogniseRMSNorm(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 16)
	ms := g.ReduceMean(g.Pow(x, g.Scalar(2)), true, -1)
	y := g.Mul(x, g.Reciprocal(g.Sqrt(g.Add(g.Scalar(1e-6), ms))))
	g.Output(g.Mul(g.Param("w", tensor.F32, 16), y))
	_, orig := runPass(t, g, recognise)
	n := find(g, graph.OpRMSNorm)
	if n == nil || len(n.Inputs) != 2 || n.Attrs.Eps != 1e-6 || count(g, graph.OpReduceMean) != 0 {
		t.Fatalf("not recognised:\n%s", graph.Dump(g))
	}
	sameResults(t, orig, g, 1e-5)
}

// A pattern that differs from a LayerNorm in one place is no LayerNorm
// (it may still be an RMSNorm of the centred value, which is correct).
func TestRecogniseNormNearMisses(t *testing.T) {
	for name, build := range map[string]func(g *graph.Graph, x *graph.Node) *graph.Node{
		"mean over a leading axis": func(g *graph.Graph, x *graph.Node) *graph.Node {
			d := g.Sub(x, g.ReduceMean(x, true, 0))
			return g.Div(d, g.Sqrt(g.Add(g.ReduceMean(g.Mul(d, d), true, 0), g.Scalar(1e-5))))
		},
		"centred value read elsewhere": func(g *graph.Graph, x *graph.Node) *graph.Node {
			d := g.Sub(x, g.ReduceMean(x, true, -1))
			y := g.Div(d, g.Sqrt(g.Add(g.ReduceMean(g.Mul(d, d), true, -1), g.Scalar(1e-5))))
			return g.Add(y, d)
		},
		"cube instead of square": func(g *graph.Graph, x *graph.Node) *graph.Node {
			d := g.Sub(x, g.ReduceMean(x, true, -1))
			return g.Div(d, g.Sqrt(g.Add(g.ReduceMean(g.Pow(d, g.Scalar(3)), true, -1), g.Scalar(1e-5))))
		},
		"mean of another tensor": func(g *graph.Graph, x *graph.Node) *graph.Node {
			d := g.Sub(x, g.ReduceMean(g.Neg(x), true, -1))
			return g.Div(d, g.Sqrt(g.Add(g.ReduceMean(g.Mul(d, d), true, -1), g.Scalar(1e-5))))
		},
		"cube root of the mean square": func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Div(x, g.Pow(g.Add(g.ReduceMean(g.Mul(x, x), true, -1), g.Scalar(1e-5)), g.Scalar(1.0/3)))
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			g.Output(build(g, g.Input("x", tensor.F32, 4, 8)))
			_, orig := runPass(t, g, recognise)
			if count(g, graph.OpLayerNorm) != 0 || name == "cube root of the mean square" && count(g, graph.OpRMSNorm) != 0 {
				t.Fatalf("recognised a norm that is not one:\n%s", graph.Dump(g))
			}
			sameResults(t, orig, g, 1e-5)
		})
	}
}

func TestRecogniseActivations(t *testing.T) {
	sqrt2 := float32(math.Sqrt2)
	for _, c := range []struct {
		name  string
		want  graph.Op
		build func(g *graph.Graph, x *graph.Node) *graph.Node
	}{
		{"gelu torch export", graph.OpGelu, func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Mul(g.Mul(x, g.Add(g.Erf(g.Div(x, g.Scalar(sqrt2))), g.Scalar(1))), g.Scalar(0.5))
		}},
		{"gelu halved first", graph.OpGelu, func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Mul(g.Mul(g.Scalar(0.5), x), g.Add(g.Scalar(1), g.Erf(g.Mul(x, g.Scalar(1/sqrt2)))))
		}},
		{"gelu tanh", graph.OpGeluTanh, func(g *graph.Graph, x *graph.Node) *graph.Node {
			inner := g.Mul(g.Scalar(float32(math.Sqrt(2/math.Pi))), g.Add(x, g.Mul(g.Scalar(0.044715), g.Pow(x, g.Scalar(3)))))
			return g.Mul(g.Mul(g.Scalar(0.5), x), g.Add(g.Scalar(1), g.Tanh(inner)))
		}},
		{"silu", graph.OpSilu, func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Mul(x, g.Sigmoid(x))
		}},
		{"sigmoid spelled", graph.OpSigmoid, func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Reciprocal(g.Add(g.Scalar(1), g.Exp(g.Neg(x))))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Add(g.Input("x", tensor.F32, 3, 37), g.Param("b", tensor.F32, 37)) // x itself elementwise, as after a bias
			g.Output(c.build(g, x))
			log, orig := runPass(t, g, recognise)
			n := find(g, c.want)
			if n == nil || n.Inputs[0] != x || len(g.Nodes) != 4 {
				t.Fatalf("not recognised as %v (log %v):\n%s", c.want, log.Fused, graph.Dump(g))
			}
			sameResults(t, orig, g, 2e-6)
		})
	}
}

// Functions close to an activation but not equal to it stay spelled out.
func TestRecogniseActivationNearMisses(t *testing.T) {
	for name, build := range map[string]func(g *graph.Graph, x *graph.Node) *graph.Node{
		"gelu with the wrong divisor": func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Mul(g.Mul(x, g.Add(g.Erf(g.Div(x, g.Scalar(1.5))), g.Scalar(1))), g.Scalar(0.5))
		},
		"tanh gelu with the wrong cubic": func(g *graph.Graph, x *graph.Node) *graph.Node {
			inner := g.Mul(g.Scalar(float32(math.Sqrt(2/math.Pi))), g.Add(x, g.Mul(g.Scalar(0.045), g.Pow(x, g.Scalar(3)))))
			return g.Mul(g.Mul(g.Scalar(0.5), x), g.Add(g.Scalar(1), g.Tanh(inner)))
		},
		"silu of another tensor": func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Mul(x, g.Sigmoid(g.Input("z", tensor.F32, 3, 37)))
		},
		"intermediate read elsewhere": func(g *graph.Graph, x *graph.Node) *graph.Node {
			e := g.Erf(g.Div(x, g.Scalar(float32(math.Sqrt2))))
			return g.Add(g.Mul(g.Mul(x, g.Add(e, g.Scalar(1))), g.Scalar(0.5)), e)
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			g.Output(build(g, g.Input("x", tensor.F32, 3, 37)))
			_, orig := runPass(t, g, recognise)
			for _, op := range []graph.Op{graph.OpGelu, graph.OpGeluTanh, graph.OpSilu, graph.OpSigmoid} {
				if op != graph.OpSigmoid && count(g, op) != 0 {
					t.Fatalf("recognised %v:\n%s", op, graph.Dump(g))
				}
			}
			sameResults(t, orig, g, 0)
		})
	}
}
