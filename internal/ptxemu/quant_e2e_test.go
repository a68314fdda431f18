package ptxemu

import (
	"github.com/kilnml/kiln/fuse"
	"path/filepath"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/onnx"
)

// TestONNXDynQuantEndToEnd lowers the dynamically quantized MLP and BERT
// (onnx/testdata/models/{mlp,bert}_dynq: ONNX Runtime's
// DynamicQuantizeLinear + MatMulInteger pattern, which kiln fuses into
// DynQuantMatMul) entirely to CUDA kernels, the int32 GEMM included, and
// runs them on the emulator against the CPU run of the same compiled
// graph (whose DynQuantMatMul the lowering reproduces bit for bit).
func TestONNXDynQuantEndToEnd(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]int{"mlp_dynq": 3, "bert_dynq": 13} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "onnx", "testdata", "models", name)
			if got := dynQuantNodes(t, filepath.Join(dir, "model.onnx")); got != want {
				t.Fatalf("the compiled %s has %d DynQuantMatMul nodes, want %d: the test would not run the int32 GEMM", name, got, want)
			}
			compareONNXDir(t, "onnx "+name, dir, 1e-4)
		})
	}
}

// TestONNXStaticQuantEndToEnd runs the statically quantized (QDQ) test
// models lowered to CUDA on the emulator against the CPU run of the same
// graph, fused as a CUDA session fuses it: without the CPU-only qdq pass,
// so Quantize/DequantizeLinear run around the float products.
func TestONNXStaticQuantEndToEnd(t *testing.T) {
	t.Parallel()
	fo := fuse.FromEnv().ForDevice("cuda")
	for _, name := range []string{"mlp_qdq", "cnn_qdq", "bert_qdq"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "onnx", "testdata", "models", name)
			compareONNXDirFused(t, "onnx "+name, dir, &fo, 1e-4)
		})
	}
}

// dynQuantNodes counts the DynQuantMatMul nodes of a model compiled for
// the CPU, as compareONNXDir compiles it.
func dynQuantNodes(t *testing.T, path string) int {
	t.Helper()
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	n := 0
	for _, v := range cg.Graph().Nodes {
		if v.Op == graph.OpDynQuantMatMul {
			n++
		}
	}
	return n
}
