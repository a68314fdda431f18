package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/onnx"
	"github.com/kilnml/kiln/tensor"
)

// compileWithParams compiles g for dev and sets every param to seeded
// random values (the same values for every device).
func compileWithParams(tb testing.TB, g *graph.Graph, dev kiln.Device) *kiln.CompiledGraph {
	tb.Helper()
	cg, err := kiln.NewSession(dev).Compile(g)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cg.Close() })
	rng := rand.New(rand.NewPCG(7, 8))
	for _, p := range cg.Params() {
		w := make([]float32, p.Shape.NumElements())
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.3)
		}
		if err := cg.SetParam(p.Name, w); err != nil {
			tb.Fatal(err)
		}
	}
	return cg
}

// demoInputs are the demo encoder's inputs as float32.
func demoInputs(cfg demo.Config) []kiln.Input {
	ids, mask := demo.Inputs(cfg, 3)
	fids := make([]float32, len(ids))
	for i, v := range ids {
		fids[i] = float32(v)
	}
	return []kiln.Input{kiln.In("input_ids", fids), kiln.In("attention_mask", mask)}
}

// closeTo fails when got and want differ by more than tol·(1+|want|).
func closeTo(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if approx.Close(g, w, tol*(1+math.Abs(w))) {
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("%s [%d]: %g, want %g", what, i, g, w)
		}
	}
}

// TestGPUGraphModel: replaying the captured demo encoder gives what the
// per-kernel run gives, through Run and through the pinned buffers, and
// RunInPlace allocates nothing.
func TestGPUGraphModel(t *testing.T) {
	needGPU(t)
	cfg := demo.Tiny
	cg := compileWithParams(t, demo.Encoder(cfg), kiln.CUDA(0))
	ins := demoInputs(cfg)
	want, err := cg.Run(ins...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cuda.NewGraphModel(cg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, ms, err := m.RunTimed(ins...)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(float64(ms)) || ms < 0 {
		t.Errorf("GPU time %v ms", ms)
	}
	for o := range want {
		closeTo(t, "Run output", got[o], want[o], 1e-6)
		if shape := m.OutputShapes()[o]; tensor.Shape(shape).NumElements() != len(want[o]) {
			t.Errorf("output %d shape %v for %d values", o, shape, len(want[o]))
		}
	}
	// In place: the pinned inputs, in each input's dtype.
	ids := tensor.Elems[int64](m.InputSlice(0))
	for i, v := range ins[0].Data {
		ids[i] = int64(v)
	}
	copy(tensor.Elems[float32](m.InputSlice(1)), ins[1].Data)
	clear(m.OutputSlice(0))
	if _, err := m.RunTimedInPlace(); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "OutputSlice", tensor.Elems[float32](m.OutputSlice(0)), want[0], 1e-6)
	if a := testing.AllocsPerRun(20, func() { _ = m.RunInPlace() }); a != 0 {
		t.Errorf("RunInPlace allocates %v times per run", a)
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = m.RunTimedInPlace() }); a != 0 {
		t.Errorf("RunTimedInPlace allocates %v times per run", a)
	}
	// Bad calls are errors; the model still works after them.
	for _, bad := range [][]kiln.Input{ins[:1], {ins[0], ins[0]}, {ins[0], kiln.In("nope", ins[1].Data)}, {ins[0], kiln.In("attention_mask", ins[1].Data[1:])}} {
		if _, err := m.Run(bad...); err == nil {
			t.Errorf("Run(%d inputs) with a bad input succeeded", len(bad))
		}
	}
	if m.InputSlice(2) != nil || m.OutputSlice(-1) != nil {
		t.Error("out-of-range slice is not nil")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := m.RunInPlace(); err == nil || m.InputSlice(0) != nil {
		t.Error("model usable after Close")
	}
	if _, err := m.Run(ins...); err == nil {
		t.Error("Run after Close succeeded")
	}
}

// TestGPUCublas: plain GEMMs (F32, transposed Gemm, batched, BF16) lower to
// cuBLAS where it loads, match the CPU, and replay in a captured graph;
// with KILN_CUBLAS=off they run the PTX GEMM.
// KILN_TEST_REQUIRE_CUBLAS=1 makes a missing cuBLAS a failure.
func TestGPUCublas(t *testing.T) {
	needGPU(t)
	if _, err := cuda.CublasLibrary(); err != nil {
		if os.Getenv("KILN_TEST_REQUIRE_CUBLAS") == "1" {
			t.Fatalf("KILN_TEST_REQUIRE_CUBLAS=1: %v", err)
		}
		t.Skipf("no cuBLAS: %v", err)
	}
	build := func(dt tensor.DType) *graph.Graph {
		g := graph.New()
		a := g.Input("a", dt, 3, 70, 33)
		g.Output(g.MatMul(a, g.Param("w", dt, 33, 100)))
		x := g.Input("x", dt, 40, 24)
		g.Output(g.Gemm(x, g.Param("v", dt, 17, 40), nil, 0.5, 0, true, true))
		return g
	}
	for _, c := range []struct {
		dt  tensor.DType
		tol float64
	}{{tensor.F32, 1e-4}, {tensor.BF16, 2e-2}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			g := build(c.dt)
			cpu := compileWithParams(t, g, kiln.CPU)
			gpu := compileWithParams(t, g, kiln.CUDA(0))
			if n := gpu.Stats().Variants[graph.OpMatMul.String()+"/cublas"]; n == 0 {
				t.Errorf("no MatMul ran on cuBLAS: %s", gpu.Report())
			}
			rng := rand.New(rand.NewPCG(1, 1))
			var ins []kiln.Input
			for _, in := range cpu.Inputs() {
				v := make([]float32, in.Shape.NumElements())
				for i := range v {
					v[i] = float32(rng.NormFloat64())
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
			m, err := cuda.NewGraphModel(gpu)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			replay, err := m.Run(ins...)
			if err != nil {
				t.Fatal(err)
			}
			for o := range want {
				closeTo(t, "cuBLAS vs CPU", got[o], want[o], c.tol)
				closeTo(t, "graph replay vs run", replay[o], got[o], 1e-6)
			}
		})
	}
	t.Setenv("KILN_CUBLAS", "off")
	off := compileWithParams(t, build(tensor.F32), kiln.CUDA(0))
	if v := off.Stats().Variants; v[graph.OpMatMul.String()+"/cublas"] != 0 || v[graph.OpMatMul.String()+"/ptx"] == 0 {
		t.Errorf("KILN_CUBLAS=off: variants %v", v)
	}
}

// TestGPUONNXModels runs the exported test models on CUDA and on the CPU
// with the same weights and inputs. A model with an op that has no CUDA
// kernel yet is skipped, naming it.
func TestGPUONNXModels(t *testing.T) {
	needGPU(t)
	for _, name := range []string{"mlp", "bert", "cnn"} {
		t.Run(name, func(t *testing.T) {
			compareModelDir(t, filepath.Join("..", "..", "onnx", "testdata", "models", name))
		})
	}
}

// TestGPUZoo runs every model of the zoo (onnx/testdata/export_zoo.py,
// the directory KILN_ZOO names) on CUDA and on the CPU; the CPU's
// outputs are checked against PyTorch by onnx's TestZoo.
func TestGPUZoo(t *testing.T) {
	needGPU(t)
	dir := os.Getenv("KILN_ZOO")
	if dir == "" {
		t.Skip("KILN_ZOO is not set: generate the zoo with onnx/testdata/export_zoo.py DIR and set KILN_ZOO=DIR")
	}
	models, err := filepath.Glob(filepath.Join(dir, "*", "model.onnx"))
	if err != nil || len(models) == 0 {
		t.Fatalf("KILN_ZOO=%s holds no */model.onnx (%v)", dir, err)
	}
	for _, m := range models {
		d := filepath.Dir(m)
		t.Run(filepath.Base(d), func(t *testing.T) { compareModelDir(t, d) })
	}
}

// compareModelDir runs dir/model.onnx on the CPU and on cuda:0 with the
// inputs saved beside it (in_<name>.npy) and compares the outputs.
func compareModelDir(t *testing.T, dir string) {
	var outs [2][]kiln.TypedOutput
	for i, dev := range []kiln.Device{kiln.CPU, kiln.CUDA(0)} {
		m, err := onnx.Load(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		cg, err := kiln.NewSession(dev).Compile(m.Graph)
		if err != nil && dev != kiln.CPU && strings.Contains(err.Error(), "no GPU kernel") {
			t.Skipf("not yet on CUDA: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer cg.Close()
		if err := m.SetParams(cg); err != nil {
			t.Fatal(err)
		}
		var ins []kiln.TypedInput
		for _, in := range cg.Inputs() {
			v, err := npy.ReadFile(filepath.Join(dir, "in_"+in.Name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			ins = append(ins, kiln.TypedInput{Name: in.Name, Data: v.Data, DType: v.DType})
		}
		if outs[i], err = cg.RunTyped(ins...); err != nil {
			t.Fatal(err)
		}
	}
	for o := range outs[0] {
		want, got := tensor.Tensor{DType: outs[0][o].DType, Shape: outs[0][o].Shape, Data: outs[0][o].Data},
			tensor.Tensor{DType: outs[1][o].DType, Shape: outs[1][o].Shape, Data: outs[1][o].Data}
		w, g := tensor.New(tensor.F32, want.Shape...), tensor.New(tensor.F32, got.Shape...)
		if tensor.Convert(w, want) != nil || tensor.Convert(g, got) != nil {
			t.Fatalf("output %d: %v vs %v", o, want.DType, got.DType)
		}
		closeTo(t, fmt.Sprintf("%s output %d", filepath.Base(dir), o), g.F32(), w.F32(), 1e-4)
	}
}
