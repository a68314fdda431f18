package ptxemu

import (
	"os"
	"path/filepath"
	"testing"
)

// TestZooLowered lowers the small models of the zoo (onnx/testdata/
// export_zoo.py, in the directory KILN_ZOO names, as onnx's TestZoo
// reads it) to CUDA kernels and runs them on the emulator against the CPU
// run of the same compiled graph, which TestZoo checks against PyTorch.
// The torchvision classifiers (0.3-2.9 G multiply-adds at 64-224²) are
// left to the CPU: the emulator interprets every thread in Go.
func TestZooLowered(t *testing.T) {
	dir := os.Getenv("KILN_ZOO")
	if dir == "" {
		t.Skip("KILN_ZOO is not set: see onnx/zoo_test.go")
	}
	for _, name := range []string{"segment", "unet", "lstm", "gru", "gpt", "yolo"} {
		t.Run(name, func(t *testing.T) {
			compareONNXDir(t, "zoo "+name, filepath.Join(dir, name), 1e-4)
		})
	}
}
