package ops

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestZeroSizeFast runs ops whose inputs have a zero-size dim through
// their fast kernels (where one takes the node) and the reference: both
// must succeed and agree, on empty outputs and on non-empty ones computed
// from empty inputs (a sum over nothing is 0). A valid empty MatMul
// failed on the fast path ("A has 24 elements, needs 72").
func TestZeroSizeFast(t *testing.T) {
	f32 := func(g *graph.Graph, name string, dims ...int) *graph.Node { return g.Input(name, tensor.F32, dims...) }
	cases := map[string]func(g *graph.Graph) *graph.Node{
		"relu":          func(g *graph.Graph) *graph.Node { return g.Relu(f32(g, "x", 0, 4)) },
		"add broadcast": func(g *graph.Graph) *graph.Node { return g.Add(f32(g, "x", 2, 0, 3), f32(g, "y", 3)) },
		"mul channel":   func(g *graph.Graph) *graph.Node { return g.Mul(f32(g, "x", 1, 0, 5, 5), f32(g, "y", 1, 0, 1, 1)) },
		"clip":          func(g *graph.Graph) *graph.Node { return g.Clip(f32(g, "x", 3, 0), 0, 6) },
		"softmax":       func(g *graph.Graph) *graph.Node { return g.Softmax(f32(g, "x", 0, 7), 1) },
		"reduce sum":    func(g *graph.Graph) *graph.Node { return g.ReduceSum(f32(g, "x", 2, 0), false, 1) },
		"layernorm": func(g *graph.Graph) *graph.Node {
			return g.LayerNorm(f32(g, "x", 0, 8), f32(g, "s", 8), f32(g, "b", 8), 1, 1e-5)
		},
		"gemm rows": func(g *graph.Graph) *graph.Node {
			return g.Gemm(f32(g, "x", 0, 4), f32(g, "y", 4, 5), nil, 1, 1, false, false)
		},
		"gemm depth": func(g *graph.Graph) *graph.Node {
			return g.Gemm(f32(g, "x", 3, 0), f32(g, "y", 0, 5), nil, 2, 1, false, false)
		},
		"matmul cols": func(g *graph.Graph) *graph.Node { return g.MatMul(f32(g, "x", 2, 1, 3, 4), f32(g, "y", 3, 4, 0)) },
		"conv batch": func(g *graph.Graph) *graph.Node {
			return g.Conv2D(f32(g, "x", 0, 3, 5, 5), f32(g, "w", 4, 3, 3, 3), nil, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
		},
		"conv channels": func(g *graph.Graph) *graph.Node {
			return g.Conv2D(f32(g, "x", 1, 2, 5, 5), f32(g, "w", 0, 2, 3, 3), nil, graph.ConvOpts{})
		},
		"transpose": func(g *graph.Graph) *graph.Node { return g.Transpose(f32(g, "x", 2, 0, 3), 2, 0, 1) },
		"concat":    func(g *graph.Graph) *graph.Node { return g.Concat(1, f32(g, "x", 2, 0), f32(g, "y", 2, 3)) },
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			n := build(g)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			ins := make([]tensor.Tensor, len(n.Inputs))
			for i, in := range n.Inputs {
				v := make([]float64, in.Shape.NumElements())
				for j := range v {
					v[j] = float64(j%5) - 2
				}
				ins[i] = hcT(t, in.DType, in.Shape, v...)
			}
			want := hcRun(t, n, ins...)
			k, variant, err := PrepareFast(n, parEnv(3))
			if err != nil {
				t.Fatalf("prepare fast: %v", err)
			}
			if variant == "reference" {
				return // no fast kernel takes it: the reference above ran it
			}
			out, err := tensor.Make(n.DType, n.Shape)
			if err != nil {
				t.Fatal(err)
			}
			if err := k(ins, out); err != nil {
				t.Fatalf("%s: %v", variant, err)
			}
			hcClose(t, name+"/"+variant, out.Float64s(), want, 1e-6)
		})
	}
}
