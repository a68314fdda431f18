package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkElementwise times the elementwise kernels the op table feeds,
// single-threaded on 64k F32 elements: the reference and fast unary and
// binary kernels, and a FusedElementwise program (fast and reference).
func BenchmarkElementwise(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(5, 5))
	x, y := tensor.New(tensor.F32, n), tensor.New(tensor.F32, n)
	for i := range n {
		x.F32()[i], y.F32()[i] = float32(r.NormFloat64()*3), float32(r.NormFloat64()*3)
	}
	g := graph.New()
	gx, gy := g.Input("x", tensor.F32, n), g.Input("y", tensor.F32, n)
	// gelu(x·y + sin x)
	prog, err := g.Insert(graph.OpFusedElementwise, graph.Attrs{Program: []graph.ElemInstr{
		{Op: graph.OpMul, Args: []graph.ElemRef{{Index: 0}, {Index: 1}}},
		{Op: graph.OpSin, Args: []graph.ElemRef{{Index: 0}}},
		{Op: graph.OpAdd, Args: []graph.ElemRef{{Instr: true, Index: 0}, {Instr: true, Index: 1}}},
		{Op: graph.OpGelu, Args: []graph.ElemRef{{Instr: true, Index: 2}}},
	}}, gx, gy)
	if err != nil {
		b.Fatal(err)
	}
	nodes := []struct {
		name string
		n    *graph.Node
		ins  []tensor.Tensor
	}{
		{"Gelu", g.Gelu(gx), []tensor.Tensor{x}},
		{"Exp", g.Exp(gx), []tensor.Tensor{x}},
		{"Sin", g.Sin(gx), []tensor.Tensor{x}},
		{"Add", g.Add(gx, gy), []tensor.Tensor{x, y}},
		{"Pow", g.Pow(gx, gy), []tensor.Tensor{x, y}},
		{"Fused", prog, []tensor.Tensor{x, y}},
	}
	for _, c := range nodes {
		out := tensor.New(tensor.F32, n)
		run := func(b *testing.B, k Kernel) {
			b.SetBytes(int64(4 * n * (len(c.ins) + 1)))
			for b.Loop() {
				if err := k(c.ins, out); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(c.name+"/reference", func(b *testing.B) {
			k, err := PrepareReference(c.n)
			if err != nil {
				b.Fatal(err)
			}
			run(b, k)
		})
		k, _, err := PrepareFast(c.n, Serial)
		if err != nil || k == nil {
			continue
		}
		b.Run(c.name+"/fast", func(b *testing.B) { run(b, k) })
	}
}
