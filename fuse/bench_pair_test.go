package fuse_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkFusedVsOff measures issue 5's ratios with the two programs
// interleaved: each iteration runs the fused program once and the
// KILN_FUSE=off one once, alternating which goes first, so both see the
// same load of this shared machine (back-to-back sub-benchmarks, as in
// BenchmarkAttention, put seconds between them, over which the load moves
// the ratio by 10-40 %). It reports the median wall time of each and the
// median of the per-iteration ratios off/fused ("speedup"), e.g.
//
//	go test ./fuse -run '^$' -bench FusedVsOff -benchtime 40x
func BenchmarkFusedVsOff(b *testing.B) {
	const seq, heads, d = 1024, 12, 64
	g := attentionGraph(seq, heads, d, true)
	b.Run("attention", func(b *testing.B) { benchPair(b, g, nil, attentionInputs(g, seq)) })

	c := demo.MiniLM
	enc := demo.Encoder(c)
	feeds := demoFeeds(b, c, enc)
	inputs := demoInputs(feeds)
	b.Run("encoder", func(b *testing.B) { benchPair(b, enc, feeds, inputs) })
	c.Exported = true
	exp := demo.Encoder(c)
	b.Run("exported-encoder", func(b *testing.B) { benchPair(b, exp, feeds, inputs) })
}

// benchPair compiles g fused and with fusion off and times them
// interleaved (see BenchmarkFusedVsOff).
func benchPair(b *testing.B, g *graph.Graph, weights map[string]tensor.Tensor, inputs []kiln.TypedInput) {
	cgs := [2]*kiln.CompiledGraph{
		benchCompile(b, session(true, false), g, weights, inputs),
		benchCompile(b, session(false, false), g, weights, inputs),
	}
	runs := [2]func() error{benchRunner(cgs[0], inputs), benchRunner(cgs[1], inputs)}
	var ms [2][]float64
	var ratios []float64
	b.ResetTimer()
	for it := range b.N {
		var t [2]float64
		for j := range 2 {
			i := (it + j) % 2 // alternate which runs first
			t0 := time.Now()
			if err := runs[i](); err != nil {
				b.Fatal(err)
			}
			t[i] = float64(time.Since(t0).Nanoseconds()) / 1e6
			ms[i] = append(ms[i], t[i])
		}
		ratios = append(ratios, t[1]/t[0])
	}
	b.ReportMetric(median(ms[0]), "fused-ms")
	b.ReportMetric(median(ms[1]), "off-ms")
	b.ReportMetric(median(ratios), "speedup")
	b.ReportMetric(float64(cgs[0].Plan().ArenaBytes), "fused-arena-bytes")
	b.ReportMetric(float64(cgs[1].Plan().ArenaBytes), "off-arena-bytes")
	b.ReportMetric(0, "ns/op") // the pair's total time is not a figure of either
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
