package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// needGPU skips without a usable GPU, or fails when KILN_TEST_REQUIRE_GPU=1
// (the GPU machine's check script) so a broken driver cannot pass.
func needGPU(t testing.TB) {
	t.Helper()
	n, err := cuda.Count()
	if err == nil && n > 0 {
		return
	}
	reason := "no GPU"
	if err != nil {
		reason = err.Error()
	}
	if os.Getenv("KILN_TEST_REQUIRE_GPU") == "1" {
		t.Fatalf("KILN_TEST_REQUIRE_GPU=1: %s", reason)
	}
	t.Skipf("GPU tests need an NVIDIA GPU: %s", reason)
}

// compare runs g on the CPU (the reference) and on cuda:0 with the same
// random params and inputs, and checks every output within tol
// (relative to 1 + |reference|).
func compare(t *testing.T, g *graph.Graph, tol float64, inputs map[string][]float32) {
	t.Helper()
	cpu, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	gpu, err := kiln.NewSession(kiln.CUDA(0)).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range g.Params() {
		w := make([]float32, p.Shape.NumElements())
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.5)
		}
		for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
			if err := cg.SetParam(p.Name, w); err != nil {
				t.Fatal(err)
			}
		}
	}
	var ins []kiln.Input
	for _, in := range g.Inputs() {
		v, ok := inputs[in.Name]
		if !ok {
			v = make([]float32, in.Shape.NumElements())
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
		}
		ins = append(ins, kiln.In(in.Name, v))
	}
	want, err := cpu.Run(ins...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.Run(ins...)
	if err != nil {
		t.Fatal(err)
	}
	for o := range want {
		bad := 0
		for i := range want[o] {
			w, g := float64(want[o][i]), float64(got[o][i])
			if approx.Far(g, w, tol*(1+math.Abs(w))) {
				if bad++; bad <= 5 {
					t.Errorf("output %d [%d]: cuda %g, cpu %g", o, i, g, w)
				}
			}
		}
	}
}

func TestGPUOps(t *testing.T) {
	needGPU(t)
	build := map[string]func(g *graph.Graph){
		"unary": func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 3, 257)
			for _, f := range []func(*graph.Node) *graph.Node{g.Exp, g.Tanh, g.Sigmoid, g.Gelu, g.GeluTanh, g.Silu, g.Erf, g.Relu, g.Abs} {
				g.Output(f(x))
			}
			g.Output(g.Log(g.Abs(x)))
			g.Output(g.Sqrt(g.Abs(x)))
		},
		"broadcast": func(g *graph.Graph) {
			x, b := g.Input("x", tensor.F32, 4, 5, 6), g.Param("b", tensor.F32, 5, 1)
			g.Output(g.Div(g.Sub(g.Mul(x, b), b), g.Add(g.Abs(b), b)))
		},
		"rows": func(g *graph.Graph) {
			x, s := g.Input("x", tensor.F32, 6, 300), g.Param("s", tensor.F32, 300)
			g.Output(g.Softmax(x, 1))
			g.Output(g.LogSoftmax(x, 0))
			g.Output(g.LayerNorm(x, s, s, 1, 1e-5))
			g.Output(g.RMSNorm(x, s, 1, 1e-6))
			g.Output(g.ReduceSum(x, false, 1))
			g.Output(g.ReduceMax(x, true, 0))
		},
		"matmul": func(g *graph.Graph) {
			a, b := g.Input("a", tensor.F32, 2, 70, 33), g.Param("b", tensor.F32, 33, 100)
			g.Output(g.MatMul(a, b))
			g.Output(g.Relu(g.Add(g.MatMul(a, b), g.Param("bias", tensor.F32, 100))))
			// Deep products on small grids: K split among four groups of
			// 16- and of 32-deep steps (ptx.autoTile).
			for _, k := range []int{600, 1500} {
				a2, b2 := g.Input(fmt.Sprintf("a%d", k), tensor.F32, 2, 40, k), g.Param(fmt.Sprintf("b%d", k), tensor.F32, k, 72)
				g.Output(g.Gelu(g.Add(g.MatMul(a2, b2), g.Param(fmt.Sprintf("bias%d", k), tensor.F32, 72))))
			}
		},
		"movement": func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 2, 3, 4)
			g.Output(g.Transpose(x, 2, 0, 1))
			g.Output(g.Concat(1, x, x))
			g.Output(g.Pad(x, []int{0, 1, 1, 0, 1, 2}, graph.PadReflect, 0))
			g.Output(g.Slice(x, graph.SliceSpec{Starts: []int{3}, Ends: []int{0}, Axes: []int{2}, Steps: []int{-1}}))
			g.Output(g.Tile(x, 1, 2, 1))
		},
	}
	for name, b := range build {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			b(g)
			compare(t, g, 2e-5, nil)
		})
	}
}

func TestGPUDemoEncoder(t *testing.T) {
	needGPU(t)
	cfg := demo.Tiny
	g := demo.Encoder(cfg)
	ids, mask := demo.Inputs(cfg, 3)
	fids := make([]float32, len(ids))
	for i, v := range ids {
		fids[i] = float32(v)
	}
	compare(t, g, 1e-4, map[string][]float32{"input_ids": fids, "attention_mask": mask})
}

// TestGPUStepTimes: with step timing on, a CUDA program reports a GPU
// time for every step, their sum fits inside the wall time of the runs,
// and the outputs do not change.
func TestGPUStepTimes(t *testing.T) {
	needGPU(t)
	cfg := demo.Tiny
	cg := compileWithParams(t, demo.Encoder(cfg), kiln.CUDA(0))
	ids, mask := demo.Inputs(cfg, 3)
	fids := make([]float32, len(ids))
	for i, v := range ids {
		fids[i] = float32(v)
	}
	ins := []kiln.Input{kiln.In("input_ids", fids), kiln.In("attention_mask", mask)}
	want, err := cg.Run(ins...)
	if err != nil {
		t.Fatal(err)
	}
	x, err := cg.Executable()
	if err != nil {
		t.Fatal(err)
	}
	st, ok := x.(exec.StepTimer)
	if !ok {
		t.Fatalf("%T is not an exec.StepTimer", x)
	}
	info := st.StepInfo()
	if len(info) != cg.Stats().Steps {
		t.Fatalf("%d step infos for %d steps", len(info), cg.Stats().Steps)
	}
	if err := st.SetStepTimes(make([]time.Duration, len(info)+1)); err == nil {
		t.Error("SetStepTimes took one duration too many")
	}
	d := make([]time.Duration, len(info))
	if err := st.SetStepTimes(d); err != nil {
		t.Fatal(err)
	}
	const runs = 3
	t0 := time.Now()
	for range runs {
		got, err := cg.Run(ins...)
		if err != nil {
			t.Fatal(err)
		}
		for o := range want {
			closeTo(t, "timed run", got[o], want[o], 1e-6)
		}
	}
	wall := time.Since(t0)
	var sum time.Duration
	for i, v := range d {
		if v <= 0 {
			t.Errorf("step %d %s (%s): time %v", i, info[i].Node, info[i].Variant, v)
		}
		sum += v
	}
	if sum > wall {
		t.Errorf("steps sum to %v, more than the %v the %d runs took", sum, wall, runs)
	}
	t.Logf("%d steps: %v per run on the GPU, %v wall", len(d), sum/runs, wall/runs)
	if err := st.SetStepTimes(nil); err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(d)
	if _, err := cg.Run(ins...); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d, before) {
		t.Error("SetStepTimes(nil) left timing on")
	}
}
