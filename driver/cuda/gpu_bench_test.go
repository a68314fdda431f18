package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// replayTimed captures cg and replays it b.N times with random inputs,
// returning the GPU seconds of the graph launches alone.
func replayTimed(b *testing.B, cg *kiln.CompiledGraph) float64 {
	b.Helper()
	m, err := cuda.NewGraphModel(cg)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range cg.Inputs() {
		in := m.InputSlice(i)
		for j := range in {
			in[j] = byte(rng.IntN(64)) // small finite values in any float dtype
		}
	}
	if err := m.RunInPlace(); err != nil { // warm up
		b.Fatal(err)
	}
	var ms float64
	b.ResetTimer()
	for b.Loop() {
		t, err := m.RunTimedInPlace()
		if err != nil {
			b.Fatal(err)
		}
		ms += float64(t)
	}
	return ms / 1e3
}

// BenchmarkGPUGemm reports TFLOP/s of an n×n×n GEMM (2n³ flops, GPU time of
// the launch alone), F32 and BF16, on kiln's PTX kernel and on cuBLAS.
func BenchmarkGPUGemm(b *testing.B) {
	needGPU(b)
	for _, dt := range []tensor.DType{tensor.F32, tensor.BF16} {
		for _, n := range []int{1024, 4096} {
			for _, lib := range []string{"ptx", "cublas"} {
				b.Run(fmt.Sprintf("%v/%d/%s", dt, n, lib), func(b *testing.B) {
					if lib == "ptx" {
						b.Setenv("KILN_CUBLAS", "off")
					} else if _, err := cuda.CublasLibrary(); err != nil {
						b.Skip(err)
					}
					g := graph.New()
					g.Output(g.MatMul(g.Input("a", dt, n, n), g.Param("w", dt, n, n)))
					cg := compileWithParams(b, g, kiln.CUDA(0))
					if cg.Stats().Variants[graph.OpMatMul.String()+"/"+lib] != 1 {
						b.Fatalf("want the %s GEMM: %s", lib, cg.Report())
					}
					sec := replayTimed(b, cg)
					b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/sec/1e12, "TFLOP/s")
				})
			}
		}
	}
}

// BenchmarkGPUElementwise reports the GB/s of an F32 add of two 64 MiB
// vectors (bytes read and written over GPU time), to set against
// BenchmarkGPUCopy's device copy bandwidth.
func BenchmarkGPUElementwise(b *testing.B) {
	needGPU(b)
	const n = 16 << 20
	g := graph.New()
	g.Output(g.Add(g.Input("x", tensor.F32, n), g.Input("y", tensor.F32, n)))
	cg := compileWithParams(b, g, kiln.CUDA(0))
	sec := replayTimed(b, cg)
	b.ReportMetric(3*4*n*float64(b.N)/sec/1e9, "GB/s")
}

// BenchmarkGPUCopy reports device-to-device copy bandwidth (bytes read
// and written) of 256 MiB copies.
func BenchmarkGPUCopy(b *testing.B) {
	needGPU(b)
	d, err := cuda.Open(0)
	if err != nil {
		b.Fatal(err)
	}
	const n = 256 << 20
	var ms float64
	for b.Loop() {
		t, err := cuda.TimeDeviceCopy(d, n, 1)
		if err != nil {
			b.Fatal(err)
		}
		ms += float64(t)
	}
	b.ReportMetric(2*n*float64(b.N)/(ms/1e3)/1e9, "GB/s")
}

// BenchmarkGPUDemoEncoder is the latency of one MiniLM-sized demo encoder
// run: per-kernel launches (CompiledGraph.Run), graph replay with pageable
// inputs (GraphModel.Run) and from the pinned buffers (RunInPlace).
func BenchmarkGPUDemoEncoder(b *testing.B) {
	needGPU(b)
	cfg := demo.MiniLM
	cg := compileWithParams(b, demo.Encoder(cfg), kiln.CUDA(0))
	ins := demoInputs(cfg)
	b.Run("per-kernel", func(b *testing.B) {
		for b.Loop() {
			if _, err := cg.RunRaw(ins...); err != nil {
				b.Fatal(err)
			}
		}
	})
	m, err := cuda.NewGraphModel(cg)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	b.Run("graph", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Run(ins...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("graph-inplace", func(b *testing.B) {
		if _, err := m.Run(ins...); err != nil { // stages the inputs
			b.Fatal(err)
		}
		for b.Loop() {
			if err := m.RunInPlace(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
