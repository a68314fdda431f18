package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/tensor"
)

// TestWithInputValue: ONNX's Tile case passes the repeats as a run-time
// input, which kiln cannot import; frozen with WithInputValue it imports
// with one input left and tiles as numpy does.
func TestWithInputValue(t *testing.T) {
	path := filepath.Join("testdata", "node", "test_tile_precomputed", "model.onnx")
	_, err := Load(path)
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("without a frozen input: %v, want an *UnsupportedError", err)
	}
	reps, _ := tensor.FromI64(tensor.Shape{2}, []int64{2, 2})
	m, err := Load(path, WithInputValue("y", reps))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if in := m.Graph.Inputs(); len(in) != 1 || in[0].Name != "x" {
		t.Fatalf("inputs %v, want only x", in)
	}
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	outs, err := cg.Run(kiln.In("x", []float32{0, 1, 2, 3}))
	if err != nil {
		t.Fatal(err)
	}
	// np.tile([[0, 1], [2, 3]], (2, 2)), written out.
	want := []float32{0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}
	if !slicesEqual(outs[0], want) {
		t.Errorf("got %v, want %v", outs[0], want)
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWithInputValueErrors(t *testing.T) {
	path := filepath.Join("testdata", "node", "test_tile_precomputed", "model.onnx")
	i64, _ := tensor.FromI64(tensor.Shape{2}, []int64{2, 2})
	i32, _ := tensor.FromI32(tensor.Shape{2}, []int32{2, 2})
	long, _ := tensor.FromI64(tensor.Shape{3}, []int64{2, 2, 2})
	short := tensor.Tensor{DType: tensor.I64, Shape: tensor.Shape{2}, Data: make([]byte, 8)}
	for _, c := range []struct {
		name, input string
		value       tensor.Tensor
		want        string
	}{
		{"unknown input", "z", i64, "no such input"},
		{"wrong dtype", "y", i32, "the input is INT64"},
		{"wrong shape", "y", long, "declared"},
		{"short data", "y", short, "needs 16 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Load(path, WithInputValue(c.input, c.value))
			if err == nil {
				m.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// TestConformanceDetectsMismatch: the runner fails a case whose expected
// output is off by more than the tolerance, and says which side is wrong.
func TestConformanceDetectsMismatch(t *testing.T) {
	dir := filepath.Join("testdata", "node", "test_abs")
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "test_data_set_0")
	ins, err := readPBs(set, "input")
	if err != nil {
		t.Fatal(err)
	}
	want, err := readPBs(set, "output")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSet(dir, model, ins, want, false); err != nil {
		t.Fatalf("unchanged case: %v", err)
	}
	w := want[0].F32()
	w[3] += 1e-2 * (1 + w[3])
	err = checkSet(dir, model, ins, want, false)
	if err == nil || !strings.Contains(err.Error(), "element 3") || !strings.Contains(err.Error(), "interpreter differs too") {
		t.Errorf("perturbed expectation: %v", err)
	}
}

// TestLiftOpset: an opset-7 Sin model is lifted to 11 (Sin is unchanged
// from 7 to 11); a model using an op that changed in between is not.
func TestLiftOpset(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "node", "test_sin_example", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	mp, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := defaultOpset(mp); err == nil {
		t.Fatal("the case is no longer below opset 11; pick another")
	}
	lifted, ok := liftOpset(b, mp)
	if !ok {
		t.Fatal("Sin at opset 7 was not lifted")
	}
	lp, err := Decode(lifted)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := defaultOpset(lp); err != nil || v != MinOpset {
		t.Errorf("lifted opset %d, %v", v, err)
	}
	mp.Graph.Nodes[0].OpType = "Softmax" // Softmax changed at 11 and 13
	if _, ok := liftOpset(b, mp); ok {
		t.Error("lifted a model whose op changed since its opset")
	}
}
