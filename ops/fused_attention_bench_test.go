package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkAttentionFlash times the flash kernel alone on one thread at
// seq 1024, 12 heads, head dim 64, for a few block shapes.
func BenchmarkAttentionFlash(b *testing.B) {
	const seq, heads, d = 1024, 12, 64
	g := graph.New()
	s := tensor.Shape{1, heads, seq, d}
	q, k, v := g.Input("q", tensor.F32, s...), g.Input("k", tensor.F32, s...), g.Input("v", tensor.F32, s...)
	n := g.Attention(q, k, v, nil, graph.AttentionOpts{})
	r := rand.New(rand.NewPCG(1, 1))
	ins := make([]tensor.Tensor, 3)
	for i := range ins {
		ins[i] = tensor.New(tensor.F32, s...)
		for j := range ins[i].F32() {
			ins[i].F32()[j] = float32(r.NormFloat64())
		}
	}
	out := tensor.New(tensor.F32, n.Shape...)
	for _, bs := range [][2]int{{128, 256}, {256, 256}, {256, 512}, {512, 256}} {
		b.Run(fmt.Sprintf("bq%d_bk%d", bs[0], bs[1]), func(b *testing.B) {
			bq0, bk0 := flashBQ, flashBK
			flashBQ, flashBK = bs[0], bs[1]
			defer func() { flashBQ, flashBK = bq0, bk0 }()
			kern, _, err := PrepareFast(n, Serial)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for range b.N {
				if err := kern(ins, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
