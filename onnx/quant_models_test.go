package onnx

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/tensor"
)

// TestDynamicQuantizedModels runs the test MLP and BERT quantized as ONNX
// Runtime's quantize_dynamic writes them (testdata/quantize_dynamic.py:
// DynamicQuantizeLinear, MatMulInteger, Cast and Mul per product, int8
// weights) against ONNX Runtime's outputs on the same files, and against
// the float model's PyTorch outputs within the quantization's error. The
// fused graph must run its products as DynQuantMatMul on the int8 GEMM and
// agree with the graph compiled without that pass (MatMulInteger on the
// int8 GEMM, then the dequantization's ops) to float32 rounding: their
// products have the same bits (ops' TestDynQuantMatMul), but the ops after
// them fuse differently (a pooler's Tanh runs in a FusedElementwise).
func TestDynamicQuantizedModels(t *testing.T) {
	for _, name := range []string{"mlp_dynq", "bert_dynq"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "models", name)
			fused := runQuantModel(t, dir, kiln.Options{})
			unfused := runQuantModel(t, dir, kiln.Options{Fuse: &fuse.Options{Disabled: map[string]bool{"dynamic_quant": true}}})
			for i := range fused {
				if err := closeToTorch(fused[i], unfused[i], 1e-6); err != nil {
					t.Errorf("output %d, with and without the dynamic_quant pass: %v", i, err)
				}
			}
		})
	}
}

// runQuantModel runs dir's model with opts and checks its outputs against
// ONNX Runtime's (out_*.npy) and the float model's (float_*.npy).
func runQuantModel(t *testing.T, dir string, opts kiln.Options) []tensor.Tensor {
	cg, outs := runModelDir(t, dir, opts)
	if opts.Fuse == nil || !opts.Fuse.Disabled["dynamic_quant"] {
		products := 0
		for v, c := range cg.Stats().Variants {
			if strings.HasPrefix(v, "DynQuantMatMul/int8-") {
				products += c
			}
		}
		if products == 0 {
			t.Errorf("no DynQuantMatMul on the int8 GEMM: %v", cg.Stats().Variants)
		}
	}
	var got []tensor.Tensor
	for i, info := range cg.Outputs() {
		g := tensor.Tensor{DType: outs[i].DType, Shape: outs[i].Shape, Data: outs[i].Data}
		got = append(got, g)
		for _, ref := range []struct {
			file string
			rel  float64
		}{
			{"out_", 1e-5},   // ONNX Runtime, same quantized file: float32 rounding only
			{"float_", 5e-2}, // PyTorch's float model: the int8 quantization's error
		} {
			want, err := npy.ReadFile(filepath.Join(dir, ref.file+info.Name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if err := closeToTorch(g, want, ref.rel); err != nil {
				t.Errorf("output %q against %s*.npy: %v", info.Name, ref.file, err)
			}
		}
	}
	return got
}
