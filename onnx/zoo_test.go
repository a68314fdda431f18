package onnx

import (
	"os"
	"path/filepath"
	"testing"
)

// zooModels are the models testdata/export_zoo.py exports, with the
// tolerance of each against PyTorch's float64 run (closeToTorch's rel):
// float32 sums in another order drift further through deeper stacks of
// convolutions and through recurrences.
var zooModels = []struct {
	name string
	rel  float64
}{
	{"mobilenet_v2", 1e-4},
	{"squeezenet1_1", 1e-4},
	{"shufflenet_v2", 1e-4},
	{"densenet121", 1e-4},
	{"segment", 1e-4},
	{"unet", 1e-4},
	{"lstm", 1e-4},
	{"gru", 1e-4},
	{"gpt", 1e-4},
	{"yolo", 1e-4},
	{"dcgan", 1e-4},
}

// TestZoo runs the model zoo (torchvision and torch.nn models with random
// weights, testdata/export_zoo.py) against PyTorch's float64 outputs. The
// files are generated, not committed (~60 MB): KILN_ZOO names the
// directory export_zoo.py wrote; .ci/run generates it and sets it, and
// with it set every model of the zoo must be there and pass.
func TestZoo(t *testing.T) {
	dir := os.Getenv("KILN_ZOO")
	if dir == "" {
		t.Skip("KILN_ZOO is not set: generate the zoo with testdata/export_zoo.py DIR and set KILN_ZOO=DIR")
	}
	for _, z := range zooModels {
		t.Run(z.name, func(t *testing.T) {
			checkAgainstTorch(t, filepath.Join(dir, z.name), z.rel)
		})
	}
}
