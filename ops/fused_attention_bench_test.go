package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkAttentionFlash times the flash kernel alone on one thread at
// seq 1024, 12 heads, head dim 64: without a mask and with a padding
// mask hiding the last eighth of the keys (-10000, as BERT's), with the
// probabilities packed for the value product or read in place.
func BenchmarkAttentionFlash(b *testing.B) {
	const seq, heads, d = 1024, 12, 64
	s := tensor.Shape{1, heads, seq, d}
	r := rand.New(rand.NewPCG(1, 1))
	ins := make([]tensor.Tensor, 4)
	for i := range 3 {
		ins[i] = tensor.New(tensor.F32, s...)
		for j := range ins[i].F32() {
			ins[i].F32()[j] = float32(r.NormFloat64())
		}
	}
	ins[3] = tensor.New(tensor.F32, 1, 1, 1, seq)
	for j := seq - seq/8; j < seq; j++ {
		ins[3].F32()[j] = -10000
	}
	for _, masked := range []bool{false, true} {
		g := graph.New()
		q, k, v := g.Input("q", tensor.F32, s...), g.Input("k", tensor.F32, s...), g.Input("v", tensor.F32, s...)
		var mask *graph.Node
		if masked {
			mask = g.Input("mask", tensor.F32, 1, 1, 1, seq)
		}
		n := g.Attention(q, k, v, mask, graph.AttentionOpts{})
		out := tensor.New(tensor.F32, n.Shape...)
		for _, inPlace := range []bool{false, true} {
			b.Run(fmt.Sprintf("mask%v/inplace%v", masked, inPlace), func(b *testing.B) {
				save := flashInPlaceA
				flashInPlaceA = inPlace
				defer func() { flashInPlaceA = save }()
				kern, _, err := PrepareFast(n, Serial)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				cpu0 := cpuTime()
				for range b.N {
					if err := kern(ins[:len(n.Inputs)], out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
