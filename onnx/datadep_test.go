package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestUniqueConstantInput runs ONNX's own Unique cases (copied from the
// node suite into testdata/special/unique) with X bound at import, so
// Unique is computed there, and checks all four outputs against the
// suite's expected values; with X left a run-time input the import
// reports why it cannot.
func TestUniqueConstantInput(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "special", "unique", "test_unique_*"))
	if len(dirs) != 5 {
		t.Fatalf("%d Unique cases, want the suite's 5", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			set := filepath.Join(dir, "test_data_set_0")
			ins, err := readPBs(set, "input")
			if err != nil {
				t.Fatal(err)
			}
			want, err := readPBs(set, "output")
			if err != nil {
				t.Fatal(err)
			}
			model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(model)
			if err == nil || !strings.Contains(err.Error(), "Unique's output length depends on its values") {
				t.Errorf("run-time X: %v, want the data-dependent shape error", err)
			}
			m, err := Parse(model, WithInputValue("X", ins[0]))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, o := range m.Graph.Outputs() {
				if o.Op != graph.OpConstant {
					t.Errorf("output %v is not folded", o)
				}
			}
			cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
			if err != nil {
				t.Fatal(err)
			}
			defer cg.Close()
			outs, err := cg.RunTyped()
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != len(want) {
				t.Fatalf("%d outputs, want %d", len(outs), len(want))
			}
			for i, o := range outs {
				if err := conformClose(tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: o.Data}, want[i]); err != nil {
					t.Errorf("output %d: %v", i, err)
				}
			}
		})
	}
}
