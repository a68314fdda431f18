package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// FuzzParse: any bytes import or fail with an error; never a panic or an
// allocation beyond the fold budget. Graphs that import and are small are
// also run through the reference interpreter on zero inputs, which checks
// that every mapped node is one the kernels accept.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "cases", "*", "model.onnx"))
	more, _ := filepath.Glob(filepath.Join("testdata", "special", "*.onnx"))
	models, _ := filepath.Glob(filepath.Join("testdata", "models", "*", "model.onnx")) // the committed test models
	for _, p := range append(append(seeds, more...), models...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(encModel(goodModel()))
	f.Add(encModel(constOfShape([]int64{3, 2}, 1)))
	three, yes := int64(3), true
	f.Add(encModel(ifModel(&yes, nil)))
	f.Add(encModel(ifModel(nil, nil)))
	f.Add(encModel(loopModel(&three, nil)))
	for _, c := range []string{"test_if", "test_loop11", "test_scan9_sum"} {
		if b, err := os.ReadFile(filepath.Join("testdata", "node", c, "model.onnx")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		defer m.Close()
		total := 0
		for _, n := range m.Graph.Nodes {
			total += n.Shape.NumElements()
		}
		if total > 1<<16 {
			return
		}
		feeds := map[string]tensor.Tensor{}
		for _, in := range m.Graph.Inputs() {
			feeds[in.Name] = tensor.New(in.DType, in.Shape...)
		}
		for _, p := range m.Graph.Params() {
			w, _ := m.Weight(p.Name)
			feeds[p.Name] = w.Clone()
		}
		ops.Interpret(m.Graph, feeds) // data errors (an index out of range) are fine
	})
}

// FuzzDecodeTensor: a serialized TensorProto decodes or fails cleanly, and
// a decoded one always has data matching its dtype and shape.
func FuzzDecodeTensor(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "cases", "*", "test_data_set_0", "*.pb"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(encTensor(&TensorProto{DataType: typeFloat16, Dims: []int64{2}, Int32Data: []int32{1, 2}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		tp, err := DecodeTensor(b)
		if err != nil {
			return
		}
		v, err := tp.Tensor()
		if err != nil {
			return
		}
		if _, err := tensor.View(v.DType, v.Shape, v.Data); err != nil {
			t.Fatalf("decoded an inconsistent tensor: %v", err)
		}
	})
}
