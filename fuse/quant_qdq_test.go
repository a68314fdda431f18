package fuse

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// q8c is an 8-bit constant of shape s holding vals (zeros past them).
func q8c(g *graph.Graph, dt tensor.DType, s tensor.Shape, vals ...int) *graph.Node {
	t := tensor.New(dt, s...)
	for i, v := range vals {
		t.Data[i] = byte(v)
	}
	return g.Constant(t)
}

// qdqIn is x through a QDQ pair: U8 per tensor, scale 0.02, zero 120.
func qdqIn(g *graph.Graph, x *graph.Node) *graph.Node {
	s, z := f32s(g, tensor.Shape{}, 0.02), q8c(g, tensor.U8, tensor.Shape{}, 120)
	return g.DequantizeLinear(g.QuantizeLinear(x, s, z, 0), s, z, 0)
}

// qdqWeightNode is an I8 weight param of dims dequantized with ch scales
// (0.01 + 0.002·i) and zero points 0 along axis.
func qdqWeightNode(g *graph.Graph, name string, axis, ch int, dims ...int) *graph.Node {
	sc := make([]float32, ch)
	for i := range sc {
		sc[i] = 0.01 + 0.002*float32(i)
	}
	shape := tensor.Shape{ch}
	if ch == 1 {
		shape = tensor.Shape{}
	}
	z := q8c(g, tensor.I8, shape)
	return g.DequantizeLinear(g.Param(name, tensor.I8, dims...), g.ConstF32(shape, sc), z, axis)
}

// TestQDQFusesProducts: a MatMul with a bias Add and Relu, a transB Gemm
// with its bias and a Conv with bias and Relu, each between QDQ pairs
// with per-channel weights, become one QDQMatMul or QDQConv each, with
// the epilogue absorbed, and compute what the unfused graph computes to
// float32 rounding of the dequantized operands (the fused sums are exact
// integers; ops' TestQDQMatMul and TestQDQConv hold them to the bit).
func TestQDQFusesProducts(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 6, 40)
	mm := g.Relu(g.Add(g.MatMul(qdqIn(g, x), qdqWeightNode(g, "w1", 1, 24, 40, 24)), g.Param("b1", tensor.F32, 24)))
	x2 := g.Reshape(mm, 12, 24)
	gm := g.Gemm(qdqIn(g, x2), qdqWeightNode(g, "w2", 0, 10, 10, 24), g.Param("b2", tensor.F32, 10), 1, 1, false, true)
	img := g.Input("img", tensor.F32, 1, 3, 9, 9)
	cv := g.Relu(g.Conv2D(qdqIn(g, img), qdqWeightNode(g, "w3", 0, 5, 5, 3, 3, 3), g.Param("b3", tensor.F32, 5), graph.ConvOpts{Pads: []int{1, 1, 1, 1}, Strides: []int{2, 2}}))
	g.Output(gm, cv)
	log, orig := runPass(t, g, qdqProducts)
	if count(g, graph.OpQDQMatMul) != 2 || count(g, graph.OpQDQConv) != 1 || count(g, graph.OpMatMul)+count(g, graph.OpGemm)+count(g, graph.OpConv2D) != 0 {
		t.Fatalf("not fused (log %v):\n%s", log.Fused, graph.Dump(g))
	}
	for _, n := range g.Nodes {
		if n.Op == graph.OpQDQMatMul && n.Attrs.TransB && n.Attrs.Epilogue.Act != graph.OpInvalid ||
			n.Op == graph.OpQDQConv && n.Attrs.Epilogue != (graph.Epilogue{Bias: true, Act: graph.OpRelu}) {
			t.Errorf("%s: epilogue %+v, TransB %v", n.Name, n.Attrs.Epilogue, n.Attrs.TransB)
		}
	}
	if count(g, graph.OpRelu) != 0 || count(g, graph.OpAdd) != 0 || count(g, graph.OpQuantizeLinear) != 0 {
		t.Errorf("epilogue or QDQ pairs left over:\n%s", graph.Dump(g))
	}
	sameResults(t, orig, g, 1e-4)
}

// TestQDQNearMisses: the variants the fused kernels cannot run as ONNX
// defines them stay unfused, each with its reason logged.
func TestQDQNearMisses(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(g *graph.Graph, x *graph.Node) *graph.Node
		why  string
	}{
		{"weight scale computed", func(g *graph.Graph, x *graph.Node) *graph.Node {
			w := g.DequantizeLinear(g.Param("w", tensor.I8, 16, 8), g.Input("ws", tensor.F32, 8), q8c(g, tensor.I8, tensor.Shape{8}), 1)
			return g.MatMul(qdqIn(g, x), w)
		}, "scale or zero point is computed"},
		{"weights computed", func(g *graph.Graph, x *graph.Node) *graph.Node {
			w := g.DequantizeLinear(g.Input("wq", tensor.I8, 16, 8), f32s(g, tensor.Shape{}, 0.01), q8c(g, tensor.I8, tensor.Shape{}, 0), 0)
			return g.MatMul(qdqIn(g, x), w)
		}, "weights are computed"},
		{"MatMul per input channel", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.MatMul(qdqIn(g, x), qdqWeightNode(g, "w", 0, 16, 16, 8))
		}, "per axis 0: want per tensor or axis 1"},
		{"Gemm transB per input channel", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Gemm(qdqIn(g, x), qdqWeightNode(g, "w", 1, 16, 8, 16), nil, 1, 0, false, true)
		}, "per axis 1: want per tensor or axis 0"},
		{"activation per axis", func(g *graph.Graph, x *graph.Node) *graph.Node {
			s := make([]float32, 16)
			for i := range s {
				s[i] = 0.02
			}
			sc, z := g.ConstF32(tensor.Shape{16}, s), q8c(g, tensor.U8, tensor.Shape{16})
			return g.MatMul(g.DequantizeLinear(g.QuantizeLinear(x, sc, z, 1), sc, z, 1), qdqWeightNode(g, "w", 1, 8, 16, 8))
		}, "is per axis ([16] scales)"},
		{"activation int8", func(g *graph.Graph, x *graph.Node) *graph.Node {
			s, z := f32s(g, tensor.Shape{}, 0.02), q8c(g, tensor.I8, tensor.Shape{}, 0)
			return g.MatMul(g.DequantizeLinear(g.QuantizeLinear(x, s, z, 0), s, z, 0), qdqWeightNode(g, "w", 1, 8, 16, 8))
		}, "want F32 to U8"},
		{"pair with two scales", func(g *graph.Graph, x *graph.Node) *graph.Node {
			z := q8c(g, tensor.U8, tensor.Shape{}, 128)
			q := g.QuantizeLinear(x, f32s(g, tensor.Shape{}, 0.02), z, 0)
			return g.MatMul(g.DequantizeLinear(q, f32s(g, tensor.Shape{}, 0.04), z, 0), qdqWeightNode(g, "w", 1, 8, 16, 8))
		}, "different scales or zero points"},
		{"activation scale computed", func(g *graph.Graph, x *graph.Node) *graph.Node {
			s, z := g.Input("s", tensor.F32), q8c(g, tensor.U8, tensor.Shape{}, 128)
			return g.MatMul(g.DequantizeLinear(g.QuantizeLinear(x, s, z, 0), s, z, 0), qdqWeightNode(g, "w", 1, 8, 16, 8))
		}, "scale or zero point is computed"},
		{"Conv per input channel", func(g *graph.Graph, x *graph.Node) *graph.Node {
			img := g.Reshape(x, 1, 4, 4, 4)
			return g.Conv2D(qdqIn(g, img), qdqWeightNode(g, "w", 1, 4, 2, 4, 3, 3), nil, graph.ConvOpts{})
		}, "per axis 1: want per tensor or axis 0"},
		{"Gemm scaled", func(g *graph.Graph, x *graph.Node) *graph.Node {
			return g.Gemm(qdqIn(g, x), qdqWeightNode(g, "w", 0, 8, 8, 16), nil, 0.5, 0, false, true)
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			g.Output(c.make(g, g.Input("x", tensor.F32, 4, 16)))
			log, _ := runPass(t, g, qdqProducts)
			if count(g, graph.OpQDQMatMul)+count(g, graph.OpQDQConv) != 0 {
				t.Fatalf("fused:\n%s", graph.Dump(g))
			}
			if c.why != "" && !logged(log.NearMiss, c.why) {
				t.Errorf("near misses %q, want one saying %q", log.NearMiss, c.why)
			}
		})
	}
}
