package fuse_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// Benchmarks of issue 5's targets. Run on a quiet machine, e.g.
//
//	go test ./fuse -run '^$' -bench . -benchtime 10x -count 5
//
// and compare medians. Variants:
//
//	fused      every pass, fast kernels
//	off        KILN_FUSE=off, fast kernels
//	off-gemm   KILN_FUSE=off, but every MatMul runs on the same ops/asm
//	           GEMM the fused products use (an empty-epilogue FusedMatMul),
//	           so the ratio to fused is what fusion alone buys while plain
//	           MatMul has no assembly kernel of its own
//	exported-  the demo encoder in the form exported models have
//	           (demo.Config.Exported: spelled-out LayerNorm, GELU and
//	           attention), fused and with KILN_FUSE=off; the op-level
//	           encoder is already built from LayerNorm, Gelu and Attention,
//	           so its fused/off ratio measures epilogues only
//
// Each reports the arena bytes of its plan.

// withAsmMatMul returns a copy of g whose MatMul nodes are plain
// FusedMatMul nodes (no epilogue, no transposes): the same products on the
// fused kernels' GEMM.
func withAsmMatMul(tb testing.TB, g *graph.Graph) *graph.Graph {
	c := g.Clone()
	for _, n := range append([]*graph.Node(nil), c.Nodes...) {
		if n.Op != graph.OpMatMul {
			continue
		}
		f, err := c.Insert(graph.OpFusedMatMul, graph.Attrs{}, n.Inputs...)
		if err != nil {
			tb.Fatal(err)
		}
		if err := c.ReplaceUses(n, f); err != nil {
			tb.Fatal(err)
		}
	}
	if err := c.Prune(); err != nil {
		tb.Fatal(err)
	}
	return c
}

// benchCompile compiles g with s, sets its params from weights and runs
// it once (packing, static steps), closing it when b ends.
func benchCompile(b *testing.B, s *kiln.Session, g *graph.Graph, weights map[string]tensor.Tensor, inputs []kiln.TypedInput) *kiln.CompiledGraph {
	cg, err := s.Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cg.Close() })
	for _, p := range cg.Params() {
		w := weights[p.Name]
		if err := cg.SetParamTyped(p.Name, w.Data, w.DType); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := cg.RunTyped(inputs...); err != nil {
		b.Fatal(err)
	}
	return cg
}

// benchRunner returns one run of cg on inputs the fastest way the API
// allows: RunSlots (no allocation, outputs left in the arena; inputs in
// cg's order, matched by name) when every input is float32, as the
// attention's are, else RunTyped.
func benchRunner(cg *kiln.CompiledGraph, inputs []kiln.TypedInput) func() error {
	typed := func() error { _, err := cg.RunTyped(inputs...); return err }
	var slots [][]float32
	for _, want := range cg.Inputs() {
		i := slices.IndexFunc(inputs, func(in kiln.TypedInput) bool { return in.Name == want.Name })
		if i < 0 || inputs[i].DType != tensor.F32 {
			return typed // RunTyped also reports a missing input by name
		}
		slots = append(slots, tensor.Elems[float32](inputs[i].Data))
	}
	return func() error { _, err := cg.RunSlots(slots...); return err }
}

func benchRun(b *testing.B, s *kiln.Session, g *graph.Graph, weights map[string]tensor.Tensor, inputs []kiln.TypedInput) {
	cg := benchCompile(b, s, g, weights, inputs)
	run := benchRunner(cg, inputs)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time of the process per run: on a shared machine it moves far
	// less than wall time with the load of other processes.
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(cg.Plan().ArenaBytes), "arena-bytes") // after ResetTimer, which drops metrics
}

// demoInputs are the demo encoder's feeds as typed inputs.
func demoInputs(feeds map[string]tensor.Tensor) []kiln.TypedInput {
	return []kiln.TypedInput{
		{Name: "input_ids", Data: feeds["input_ids"].Data, DType: tensor.I64},
		{Name: "attention_mask", Data: feeds["attention_mask"].Data, DType: tensor.F32},
	}
}

func BenchmarkDemoEncoder(b *testing.B) {
	c := demo.MiniLM
	g := demo.Encoder(c)
	feeds := demoFeeds(b, c, g)
	inputs := demoInputs(feeds)
	b.Run("fused", func(b *testing.B) { benchRun(b, session(true, false), g, feeds, inputs) })
	b.Run("off", func(b *testing.B) { benchRun(b, session(false, false), g, feeds, inputs) })
	b.Run("off-gemm", func(b *testing.B) { benchRun(b, session(false, false), withAsmMatMul(b, g), feeds, inputs) })
	// The same encoder as torch's ONNX exporter spells it: fusion has the
	// norms, GELU and attention to recover, as for an imported model.
	c.Exported = true
	ge := demo.Encoder(c)
	b.Run("exported-fused", func(b *testing.B) { benchRun(b, session(true, false), ge, feeds, inputs) })
	b.Run("exported-off", func(b *testing.B) { benchRun(b, session(false, false), ge, feeds, inputs) })
}

// attentionGraph is softmax(q·kᵀ/√d + mask)·v spelled out on [1, 12,
// 1024, 64], as an exported model has it (without the mask add when
// masked is false); fused, it is one Attention.
func attentionGraph(seq, heads, d int, masked bool) *graph.Graph {
	g := graph.New()
	q := g.Input("q", tensor.F32, 1, heads, seq, d)
	k := g.Input("k", tensor.F32, 1, heads, seq, d)
	v := g.Input("v", tensor.F32, 1, heads, seq, d)
	s := g.Mul(g.MatMul(q, g.Transpose(k, 0, 1, 3, 2)), g.Scalar(float32(1/math.Sqrt(float64(d)))))
	if masked {
		s = g.Add(s, g.Input("mask", tensor.F32, 1, 1, 1, seq))
	}
	g.Output(g.MatMul(g.Softmax(s, -1), v))
	return g
}

// attentionInputs are attentionGraph's inputs: standard normal q, k and
// v (seeded), and a padding mask hiding the last eighth of the keys
// (-10000, as BERT's).
func attentionInputs(g *graph.Graph, seq int) []kiln.TypedInput {
	r := rand.New(rand.NewPCG(1, 2))
	var inputs []kiln.TypedInput
	for _, n := range g.Inputs() {
		v := make([]float32, n.Shape.NumElements())
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		if n.Name == "mask" {
			for i := range v {
				v[i] = 0
				if i >= seq-seq/8 {
					v[i] = -10000
				}
			}
		}
		inputs = append(inputs, kiln.TypedInput{Name: n.Name, Data: tensor.Bytes(v), DType: tensor.F32})
	}
	return inputs
}

// BenchmarkAttention: the padding mask hides the last eighth of the keys
// (-10000, as BERT's), which the fused kernel leaves out; "nomask" runs
// the same without a mask, where it cannot.
func BenchmarkAttention(b *testing.B) {
	const seq, heads, d = 1024, 12, 64
	for _, masked := range []bool{true, false} {
		g := attentionGraph(seq, heads, d, masked)
		inputs := attentionInputs(g, seq)
		suffix := ""
		if !masked {
			suffix = "-nomask"
		}
		b.Run("fused"+suffix, func(b *testing.B) { benchRun(b, session(true, false), g, nil, inputs) })
		b.Run("off"+suffix, func(b *testing.B) { benchRun(b, session(false, false), g, nil, inputs) })
		if masked {
			b.Run("off-gemm", func(b *testing.B) { benchRun(b, session(false, false), withAsmMatMul(b, g), nil, inputs) })
		}
	}
}
