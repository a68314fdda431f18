package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/tensor"
)

// The models onnx/testdata/export_models.py exported from PyTorch, with
// PyTorch's inputs and outputs beside them.
var modelsDir = filepath.Join("..", "..", "onnx", "testdata", "models")

// capture runs a command with stdout and stderr captured.
func capture(t *testing.T, cmd func([]string) error, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	stdout, stderr = &out, &errOut
	defer func() { stdout, stderr = os.Stdout, os.Stderr }()
	err := cmd(args)
	return out.String(), errOut.String(), err
}

// TestRunMatchesTorch: kiln run on the BERT-style encoder's saved inputs
// writes outputs that match PyTorch's to 1e-4.
func TestRunMatchesTorch(t *testing.T) {
	dir := filepath.Join(modelsDir, "bert")
	outDir := t.TempDir()
	out, _, err := capture(t, runRun, filepath.Join(dir, "model.onnx"),
		"--input", "input_ids="+filepath.Join(dir, "in_input_ids.npy"),
		"--input", "attention_mask="+filepath.Join(dir, "in_attention_mask.npy"),
		"--output", outDir, "--threads", "1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"last_hidden_state f32[2 16 64]: min ", "pooled f32[2 64]: min "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"last_hidden_state", "pooled"} {
		got, err := npy.ReadFile(filepath.Join(outDir, name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := npy.ReadFile(filepath.Join(dir, "out_"+name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Shape.Equal(want.Shape) || got.DType != want.DType {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
		g, w := got.F32(), want.F32()
		for i := range w {
			if approx.Far(float64(g[i]), float64(w[i]), 1e-4*(1+math.Abs(float64(w[i])))) {
				t.Fatalf("%s[%d] = %v, PyTorch %v", name, i, g[i], w[i])
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	mlp := filepath.Join(modelsDir, "mlp", "model.onnx")
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.npy")
	os.WriteFile(bad, []byte("\x93NUMPY\x01\x00garbage"), 0o644)
	wrong := filepath.Join(tmp, "wrong.npy")
	if err := npy.WriteFile(wrong, tensor.New(tensor.F32, 3, 32)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		usage bool   // a command-line mistake (exit status 2)
		want  string // in the error
	}{
		{"no model", nil, true, "no model file"},
		{"two models", []string{mlp, mlp}, true, "one model file"},
		{"missing model", []string{filepath.Join(tmp, "none.onnx")}, false, "no such file"},
		{"bad flag", []string{mlp, "--bogus"}, true, "bogus"},
		{"bad input spec", []string{mlp, "--input", "x"}, true, "name=file.npy"},
		{"unknown input", []string{mlp, "--input", "q=" + wrong}, true, "no input q"},
		{"missing npy", []string{mlp, "--input", "x=" + filepath.Join(tmp, "none.npy")}, false, "no such file"},
		{"bad npy", []string{mlp, "--input", "x=" + bad}, false, "npy"},
		{"wrong shape", []string{mlp, "--input", "x=" + wrong}, false, "shape [3 32], the model takes [4 32]"},
		{"bad shape flag", []string{mlp, "--shape", "x=4,a"}, true, "not a dim"},
		{"shape of no input", []string{mlp, "--shape", "q=4,32"}, false, "no such input"},
		{"negative threads", []string{mlp, "--threads", "-1"}, true, "--threads"},
		{"absurd threads", []string{mlp, "--threads", "5000000"}, true, "--threads 5000000: want 0 to 1024"},
		{"unknown device", []string{mlp, "--device", "tpu"}, true, `--device "tpu": want cpu, cuda, cuda:N or metal`},
		{"bad GPU number", []string{mlp, "--device", "cuda:x"}, true, `"x" is not a GPU number`},
		{"cpu index", []string{mlp, "--device", "cpu:1"}, true, "cpu takes no index"},
		{"threads on a GPU", []string{mlp, "--device", "cuda:1", "--threads", "2"}, true, "worker threads are for --device cpu, not cuda:1"},
		{"not a model", []string{wrong}, false, ".npy array"},
		{"output under a file", []string{mlp, "--output", filepath.Join(wrong, "out")}, false, "not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := capture(t, runRun, c.args...)
			if err == nil {
				t.Fatal("no error")
			}
			var ue usageError
			if errors.As(err, &ue) != c.usage {
				t.Errorf("usage error %v, want %v: %v", !c.usage, c.usage, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// TestParseDevice: --device names map to kiln's devices.
func TestParseDevice(t *testing.T) {
	for in, want := range map[string]kiln.Device{"": kiln.CPU, "cpu": kiln.CPU, " cuda ": kiln.CUDA(0), "cuda:3": kiln.CUDA(3), "metal": kiln.Metal()} {
		if got, err := parseDevice(in); err != nil || got != want {
			t.Errorf("parseDevice(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestRunRandomInputs: without --input, the encoder runs on random ids
// that stay inside its 100-token vocabulary, and says so on stderr.
func TestRunRandomInputs(t *testing.T) {
	out, errOut, err := capture(t, runRun, filepath.Join(modelsDir, "bert", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "input input_ids i64[2 16]: random") || !strings.Contains(out, "pooled f32[2 64]") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if strings.Contains(out, "NaN") {
		t.Errorf("random inputs gave NaNs:\n%s", out)
	}
}

// benchJSON runs kiln bench with args and --json, and returns the
// decoded result and the JSON.
func benchJSON(t *testing.T, args ...string) (benchResult, string) {
	t.Helper()
	out, _, err := capture(t, runBench, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r, out
}

func TestBenchJSON(t *testing.T) {
	r, _ := benchJSON(t, filepath.Join(modelsDir, "mlp", "model.onnx"), "--runs", "5", "--warmup", "1", "--threads", "1")
	if r.Runs != 5 || r.Warmup != 1 || r.Threads != 1 || r.Batch != 4 {
		t.Errorf("result %+v", r)
	}
	if !(r.MinMs > 0 && r.MinMs <= r.MedianMs && r.MedianMs <= r.P90Ms && r.MinMs <= r.MeanMs) {
		t.Errorf("latencies out of order: %+v", r)
	}
	if d := r.RunsPerSec * r.MeanMs / 1000; approx.Far(d, 1, 1e-6) {
		t.Errorf("throughput %v runs/s disagrees with mean %v ms", r.RunsPerSec, r.MeanMs)
	}
}

func TestBenchText(t *testing.T) {
	out, errOut, err := capture(t, runBench, filepath.Join(modelsDir, "cnn", "model.onnx"), "--runs", "4", "--warmup", "0", "--progress", "on")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"latency: median ", "p90 ", "throughput: ", "x f32[1 3 32 32] (random)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "4/4") {
		t.Errorf("no progress bar on stderr: %q", errOut)
	}
	for _, args := range [][]string{{"--runs", "0"}, {"--warmup", "-1"}, {"--progress", "maybe"}} {
		_, _, err := capture(t, runBench, append([]string{filepath.Join(modelsDir, "cnn", "model.onnx")}, args...)...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestInspect(t *testing.T) {
	out, _, err := capture(t, runInspect, filepath.Join(modelsDir, "bert", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"input  input_ids int64[2 16]", "output pooled float[2 64]", "ONNX ops (", "MatMul×16",
		"fusion:", "attention:", "plan:", "arena", "kernels:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestInspectUnsupported: every unsupported node is listed, after the
// model's description, and the command fails.
func TestInspectUnsupported(t *testing.T) {
	out, _, err := capture(t, runInspect, filepath.Join("..", "..", "onnx", "testdata", "special", "unsupported.onnx"))
	if !errors.Is(err, errUnsupported) {
		t.Fatalf("error %v, want errUnsupported", err)
	}
	for _, want := range []string{"ONNX ops (", "unsupported (4 nodes)", "Col2Im", "StringNormalizer", "FusedMatMul", "LayerNormalization"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestInspectSymbolicDims(t *testing.T) {
	model := filepath.Join("..", "..", "onnx", "testdata", "special", "symbolic", "model.onnx")
	_, _, err := capture(t, runInspect, model)
	if err == nil || !strings.Contains(err.Error(), "--shape") {
		t.Errorf("unbound dims: %v, want a hint naming --shape", err)
	}
	if _, _, err := capture(t, runInspect, model, "--dim", "batch=2", "--dim", "seq=5"); err != nil {
		t.Errorf("with --dim: %v", err)
	}
}

// TestRandomIndexBound: integer inputs that index an embedding table
// stay below its smallest size, through a reshape; others get 0 or 1.
func TestRandomIndexBound(t *testing.T) {
	g := graph.New()
	ids := g.Input("ids", tensor.I64, 4, 64)
	mask := g.Input("mask", tensor.I64, 4, 64)
	x := g.Input("x", tensor.F32, 4, 64)
	big := g.Param("big", tensor.F32, 10, 8)
	small := g.Param("small", tensor.F32, 7, 8)
	flat := g.Reshape(ids, 256)
	e := g.Add(g.Gather(big, flat, 0), g.Gather(small, flat, 0))
	g.Output(e)
	g.Output(g.Add(x, g.Cast(mask, tensor.F32)))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(name string, dt tensor.DType, lo, hi float64) {
		v, err := randomTensor(g, kiln.TensorInfo{Name: name, DType: dt, Shape: tensor.Shape{4, 64}}, rng)
		if err != nil {
			t.Fatal(err)
		}
		vals := v.Float64s()
		seen := map[float64]bool{}
		for _, x := range vals {
			if x < lo || x >= hi {
				t.Fatalf("%s: %v outside [%v, %v)", name, x, lo, hi)
			}
			seen[math.Floor(x)] = true
		}
		if dt.IsInt() && len(seen) != int(hi-lo) {
			t.Errorf("%s: %d distinct values in 256, want all %v", name, len(seen), hi-lo)
		}
	}
	check("ids", tensor.I64, 0, 7)
	check("mask", tensor.I64, 0, 2)
	check("x", tensor.F32, -1, 1)
}

func TestSummarize(t *testing.T) {
	f, _ := tensor.FromF32(tensor.Shape{4}, []float32{1, 2, 3, float32(math.NaN())})
	// mean 2, population std sqrt(((1-2)² + 0 + (3-2)²)/3) = 0.816497.
	if got, want := summarize(f), "min 1 max 3 mean 2 std 0.816497 (1 NaN, 0 Inf) [1 2 3 NaN]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	i, _ := tensor.FromI64(tensor.Shape{7}, []int64{5, -2, 9, 0, 0, 0, 1})
	if got, want := summarize(i), "min -2 max 9 [5 -2 9 0 0 0 ...]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b, _ := tensor.FromBool(tensor.Shape{3}, []bool{true, false, true})
	if got, want := summarize(b), "2 of 3 true [1 0 1]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"logits": "logits", "/encoder/layer.0/Add_output_0": "_encoder_layer.0_Add_output_0",
		"../../etc/passwd": "_.._etc_passwd", "": "output", "...": "output",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOutputPaths: distinct outputs get distinct files, also where their
// safe names (or their names up to case) coincide, so none overwrites
// another (out/a and out_a both became out_a.npy, and the second won).
func TestOutputPaths(t *testing.T) {
	dir := t.TempDir()
	var infos []kiln.TensorInfo
	for _, n := range []string{"out/a", "out_a", "..y", "y", "Y", "out_a_2", "out:a"} {
		infos = append(infos, kiln.TensorInfo{Name: n})
	}
	paths, err := outputPaths(dir, infos)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"out_a", "out_a_2", "y", "y_2", "Y_3", "out_a_2_2", "out_a_3"}
	seen := map[string]bool{}
	for i, p := range paths {
		if filepath.Dir(p) != dir || filepath.Base(p) != want[i]+".npy" {
			t.Errorf("%q -> %s, want %s.npy", infos[i].Name, p, want[i])
		}
		if seen[strings.ToLower(p)] {
			t.Errorf("%s given twice", p)
		}
		seen[strings.ToLower(p)] = true
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the write check left %d files behind", len(ents))
	}
}

// TestRunBindsSymbolicDims: a model declared [batch, seq, 4] runs at the
// shape of the files given for it, and --shape still overrides.
func TestRunBindsSymbolicDims(t *testing.T) {
	model := filepath.Join("..", "..", "onnx", "testdata", "special", "symbolic", "model.onnx")
	tmp := t.TempDir()
	xv := make([]float32, 2*5*4)
	for i := range xv {
		xv[i] = float32(i%7) - 3
	}
	mv := []float32{1, 1, 1, 0, 0, 1, 0, 1, 0, 1}
	x, _ := tensor.FromF32(tensor.Shape{2, 5, 4}, xv)
	m, _ := tensor.FromF32(tensor.Shape{2, 5}, mv)
	npy.WriteFile(filepath.Join(tmp, "x.npy"), x)
	npy.WriteFile(filepath.Join(tmp, "m.npy"), m)
	_, _, err := capture(t, runRun, model, "--input", "x="+filepath.Join(tmp, "x.npy"),
		"--input", "m="+filepath.Join(tmp, "m.npy"), "--output", tmp)
	if err != nil {
		t.Fatal(err)
	}
	y, err := npy.ReadFile(filepath.Join(tmp, "y.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !y.Shape.Equal(tensor.Shape{2, 4}) {
		t.Fatalf("y is %v, want [2 4]", y.Shape)
	}
	for b := range 2 { // y[b,k] = Σ_s x[b,s,k]·m[b,s]
		for k := range 4 {
			var want float64
			for s := range 5 {
				want += float64(xv[(b*5+s)*4+k]) * float64(mv[b*5+s])
			}
			if got := y.F32()[b*4+k]; float64(got) != want {
				t.Errorf("y[%d,%d] = %v, want %v", b, k, got, want)
			}
		}
	}
	_, _, err = capture(t, runRun, model, "--input", "x="+filepath.Join(tmp, "x.npy"), "--shape", "x=2,3,4")
	if err == nil || !strings.Contains(err.Error(), "shape [2 5 4], the model takes [2 3 4]") {
		t.Errorf("--shape against the file: %v", err)
	}
}

// TestRunConvertsInputDType: a float64 file for a float32 input is
// converted at the boundary and gives the float32 file's result.
func TestRunConvertsInputDType(t *testing.T) {
	dir := filepath.Join(modelsDir, "mlp")
	x, err := npy.ReadFile(filepath.Join(dir, "in_x.npy"))
	if err != nil {
		t.Fatal(err)
	}
	x64, err := tensor.FromFloat64s(tensor.F64, x.Shape, x.Float64s())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := npy.WriteFile(filepath.Join(tmp, "x64.npy"), x64); err != nil {
		t.Fatal(err)
	}
	var outs []tensor.Tensor
	for _, f := range []string{filepath.Join(dir, "in_x.npy"), filepath.Join(tmp, "x64.npy")} {
		od := t.TempDir()
		_, errOut, err := capture(t, runRun, filepath.Join(dir, "model.onnx"), "--input", "x="+f, "--output", od)
		if err != nil {
			t.Fatal(err)
		}
		if converted := strings.Contains(errOut, "f64 converted to f32"); converted != strings.HasSuffix(f, "x64.npy") {
			t.Errorf("%s: the conversion note is %v in %q", f, converted, errOut) // it was silent
		}
		y, err := npy.ReadFile(filepath.Join(od, "y.npy"))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, y)
	}
	if !bytes.Equal(outs[0].Data, outs[1].Data) {
		t.Errorf("float64 input gave a different result")
	}
}

// TestInspectUnsupportedKinds: inspect lists every node kiln cannot
// import, one line each with op, node, opset and reason, for an unknown
// op (also inside a Loop body), an unsupported attribute value, a shape
// computed at run time and a run-time trip count without a bound on its
// scan output's rows, and fails.
func TestInspectUnsupportedKinds(t *testing.T) {
	out, _, err := capture(t, runInspect, filepath.Join("..", "..", "onnx", "testdata", "special", "kinds.onnx"))
	if !errors.Is(err, errUnsupported) {
		t.Fatalf("error %v, want errUnsupported", err)
	}
	for _, want := range []string{
		"unsupported (5 nodes):",
		`NoSuchOp (node "mystery", ai.onnx opset 13): unknown op`,
		`Frobnicate (node "loop/body/frob", ai.onnx opset 13): unknown op`,
		`Cast (node "to_string", ai.onnx opset 13): cast to STRING`,
		`Reshape (node "reshape_dyn", ai.onnx opset 13): shape (input 1) must be known at import time, but it is computed at run time (a dynamic shape`,
		`Loop (node "loop", ai.onnx opset 13): the trip count is computed at run time and the Loop has 1 scan outputs, whose rows need a bound`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestInspectUnsupportedBeforeNodes: when the import stops before the
// nodes (here an unbound symbolic dim), inspect still lists the ops kiln
// lacks, subgraphs included, with the error's hint.
func TestInspectUnsupportedBeforeNodes(t *testing.T) {
	out, _, err := capture(t, runInspect, filepath.Join("..", "..", "onnx", "testdata", "special", "kinds_symbolic.onnx"))
	if err == nil || !strings.Contains(err.Error(), "--shape") {
		t.Errorf("error %v, want the unbound-dim hint naming --shape", err)
	}
	for _, want := range []string{
		"unsupported ops (2 nodes;",
		`NoSuchOp (node "mystery", ai.onnx opset 13): unknown op`,
		`Frobnicate (node "loop/body/frob", ai.onnx opset 13): unknown op`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
