package metal_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/metal"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkGEMM reports GFLOP/s of an n×n×n F32 matmul on Metal
// (2n³ flops per run, synchronous runs).
func BenchmarkGEMM(b *testing.B) {
	needMetal(b)
	for _, n := range []int{256, 1024, 2048} {
		b.Run(fmt.Sprintf("%dx%dx%d", n, n, n), func(b *testing.B) {
			g := graph.New()
			g.Output(g.MatMul(g.Input("a", tensor.F32, n, n), g.Param("w", tensor.F32, n, n)))
			cg, err := kiln.NewSession(kiln.Metal()).Compile(g)
			if err != nil {
				b.Fatal(err)
			}
			defer cg.Close()
			ins := fill(b, g, nil, cg)
			b.ResetTimer()
			for b.Loop() {
				if _, err := cg.RunRaw(ins...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkDemoEncoder is the latency of one synchronous demo-encoder run.
func BenchmarkDemoEncoder(b *testing.B) {
	needMetal(b)
	cfg := demo.Tiny
	g := demo.Encoder(cfg)
	cg, err := kiln.NewSession(kiln.Metal()).Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	defer cg.Close()
	ids, mask := demo.Inputs(cfg, 3)
	fids := make([]float32, len(ids))
	for i, v := range ids {
		fids[i] = float32(v)
	}
	ins := fill(b, g, map[string][]float32{"input_ids": fids, "attention_mask": mask}, cg)
	b.ResetTimer()
	for b.Loop() {
		if _, err := cg.RunRaw(ins...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPipelined compares runs of a 512×512 MLP block one at a time
// (commit, wait, read) with RunPipelined keeping 3 commits in flight;
// ns/op is per run in both.
func BenchmarkPipelined(b *testing.B) {
	needMetal(b)
	g := graph.New()
	x := g.Input("x", tensor.F32, 64, 512)
	h := g.Gelu(g.MatMul(x, g.Param("w1", tensor.F32, 512, 512)))
	g.Output(g.MatMul(h, g.Param("w2", tensor.F32, 512, 512)))
	cpu, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	defer cpu.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	params := map[string][]float32{}
	for _, p := range g.Params() {
		w := make([]float32, p.Shape.NumElements())
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.05)
		}
		params[p.Name] = w
	}
	pr := lowerMetal(b, cpu, params)
	in, out := cpu.Graph().Inputs()[0], cpu.Graph().Outputs()[0]
	data := make([]float32, 64*512)
	batch := map[*graph.Node][]byte{in: tensor.Bytes(data)}
	dst := make([]byte, 64*512*4)
	for _, depth := range []int{1, 3} {
		name := map[int]string{1: "synchronous", 3: "pipelined-3"}[depth]
		b.Run(name, func(b *testing.B) {
			const chunk = 16
			sets := make([]map[*graph.Node][]byte, chunk)
			for i := range sets {
				sets[i] = batch
			}
			for b.Loop() {
				if err := pr.RunPipelined(sets, []*graph.Node{out}, depth, func(_ int, c *metal.Commit) error {
					return c.Read(out, dst)
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunk), "ns/run")
		})
	}
}

// BenchmarkCompiledPipelined is BenchmarkPipelined through the front
// door: CompiledGraph.Run one set at a time against RunPipelined (three
// commits in flight, each snapshotting its outputs); ns/run in both.
func BenchmarkCompiledPipelined(b *testing.B) {
	needMetal(b)
	g := graph.New()
	x := g.Input("x", tensor.F32, 64, 512)
	h := g.Gelu(g.MatMul(x, g.Param("w1", tensor.F32, 512, 512)))
	g.Output(g.MatMul(h, g.Param("w2", tensor.F32, 512, 512)))
	cg, err := kiln.NewSession(kiln.Metal()).Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	defer cg.Close()
	ins := fill(b, g, nil, cg)
	const chunk = 16
	sets := make([][]kiln.Input, chunk)
	for i := range sets {
		sets[i] = ins
	}
	b.Run("synchronous", func(b *testing.B) {
		for b.Loop() {
			for _, set := range sets {
				if _, err := cg.Run(set...); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunk), "ns/run")
	})
	b.Run("pipelined-3", func(b *testing.B) {
		for b.Loop() {
			if _, err := cg.RunPipelined(sets); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunk), "ns/run")
	})
}
