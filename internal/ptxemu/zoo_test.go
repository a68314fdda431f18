package ptxemu

import (
	"os"
	"path/filepath"
	"testing"
)

// TestZooLowered lowers every model of the zoo (onnx/testdata/
// export_zoo.py, in the directory KILN_ZOO names, as onnx's TestZoo
// reads it) to CUDA kernels and runs them on the emulator against the CPU
// run of the same compiled graph, which TestZoo checks against PyTorch.
// The torchvision classifiers take 10-30 s of CPU each here (the
// emulator interprets every thread in Go), the others about a second.
func TestZooLowered(t *testing.T) {
	dir := os.Getenv("KILN_ZOO")
	if dir == "" {
		t.Skip("KILN_ZOO is not set: see onnx/zoo_test.go")
	}
	for _, name := range []string{"mobilenet_v2", "squeezenet1_1", "shufflenet_v2", "densenet121", "segment", "unet", "lstm", "gru", "gpt", "yolo", "dcgan"} {
		t.Run(name, func(t *testing.T) {
			compareONNXDir(t, "zoo "+name, filepath.Join(dir, name), 1e-4)
		})
	}
}
