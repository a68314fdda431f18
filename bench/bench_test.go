package bench

import (
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// dispatchSteps is the length of BenchmarkDispatch's chain.
const dispatchSteps = 1000

// BenchmarkDispatch runs a chain of 1,000 elementwise ops on 4-element
// tensors (alternating Neg and Abs) compiled with fusion off, so each op
// is one step and the time is almost all dispatch.
func BenchmarkDispatch(b *testing.B) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4)
	for i := range dispatchSteps {
		if i%2 == 0 {
			x = g.Neg(x)
		} else {
			x = g.Abs(x)
		}
	}
	g.Output(x)
	cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fuse.Options{Off: true}}).Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	defer cg.Close()
	if st := cg.Stats(); st.Steps != dispatchSteps {
		b.Fatalf("%d steps, want %d: the chain was fused or pruned", st.Steps, dispatchSteps)
	}
	in := []float32{1, -2, 3, -4}
	if _, err := cg.RunSlots(in); err != nil {
		b.Fatal(err)
	}
	// Neg then Abs leaves |x|; the chain ends on Abs.
	if out := cg.Output(0); out[0] != 1 || out[1] != 2 || out[2] != 3 || out[3] != 4 {
		b.Fatalf("chain computed %v, want [1 2 3 4]", out)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cg.RunSlots(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/dispatchSteps, "ns/step")
}

// benchDemo measures one encoder run through RunTyped, as `kiln demo`
// does (token ids are I64, so RunSlots cannot feed them).
func benchDemo(b *testing.B, cfg demo.Config) {
	g := demo.Encoder(cfg)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	defer cg.Close()
	for name, w := range demo.Weights(g, 1) {
		if err := cg.SetParam(name, w); err != nil {
			b.Fatal(err)
		}
	}
	ids, mask := demo.Inputs(cfg, 2)
	in := []kiln.TypedInput{
		{Name: "input_ids", Data: tensor.Bytes(ids), DType: tensor.I64},
		{Name: "attention_mask", Data: tensor.Bytes(mask), DType: tensor.F32},
	}
	if _, err := cg.RunTyped(in...); err != nil { // warm-up
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cg.RunTyped(in...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/run")
}

// BenchmarkDemoMiniLM is the full demo encoder: MiniLM size, sequence 128.
func BenchmarkDemoMiniLM(b *testing.B) { benchDemo(b, demo.MiniLM) }

// BenchmarkDemoTiny is the small demo encoder the tests use.
func BenchmarkDemoTiny(b *testing.B) { benchDemo(b, demo.Tiny) }

// BenchmarkMLPRunSlots is the zero-allocation path on a 64×256→512→10
// MLP.
func BenchmarkMLPRunSlots(b *testing.B) {
	g := testmodels.MLP(64, 256, 512, 10)
	feeds, err := testmodels.RandomFeeds(g, 1)
	if err != nil {
		b.Fatal(err)
	}
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	defer cg.Close()
	for _, p := range g.Params() {
		if err := cg.SetParam(p.Name, feeds[p.Name].F32()); err != nil {
			b.Fatal(err)
		}
	}
	x := feeds["x"].F32()
	if _, err := cg.RunSlots(x); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cg.RunSlots(x); err != nil {
			b.Fatal(err)
		}
	}
}
