package onnx

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// testCase is one directory in ONNX's node-test layout: model.onnx and
// test_data_set_0/{input,output}_<i>.pb.
type testCase struct {
	dir     string
	inputs  []namedTensor
	outputs []namedTensor
}

type namedTensor struct {
	name string
	t    tensor.Tensor
}

func readPB(t *testing.T, path string) namedTensor {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := DecodeTensor(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	v, err := tp.Tensor()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return namedTensor{tp.Name, v.Clone()}
}

func loadCase(t *testing.T, dir string) testCase {
	t.Helper()
	c := testCase{dir: dir}
	for _, kind := range []string{"input", "output"} {
		for i := 0; ; i++ {
			p := filepath.Join(dir, "test_data_set_0", fmt.Sprintf("%s_%d.pb", kind, i))
			if _, err := os.Stat(p); err != nil {
				break
			}
			nt := readPB(t, p)
			if kind == "input" {
				c.inputs = append(c.inputs, nt)
			} else {
				c.outputs = append(c.outputs, nt)
			}
		}
	}
	return c
}

// closeEnough compares an output with its expected value: exact for
// integers and bools, |got-want| <= 1e-5 * (1 + |want|) for floats.
func closeEnough(got, want tensor.Tensor) error {
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		return fmt.Errorf("got %v, want %v", got, want)
	}
	g, w := got.Float64s(), want.Float64s()
	for i := range w {
		d := math.Abs(g[i] - w[i])
		if math.IsNaN(g[i]) != math.IsNaN(w[i]) || d > 1e-5*(1+math.Abs(w[i])) || (!want.DType.IsFloat() && d != 0) {
			return fmt.Errorf("element %d: got %v, want %v (got %v, want %v)", i, g[i], w[i], clipList(g), clipList(w))
		}
	}
	return nil
}

func clipList(v []float64) string {
	if len(v) > 12 {
		return fmt.Sprint(v[:12]) + "..."
	}
	return fmt.Sprint(v)
}

// runCase imports a case, checks the graph's interface against the test
// data, then runs it compiled on the CPU and through the reference
// interpreter, comparing both with the numpy results.
func runCase(t *testing.T, c testCase, opts ...Option) {
	t.Helper()
	m, err := Load(filepath.Join(c.dir, "model.onnx"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := m.SetParams(cg); err != nil {
		t.Fatal(err)
	}
	var ins []kiln.TypedInput
	feeds := map[string]tensor.Tensor{}
	for _, in := range c.inputs {
		ins = append(ins, kiln.TypedInput{Name: in.name, Data: in.t.Data, DType: in.t.DType})
		feeds[in.name] = in.t
	}
	outs, err := cg.RunTyped(ins...)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(c.outputs) {
		t.Fatalf("%d outputs, want %d", len(outs), len(c.outputs))
	}
	for i, o := range outs {
		if name := cg.Outputs()[i].Name; name != c.outputs[i].name {
			t.Errorf("output %d is %q, want %q", i, name, c.outputs[i].name)
		}
		got := tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: o.Data}
		if err := closeEnough(got, c.outputs[i].t); err != nil {
			t.Errorf("compiled output %q: %v", c.outputs[i].name, err)
		}
	}
	for _, p := range m.Graph.Params() {
		w, _ := m.Weight(p.Name)
		feeds[p.Name] = w.Clone()
	}
	ref, err := ops.Interpret(m.Graph, feeds)
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	for i, r := range ref {
		if err := closeEnough(r, c.outputs[i].t); err != nil {
			t.Errorf("interpreted output %q: %v", c.outputs[i].name, err)
		}
	}
}

func caseDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no test cases (%v): run testdata/gen_models.py", err)
	}
	sort.Strings(dirs)
	return dirs
}

func TestCases(t *testing.T) {
	for _, dir := range caseDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) { runCase(t, loadCase(t, dir)) })
	}
}

// TestEveryOpCovered: each op kiln maps appears in at least one case
// (testdata/cases, or the node suite's cases committed under
// testdata/node, which TestConformance runs), and each case's model
// imports at its opset.
func TestEveryOpCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, dir := range append(caseDirs(t), conformanceDirs(filepath.Join("testdata", "node"))...) {
		b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		mp, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range mp.Graph.Nodes {
			seen[n.OpType] = true
		}
	}
	var missing []string
	for op := range opTable {
		if !seen[op] {
			missing = append(missing, op)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("ops without a test case: %s", strings.Join(missing, ", "))
	}
}

// TestParamsAndConstants: weight initializers become params named as in
// the model; scalar and integer ones become constants.
func TestParamsAndConstants(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "cases", "attention_block", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var names []string
	for _, p := range m.Graph.Params() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "wk,wo,wq,wv" {
		t.Errorf("params %s, want wk,wo,wq,wv", got)
	}
	if len(m.Graph.Inputs()) != 2 || m.Graph.Inputs()[0].Name != "x" || m.Graph.Inputs()[1].Name != "mask" {
		t.Errorf("inputs %v", m.Graph.Inputs())
	}
	// The shape sub-graph (Shape → Reshape) left no Shape-derived nodes.
	for _, n := range m.Graph.Nodes {
		if n.Op.String() == "Gather" {
			t.Errorf("shape arithmetic was not folded: %v", n)
		}
	}
	// With a larger constant limit the weights fold into constants.
	m2, err := Load(filepath.Join("testdata", "cases", "attention_block", "model.onnx"), WithConstantLimit(1000))
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if len(m2.Graph.Params()) != 0 {
		t.Errorf("params %v with WithConstantLimit(1000)", m2.Graph.Params())
	}
}
