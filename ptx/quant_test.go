package ptx

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// emitBuilt builds one node with build, describes it as kdesc.Describe
// would and writes its kernel.
func emitBuilt(t testing.TB, name string, build func(g *graph.Graph) *graph.Node) (*Kernel, error) {
	t.Helper()
	g := graph.New()
	n := build(g)
	if err := g.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	d, _, err := kdesc.Describe(name, n)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return Emit(d)
}

// quantVariants covers every dtype pairing of the quantization kernels,
// per tensor and per axis, DynamicQuantizeLinear's three outputs, and
// the integer GEMM's operand pairings, batches, vectors and epilogues,
// and the integer conv.
func quantVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(name string, build func(g *graph.Graph) *graph.Node) {
		k, err := emitBuilt(t, name, build)
		ks = append(ks, must(t, k, err))
	}
	for _, x := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.F64} {
		for _, q := range []tensor.DType{tensor.I8, tensor.U8} {
			for _, ch := range []int{1, 5} {
				add(fmt.Sprintf("quant_%v_%v_%d", x, q, ch), func(g *graph.Graph) *graph.Node {
					return g.QuantizeLinear(g.Input("x", x, 3, 5, 7), g.Input("s", x, ch), g.Input("z", q, ch), 1)
				})
			}
		}
	}
	for _, q := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32} {
		for _, y := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.F64} {
			add(fmt.Sprintf("dequant_%v_%v", q, y), func(g *graph.Graph) *graph.Node {
				return g.DequantizeLinear(g.Input("q", q, 4, 6), g.Input("s", y, 6), g.Input("z", q, 6), 1)
			})
		}
	}
	for i := range 3 {
		add(fmt.Sprintf("dynquant_%d", i), func(g *graph.Graph) *graph.Node {
			q, s, z := g.DynamicQuantizeLinear(g.Input("x", tensor.F32, 300, 1000))
			return []*graph.Node{q, s, z}[i]
		})
	}
	for _, a := range []tensor.DType{tensor.I8, tensor.U8} {
		for _, b := range []tensor.DType{tensor.I8, tensor.U8} {
			add(fmt.Sprintf("mmint_%v_%v", a, b), func(g *graph.Graph) *graph.Node {
				return g.MatMulInteger(g.Input("a", a, 2, 1, 65, 70), g.Input("b", b, 3, 70, 33), g.Input("az", a, 65, 1), g.Input("bz", b, 3, 1, 33))
			})
		}
	}
	add("mmint_vector", func(g *graph.Graph) *graph.Node {
		return g.MatMulInteger(g.Input("a", tensor.U8, 300), g.Input("b", tensor.U8, 300), nil, nil)
	})
	add("mmint_wide", func(g *graph.Graph) *graph.Node {
		return g.MatMulInteger(g.Input("a", tensor.U8, 1<<16, 1<<15), g.Input("b", tensor.I8, 1<<15, 64), nil, nil)
	})
	for _, bias := range []bool{false, true} {
		add(fmt.Sprintf("dynqmm_%v", bias), func(g *graph.Graph) *graph.Node {
			ins := []*graph.Node{g.Input("x", tensor.F32, 4, 128, 768), g.Input("w", tensor.I8, 768, 3072), g.Input("wz", tensor.I8, 3072), g.Input("ws", tensor.F32)}
			if bias {
				ins = append(ins, g.Input("bias", tensor.F32, 3072))
			}
			n, err := g.Insert(graph.OpDynQuantMatMul, graph.Attrs{}, ins...)
			if err != nil {
				t.Fatal(err)
			}
			return n
		})
	}
	for _, a := range []tensor.DType{tensor.I8, tensor.U8} {
		for _, wz := range []int{1, 6} {
			add(fmt.Sprintf("convint_%v_%d", a, wz), func(g *graph.Graph) *graph.Node {
				return g.ConvInteger(g.Input("x", a, 2, 4, 9, 8), g.Input("w", tensor.I8, 6, 2, 3, 2), g.Input("xz", a), g.Input("wz", tensor.I8, wz),
					graph.ConvOpts{Strides: []int{2, 1}, Dilations: []int{1, 2}, Pads: []int{1, 0, 2, 1}, Groups: 2})
			})
		}
	}
	return ks
}

func TestQuantKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, quantVariants(t))
}
