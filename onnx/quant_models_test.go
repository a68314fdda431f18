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
			fused := runQuantModel(t, dir, kiln.Options{}, "DynQuantMatMul", 1e-5, 5e-2)
			unfused := runQuantModel(t, dir, kiln.Options{Fuse: &fuse.Options{Disabled: map[string]bool{"dynamic_quant": true}}}, "", 1e-5, 5e-2)
			for i := range fused {
				if err := closeToTorch(fused[i], unfused[i], 1e-6); err != nil {
					t.Errorf("output %d, with and without the dynamic_quant pass: %v", i, err)
				}
			}
		})
	}
}

// runQuantModel runs dir's model with opts and checks its outputs against
// ONNX Runtime's (out_*.npy, relative error ort) and the float model's
// (float_*.npy, relative error float), and that it ran some fused op on
// the int8 GEMM (none: not checked).
func runQuantModel(t *testing.T, dir string, opts kiln.Options, fused string, ort, float float64) []tensor.Tensor {
	cg, outs := runModelDir(t, dir, opts)
	if fused != "" {
		products := 0
		for v, c := range cg.Stats().Variants {
			if strings.HasPrefix(v, fused+"/int8-") {
				products += c
			}
		}
		if products == 0 {
			t.Errorf("no %s on the int8 GEMM: %v", fused, cg.Stats().Variants)
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
			{"out_", ort},     // ONNX Runtime, same quantized file
			{"float_", float}, // PyTorch's float model: the int8 quantization's error
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

// TestStaticQuantizedModels runs the test MLP, BERT and CNN in ONNX
// Runtime's static QDQ form (testdata/quantize_static.py: QuantizeLinear
// and DequantizeLinear pairs on the products' activations, uint8 per
// tensor, calibrated on random inputs; int8 weights per output channel;
// int32 biases) against ONNX Runtime's outputs on the same files and the
// float model's. The fused graph runs every product as QDQMatMul or
// QDQConv on the int8 GEMM; the graph compiled without the qdq pass
// (QuantizeLinear, DequantizeLinear and float products) must agree with
// it to float32 rounding of the dequantized operands.
func TestStaticQuantizedModels(t *testing.T) {
	for _, c := range []struct {
		name, fused string
		float       float64 // measured 0.017, 0.081 (the pooler's tanh of a quantized [CLS]), 0.0075
	}{
		{"mlp_qdq", "QDQMatMul", 5e-2},
		{"bert_qdq", "QDQMatMul", 1e-1},
		{"cnn_qdq", "QDQConv", 5e-2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "models", c.name)
			// ONNX Runtime on the same file: float32 rounding only (measured
			// 3.6e-7 at worst, fused or not).
			fused := runQuantModel(t, dir, kiln.Options{}, c.fused, 1e-5, c.float)
			unfused := runQuantModel(t, dir, kiln.Options{Fuse: &fuse.Options{Disabled: map[string]bool{"qdq": true}}}, "", 1e-5, c.float)
			for i := range fused {
				if err := closeToTorch(fused[i], unfused[i], 1e-5); err != nil {
					t.Errorf("output %d, with and without the qdq pass: %v", i, err)
				}
			}
		})
	}
}
