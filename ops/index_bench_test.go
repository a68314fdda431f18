package ops_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// benchIndex runs the reference and the fast kernel of n side by side,
// single-threaded; out may be ins[0] (an in-place run).
func benchIndex(b *testing.B, n *graph.Node, ins []tensor.Tensor, out tensor.Tensor, bytes int64) {
	run := func(b *testing.B, k ops.Kernel) {
		b.SetBytes(bytes)
		for b.Loop() {
			if err := k(ins, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("reference", func(b *testing.B) {
		k, err := ops.PrepareReference(n)
		if err != nil {
			b.Fatal(err)
		}
		run(b, k)
	})
	b.Run("fast", func(b *testing.B) {
		k, variant, err := ops.PrepareFast(n, ops.Serial)
		if err != nil || variant == "reference" {
			b.Fatalf("no fast kernel (%v)", err)
		}
		run(b, k)
	})
}

// BenchmarkGatherElements: torch.gather over the middle axis of an
// [8, 1024, 64] tensor; bytes are those read and written.
func BenchmarkGatherElements(b *testing.B) {
	r := rand.New(rand.NewPCG(23, 23))
	g := graph.New()
	x := g.Input("x", tensor.F32, 8, 1024, 64)
	i := g.Input("i", tensor.I64, 8, 1024, 64)
	idx := tensor.New(tensor.I64, i.Shape...)
	for j := range idx.I64() {
		idx.I64()[j] = int64(r.IntN(2048) - 1024)
	}
	xt := tensor.New(tensor.F32, x.Shape...)
	n := g.GatherElements(x, i, 1)
	out := tensor.New(tensor.F32, n.Shape...)
	benchIndex(b, n, []tensor.Tensor{xt, idx}, out, int64(len(xt.Data)+len(idx.Data)+len(out.Data)))
}

// BenchmarkScatterND: one decoding step's KV-cache update, a [32, 128]
// row per head written at position 1000 of a [32, 2048, 128] F32 cache,
// out of place and in place (the output over the cache, as the plan
// places it). Bytes are the update's.
func BenchmarkScatterND(b *testing.B) {
	g := graph.New()
	c := g.Input("cache", tensor.F32, 32, 2048, 128)
	i := g.Input("i", tensor.I64, 32, 2)
	u := g.Input("u", tensor.F32, 32, 128)
	n := g.ScatterND(c, i, u, graph.ScatterNone)
	idx := tensor.New(tensor.I64, 32, 2)
	for h := range 32 {
		idx.I64()[2*h], idx.I64()[2*h+1] = int64(h), 1000
	}
	cache, upd := tensor.New(tensor.F32, c.Shape...), tensor.New(tensor.F32, u.Shape...)
	ins := []tensor.Tensor{cache, idx, upd}
	b.Run("copy", func(b *testing.B) { benchIndex(b, n, ins, tensor.New(tensor.F32, c.Shape...), int64(len(upd.Data))) })
	b.Run("inplace", func(b *testing.B) { benchIndex(b, n, ins, cache, int64(len(upd.Data))) })
}
