package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// frBench runs kernel variants of one node side by side: the reference
// and every row-kernel variant, single-threaded, reporting GB/s of bytes
// read and written.
func frBench(b *testing.B, n *graph.Node, ins []tensor.Tensor, prep rowPrepare) {
	bytes := int64(n.Shape.NumElements() * 4)
	for _, in := range ins {
		bytes += int64(len(in.Data))
	}
	out := tensor.New(n.DType, n.Shape...)
	run := func(b *testing.B, k Kernel) {
		b.SetBytes(bytes)
		for b.Loop() {
			if err := k(ins, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("reference", func(b *testing.B) {
		k, err := PrepareReference(n)
		if err != nil {
			b.Fatal(err)
		}
		run(b, k)
	})
	for _, v := range asm.RowVariants() {
		b.Run(v.Name, func(b *testing.B) {
			k, err := prep(n, Serial, v)
			if err != nil || k == nil {
				b.Fatalf("no fast kernel (%v)", err)
			}
			run(b, k)
		})
	}
}

func BenchmarkFastRows(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, s := range [][2]int{{128, 384}, {128, 1536}} {
		g := graph.New()
		x := g.Input("x", tensor.F32, s[0], s[1])
		scale, bias := g.Input("s", tensor.F32, s[1]), g.Input("b", tensor.F32, s[1])
		ins := []tensor.Tensor{frTensor(tensor.F32, x.Shape, frRand(r, s[0]*s[1], 4))}
		affine := append(ins, frTensor(tensor.F32, scale.Shape, frRand(r, s[1], 1)), frTensor(tensor.F32, bias.Shape, frRand(r, s[1], 1)))
		name := fmt.Sprintf("%dx%d", s[0], s[1])
		b.Run("Softmax/"+name, func(b *testing.B) { frBench(b, g.Softmax(x, 1), ins, prepareSoftmaxFast) })
		b.Run("LayerNorm/"+name, func(b *testing.B) { frBench(b, g.LayerNorm(x, scale, bias, 1, 1e-5), affine, prepareNormFast) })
		b.Run("RMSNorm/"+name, func(b *testing.B) { frBench(b, g.RMSNorm(x, scale, 1, 1e-5), affine[:2], prepareNormFast) })
		b.Run("ReduceSum/"+name, func(b *testing.B) { frBench(b, g.ReduceSum(x, false, 1), ins, prepareReduceFast) })
	}
	g := graph.New()
	x := g.Input("x", tensor.F32, 1024, 1024)
	ins := []tensor.Tensor{frTensor(tensor.F32, x.Shape, frRand(r, 1<<20, 1))}
	b.Run("Transpose/1024x1024", func(b *testing.B) { frBench(b, g.Transpose(x, 1, 0), ins, prepareTransposeFast) })
	h := g.Input("h", tensor.F32, 1, 128, 12, 64)
	hins := []tensor.Tensor{frTensor(tensor.F32, h.Shape, frRand(r, h.Shape.NumElements(), 1))}
	b.Run("Transpose/heads-1x128x12x64", func(b *testing.B) { frBench(b, g.Transpose(h, 0, 2, 1, 3), hins, prepareTransposeFast) })
}
