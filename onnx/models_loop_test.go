package onnx

import (
	"path/filepath"
	"testing"

	"github.com/kilnml/kiln/graph"
)

// TestExportedLoops runs the models testdata/export_loops.py exported from
// torch.jit.script functions, whose ONNX Loops have a trip count (loop_for:
// the number of positive elements of x's first row) or a condition
// (loop_while: while sum|x| > 1) computed at run time, against PyTorch's
// float64 outputs. Each must import as a run-time loop (one OpLoop), not
// unrolled. The tolerance, 1e-6 of |want| + rms(want), allows float32
// rounding over a few tanh(x·W + i) steps; a missed or extra iteration
// is off by more than 1e-2.
func TestExportedLoops(t *testing.T) {
	for _, name := range []string{"loop_for", "loop_while"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "models", name)
			m, err := Load(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if n := countOps(m.Graph, graph.OpLoop); n != 1 {
				t.Errorf("%d Loop nodes, want 1 (a run-time loop)", n)
			}
			checkAgainstTorch(t, dir, 1e-6)
		})
	}
}
