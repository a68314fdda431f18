package onnx

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoExecutorDeps checks that parsing a model and reading weights
// (onnx, safetensors) does not link kiln's root package, the compiler's
// passes or the executor: SetParams takes a small interface instead.
// (onnx does reach the kernels, through the reference interpreter that
// folds constants.)
func TestNoExecutorDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/kilnml/kiln/onnx", "github.com/kilnml/kiln/safetensors").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "github.com/kilnml/kiln", "github.com/kilnml/kiln/exec", "github.com/kilnml/kiln/plan", "github.com/kilnml/kiln/fuse":
			t.Errorf("onnx or safetensors depends on %s", dep)
		}
	}
}
