package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// moeGPUModel is layers SwiGLU MoE layers (graph.MoE: router, softmax,
// top-k 2, renormalised) of e experts over tokens × h, FFN width f, each
// reading the last one's output.
func moeGPUModel(tokens, h, f, e, layers int) *graph.Graph {
	g := graph.New()
	y := g.Input("x", tensor.F32, tokens, h)
	for i := range layers {
		p := func(name string, dims ...int) *graph.Node { return g.Param(fmt.Sprint(name, i), tensor.F32, dims...) }
		y = g.MoE(y, graph.MoESpec{Router: p("router", h, e), Gate: p("gate", e, h, f), Up: p("up", e, h, f),
			Down: p("down", e, f, h), K: 2, Renormalize: true})
	}
	g.Output(y)
	return g
}

// moeInput is a random token batch.
func moeInput(n int) []float32 {
	rng := rand.New(rand.NewPCG(26, 4))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// firstResident is a mask of e experts with the first r resident.
func firstResident(e, r int) []bool {
	m := make([]bool, e)
	for i := range r {
		m[i] = true
	}
	return m
}

// TestGPUMoESplit runs a two-layer MoE model on the GPU under residency
// masks (all resident, none, mixed per layer, changed back) against the
// CPU with the same masks: outputs, residency stats and captured ids
// agree, split layers report the split variant, and the device holds the
// resident experts' bytes only.
func TestGPUMoESplit(t *testing.T) {
	needGPU(t)
	const tokens, h, f, e = 32, 256, 512, 8
	g := moeGPUModel(tokens, h, f, e, 2)
	cpu, gpu := compileWithParams(t, g, kiln.CPU), compileWithParams(t, g, kiln.CUDA(0))
	x := moeInput(tokens * h)
	perExpert := 3 * h * f * 4
	for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
		if err := cg.EnableMoETopKCapture(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		masks [][]bool
		res   int // experts resident over both layers
	}{
		{"all", [][]bool{nil, nil}, 2 * e},
		{"none", [][]bool{firstResident(e, 0), firstResident(e, 0)}, 0},
		{"mixed", [][]bool{firstResident(e, 3), firstResident(e, 6)}, 9},
		{"all again", [][]bool{nil, nil}, 2 * e},
	} {
		for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
			if err := cg.SetMoEResidentExpertsPerLayer(c.masks); err != nil {
				t.Fatal(err)
			}
		}
		want, err := cpu.Run(kiln.Input{Name: "x", Data: x})
		if err != nil {
			t.Fatal(err)
		}
		got, err := gpu.Run(kiln.Input{Name: "x", Data: x})
		if err != nil {
			t.Fatal(err)
		}
		approx.Slices(t, c.name, got[0], want[0], 1e-3, 1e-4)
		cs, err1 := cpu.TakeMoEResidencyStats()
		gs, err2 := gpu.TakeMoEResidencyStats()
		if err1 != nil || err2 != nil || !reflect.DeepEqual(gs, cs) {
			t.Errorf("%s: stats on the GPU %+v (%v), on the CPU %+v (%v)", c.name, gs, err2, cs, err1)
		}
		cc, err1 := cpu.TakeMoETopKCapture()
		gc, err2 := gpu.TakeMoETopKCapture()
		if err1 != nil || err2 != nil || !reflect.DeepEqual(gc, cc) {
			t.Errorf("%s: capture differs from the CPU's (%v, %v)", c.name, err2, err1)
		}
		x, err := gpu.Executable()
		if err != nil {
			t.Fatal(err)
		}
		if got := cuda.MoEDeviceBytes(x); got != c.res*perExpert {
			t.Errorf("%s: %d bytes of expert weights on the device, want %d", c.name, got, c.res*perExpert)
		}
		if split := strings.Contains(gpu.Report(), "MoE/split"); split != (c.res < 2*e) {
			t.Errorf("%s: split variant in the report %v: %s", c.name, split, gpu.Report())
		}
	}
}

// BenchmarkGPUMoESplit is the forward latency (wall time of Run, host
// part included) of a two-layer MoE model, 128 tokens, hidden 1024, FFN
// 2048, 8 experts, top 2, with r of each layer's experts resident: 8 is
// the GPU alone, 0 puts every routed row on the host; the metric devMiB
// is the expert weights the device holds.
func BenchmarkGPUMoESplit(b *testing.B) {
	needGPU(b)
	const tokens, h, f, e = 128, 1024, 2048, 8
	cg := compileWithParams(b, moeGPUModel(tokens, h, f, e, 2), kiln.CUDA(0))
	x := moeInput(tokens * h)
	for _, r := range []int{e, e / 2, 1, 0} {
		b.Run(fmt.Sprintf("resident=%d", r), func(b *testing.B) {
			mask := firstResident(e, r)
			if err := cg.SetMoEResidentExperts(mask); err != nil {
				b.Fatal(err)
			}
			if _, err := cg.Run(kiln.Input{Name: "x", Data: x}); err != nil { // places
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := cg.Run(kiln.Input{Name: "x", Data: x}); err != nil {
					b.Fatal(err)
				}
			}
			ex, err := cg.Executable()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(cuda.MoEDeviceBytes(ex))/(1<<20), "devMiB")
		})
	}
}
