package decode

import (
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/demo"
)

// BenchmarkDecodeStep times decode steps of the demo's small decoder
// (about 57M params) on the CPU after a 128-token prefill, the cache
// rewound to 128 whenever it fills so every step attends over 128-255
// keys. It reports tokens/s and the weight bytes each step streams:
// their ratio to memory bandwidth is the step's lower bound.
func BenchmarkDecodeStep(b *testing.B) {
	c := demo.DecoderSmall
	g, err := demo.DecoderStep(c, 1)
	if err != nil {
		b.Fatal(err)
	}
	d, err := New(kiln.NewSession(kiln.CPU), c, 128, demo.Weights(g, 1))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	prompt := randomIDs(c, 128, 9)
	if _, err := d.Prefill(prompt); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Step(5); err != nil { // the first run packs the weights
		b.Fatal(err)
	}
	params := 0
	for _, p := range g.Params() {
		params += p.Shape.NumElements()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if d.Pos() == c.MaxSeq {
			d.pos = len(prompt) // the rows past it are rewritten before they are read
		}
		if _, err := d.Step(5); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(4*params)/(1<<20), "weightMiB/token")
}
