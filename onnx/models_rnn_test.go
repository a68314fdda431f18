package onnx

import (
	"path/filepath"
	"testing"
)

// TestExportedRNNs runs the LSTM and GRU sequence classifiers
// testdata/export_rnn.py exported from PyTorch (two bidirectional layers,
// batch_first) against PyTorch's float64 outputs (rounded to float32). The tolerance, 1e-6 of
// |want| + rms(want), allows float32 rounding over seven steps of two
// layers: kiln's error measured at most 1.5e-7 of that scale (x86-64,
// AVX-512), while a wrong gate, bias or direction is off by more than
// 1e-2.
func TestExportedRNNs(t *testing.T) {
	for _, name := range []string{"lstm", "gru"} {
		t.Run(name, func(t *testing.T) { checkAgainstTorch(t, filepath.Join("testdata", "models", name), 1e-6) })
	}
}
