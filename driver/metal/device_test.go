package metal_test

import (
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/metal"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// needMetal skips without a Metal device, or fails when
// KILN_TEST_REQUIRE_METAL=1 (mac-check.sh) so a broken driver cannot pass.
func needMetal(t testing.TB) {
	t.Helper()
	_, err := metal.Open()
	if err == nil {
		return
	}
	if os.Getenv("KILN_TEST_REQUIRE_METAL") == "1" {
		t.Fatalf("KILN_TEST_REQUIRE_METAL=1: %v", err)
	}
	t.Skipf("Metal tests need an Apple GPU: %v", err)
}

// fill sets random params on every compiled graph and returns random
// inputs (overridden by given).
func fill(t testing.TB, g *graph.Graph, given map[string][]float32, cgs ...*kiln.CompiledGraph) []kiln.Input {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range g.Params() {
		w := make([]float32, p.Shape.NumElements())
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.5)
		}
		for _, cg := range cgs {
			if err := cg.SetParam(p.Name, w); err != nil {
				t.Fatal(err)
			}
		}
	}
	var ins []kiln.Input
	for _, in := range g.Inputs() {
		v, ok := given[in.Name]
		if !ok {
			v = make([]float32, in.Shape.NumElements())
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
		}
		ins = append(ins, kiln.In(in.Name, v))
	}
	return ins
}

// closeTo reports elements differing by more than tol·(1+|want|).
func closeTo(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	bad := 0
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if approx.Far(g, w, tol*(1+math.Abs(w))) {
			if bad++; bad <= 5 {
				t.Errorf("%s [%d]: metal %g, cpu %g", what, i, g, w)
			}
		}
	}
}

// compare runs g on the CPU (the reference) and on Metal.
func compare(t *testing.T, g *graph.Graph, tol float64, given map[string][]float32) {
	t.Helper()
	cpu, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	gpu, err := kiln.NewSession(kiln.Metal()).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	ins := fill(t, g, given, cpu, gpu)
	want, err := cpu.Run(ins...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.Run(ins...)
	if err != nil {
		t.Fatal(err)
	}
	for o := range want {
		closeTo(t, "output "+g.OutputNames()[o], got[o], want[o], tol)
	}
}

// TestMetalOps runs every op family, the newer ops (scans, ArgMax, pools,
// BatchNorm, RoPE, fused and depthwise conv) included, against the CPU.
func TestMetalOps(t *testing.T) {
	needMetal(t)
	graphs := metalGraphs()
	maps.Copy(graphs, metal.NewOpGraphs())
	for name, build := range graphs {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			build(g)
			compare(t, g, 2e-5, nil)
		})
	}
}

// TestMetalTiledGemm runs the matmul graph with the tiled kernel too.
func TestMetalTiledGemm(t *testing.T) {
	needMetal(t)
	t.Setenv("KILN_METAL_GEMM", "tiled")
	g := graph.New()
	metalGraphs()["matmul"](g)
	compare(t, g, 2e-5, nil)
}

func TestMetalDemoEncoder(t *testing.T) {
	needMetal(t)
	cfg := demo.Tiny
	g := demo.Encoder(cfg)
	ids, mask := demo.Inputs(cfg, 3)
	fids := make([]float32, len(ids))
	for i, v := range ids {
		fids[i] = float32(v)
	}
	compare(t, g, 1e-4, map[string][]float32{"input_ids": fids, "attention_mask": mask})
}

// lowerMetal lowers a CPU-compiled graph (same fusion and plan) on the
// Metal backend directly, for the Program's pipelining API.
func lowerMetal(t testing.TB, cg *kiln.CompiledGraph, params map[string][]float32) *metal.Program {
	t.Helper()
	b, err := exec.OpenBackend("metal", 0)
	if err != nil {
		t.Fatal(err)
	}
	x, err := b.Lower(cg.Graph(), cg.Plan())
	if err != nil {
		t.Fatal(err)
	}
	pr := x.(*metal.Program)
	t.Cleanup(func() { pr.Close() })
	for _, p := range cg.Graph().Params() {
		if err := pr.Write(p, tensor.Bytes(params[p.Name])); err != nil {
			t.Fatal(err)
		}
	}
	return pr
}

// TestMetalPipelined: several commits in flight with different inputs;
// each commit's snapshot holds its own outputs, equal to a CPU run on
// its inputs (a shared output buffer would show the last run's values).
func TestMetalPipelined(t *testing.T) {
	needMetal(t)
	g := graph.New()
	x := g.Input("x", tensor.F32, 64, 96)
	w := g.Param("w", tensor.F32, 96, 80)
	g.Output(g.Softmax(g.MatMul(x, w), 1))
	cpu, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	wv := make([]float32, 96*80)
	for i := range wv {
		wv[i] = float32(rng.NormFloat64() * 0.3)
	}
	if err := cpu.SetParam("w", wv); err != nil {
		t.Fatal(err)
	}
	pr := lowerMetal(t, cpu, map[string][]float32{"w": wv})
	in, out := cpu.Graph().Inputs()[0], cpu.Graph().Outputs()[0]
	const runs = 6
	sets := make([][]float32, runs)
	var batches []map[*graph.Node][]byte
	for r := range sets {
		sets[r] = make([]float32, 64*96)
		for i := range sets[r] {
			sets[r][i] = float32(rng.NormFloat64())
		}
		batches = append(batches, map[*graph.Node][]byte{in: tensor.Bytes(sets[r])})
	}
	err = pr.RunPipelined(batches, []*graph.Node{out}, 3, func(i int, c *metal.Commit) error {
		got := make([]float32, 64*80)
		if err := c.Read(out, tensor.Bytes(got)); err != nil {
			return err
		}
		want, err := cpu.Run(kiln.In("x", sets[i]))
		if err != nil {
			return err
		}
		closeTo(t, "pipelined run", got, want[0], 2e-5)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// metalGraphs are the op families of the device tests (conv, attention
// and gathers included).
func metalGraphs() map[string]func(g *graph.Graph) {
	return map[string]func(g *graph.Graph){
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
			g.Output(g.ReduceMean(x, false, 0, 1))
		},
		"matmul": func(g *graph.Graph) {
			a, b := g.Input("a", tensor.F32, 2, 70, 33), g.Param("b", tensor.F32, 33, 100)
			g.Output(g.MatMul(a, b))
			g.Output(g.Relu(g.Add(g.MatMul(a, b), g.Param("bias", tensor.F32, 100))))
		},
		"movement": func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 2, 3, 4)
			g.Output(g.Transpose(x, 2, 0, 1))
			g.Output(g.Concat(1, x, x))
			g.Output(g.Pad(x, []int{0, 1, 1, 0, 1, 2}, graph.PadReflect, 0))
			g.Output(g.Pad(x, []int{1, 0, 0, 0, 2, 1}, graph.PadConstant, 2.5))
			g.Output(g.Slice(x, graph.SliceSpec{Starts: []int{3}, Ends: []int{0}, Axes: []int{2}, Steps: []int{-1}}))
			g.Output(g.Tile(x, 1, 2, 1))
			idx := g.Constant(tensor.Tensor{DType: tensor.I64, Shape: tensor.Shape{3}, Data: tensor.Bytes([]int64{2, -1, 0})})
			g.Output(g.Gather(x, idx, 1))
		},
		"conv": func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 1, 4, 9, 9)
			w, b := g.Param("w", tensor.F32, 6, 2, 3, 3), g.Param("cb", tensor.F32, 6)
			g.Output(g.Relu(g.Conv2D(x, w, b, graph.ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Groups: 2})))
		},
	}
}
