package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goodModel is a valid two-node model built in Go.
func goodModel() *ModelProto {
	return model(13, &GraphProto{
		Nodes: []*NodeProto{
			{Name: "a", OpType: "Add", Inputs: []string{"x", "w"}, Outputs: []string{"h"}},
			{Name: "r", OpType: "Relu", Inputs: []string{"h"}, Outputs: []string{"y"}},
		},
		Initializers: []*TensorProto{f32Init("w", []int64{3}, 1, -2, 3)},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 2, 3)},
		Outputs:      []*ValueInfo{tensorInfo("y", typeFloat, 2, 3)},
	})
}

func TestGoodModelImports(t *testing.T) {
	m, err := Parse(encModel(goodModel()))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Graph.Params()) != 1 || m.Graph.Params()[0].Name != "w" {
		t.Errorf("params %v", m.Graph.Params())
	}
}

func TestBadModels(t *testing.T) {
	mut := func(f func(m *ModelProto)) []byte {
		m := goodModel()
		f(m)
		return encModel(m)
	}
	npy, _ := os.ReadFile(filepath.Join("..", "npy", "testdata", "f4.npy"))
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":       {nil, "empty"},
		"junk":        {[]byte("hello, this is not a model at all"), "not"},
		"npy":         {npy, ".npy"},
		"zip":         {[]byte("PK\x03\x04rest of a torch checkpoint"), "zip"},
		"safetensors": {append([]byte{2, 0, 0, 0, 0, 0, 0, 0}, "{}"...), "safetensors"},
		"no graph":    {encModel(&ModelProto{IRVersion: 8, Opsets: []OpsetID{{Version: 13}}}), "no graph"},
		"no opset":    {mut(func(m *ModelProto) { m.Opsets = nil }), "no ai.onnx opset"},
		"opset 10":    {mut(func(m *ModelProto) { m.Opsets[0].Version = 10 }), "opset 10 is not supported"},
		"opset 99":    {mut(func(m *ModelProto) { m.Opsets[0].Version = 99 }), "opset 99 is not supported"},
		"raw size": {mut(func(m *ModelProto) {
			m.Graph.Initializers[0] = &TensorProto{Name: "w", Dims: []int64{3}, DataType: typeFloat, RawData: make([]byte, 8), HasRaw: true}
		}), "needs 12 bytes, raw_data has 8"},
		"typed count": {mut(func(m *ModelProto) { m.Graph.Initializers[0].FloatData = []float32{1, 2} }), "declares 3 elements, float_data holds 2"},
		"no data":     {mut(func(m *ModelProto) { m.Graph.Initializers[0].FloatData = nil }), "no data"},
		"absurd dims": {mut(func(m *ModelProto) {
			m.Graph.Initializers[0] = &TensorProto{Name: "w", Dims: []int64{1 << 40, 1 << 40}, DataType: typeFloat, RawData: make([]byte, 4), HasRaw: true}
		}), "more than"},
		"huge dims little data": {mut(func(m *ModelProto) {
			m.Graph.Initializers[0] = &TensorProto{Name: "w", Dims: []int64{1 << 40}, DataType: typeFloat, RawData: make([]byte, 4), HasRaw: true}
		}), "raw_data has 4"},
		"negative dim": {mut(func(m *ModelProto) { m.Graph.Initializers[0].Dims = []int64{-3} }), "invalid dim"},
		"string type":  {mut(func(m *ModelProto) { m.Graph.Initializers[0].DataType = typeString }), "STRING"},
		"absurd input": {mut(func(m *ModelProto) { m.Graph.Inputs[0] = tensorInfo("x", typeFloat, 1<<40, 1<<40) }), "more than"},
		"unknown input dim": {mut(func(m *ModelProto) {
			m.Graph.Inputs[0].Dims[0] = Dim{}
		}), "needs dim 0"},
		"cycle": {mut(func(m *ModelProto) {
			m.Graph.Nodes[0].Inputs[0] = "y"
		}), "cycle"},
		"undefined value": {mut(func(m *ModelProto) { m.Graph.Nodes[1].Inputs[0] = "nope" }), `reads "nope"`},
		"defined twice":   {mut(func(m *ModelProto) { m.Graph.Nodes[1].Outputs[0] = "h" }), "defined twice"},
		"output missing":  {mut(func(m *ModelProto) { m.Graph.Outputs[0].Name = "z" }), `output "z" is not produced`},
		"output shape":    {mut(func(m *ModelProto) { m.Graph.Outputs[0] = tensorInfo("y", typeFloat, 3, 2) }), "declares shape"},
		"output type":     {mut(func(m *ModelProto) { m.Graph.Outputs[0].ElemType = typeInt64 }), "declares INT64"},
		"no outputs":      {mut(func(m *ModelProto) { m.Graph.Outputs = nil }), "no outputs"},
		"shape mismatch": {mut(func(m *ModelProto) {
			m.Graph.Initializers[0] = f32Init("w", []int64{4}, 1, 2, 3, 4)
		}), `node "a"`},
		"attr type": {mut(func(m *ModelProto) {
			m.Graph.Nodes[1] = &NodeProto{Name: "r", OpType: "LeakyRelu", Inputs: []string{"h"}, Outputs: []string{"y"},
				Attrs: []*Attribute{{Name: "alpha", Type: AttrInt, I: 2}}}
		}), "has type INT, want FLOAT"},
		"mean no broadcast": {mut(func(m *ModelProto) { // panicked: Mean's divide read an invalid node's dtype
			m.Graph.Initializers[0] = f32Init("w", []int64{4}, 1, 2, 3, 4)
			m.Graph.Nodes[0].OpType = "Mean"
		}), "broadcast"},
		"conv rank 1": {mut(func(m *ModelProto) { // panicked slicing the weights' spatial dims
			m.Graph.Nodes[0] = &NodeProto{Name: "a", OpType: "Conv", Inputs: []string{"w", "w"}, Outputs: []string{"h"}}
		}), "[N, C, spatial...]"},
		"conv group 0": {mut(func(m *ModelProto) {
			m.Graph.Inputs[0] = tensorInfo("x", typeFloat, 1, 1, 2, 3)
			m.Graph.Initializers[0] = f32Init("w", []int64{1, 1, 1, 1}, 2)
			m.Graph.Nodes[0] = &NodeProto{Name: "a", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"h"},
				Attrs: []*Attribute{{Name: "group", Type: AttrInt, I: 0}}}
			m.Graph.Outputs[0] = tensorInfo("y", typeFloat, 1, 1, 2, 3)
		}), "group 0"},
		"input shape vs initializer": {mut(func(m *ModelProto) { // the declared shape was ignored
			m.Graph.Inputs = append(m.Graph.Inputs, tensorInfo("w", typeFloat, 4))
		}), `graph input "w" is declared with shape [4] but its initializer has [3]`},
		"input type vs initializer": {mut(func(m *ModelProto) {
			m.Graph.Inputs = append(m.Graph.Inputs, tensorInfo("w", typeInt64, 3))
		}), `graph input "w" is declared i64 but its initializer is f32`},
		"dup initializer": {mut(func(m *ModelProto) {
			m.Graph.Initializers = append(m.Graph.Initializers, m.Graph.Initializers[0])
		}), "defined twice"},
	}
	for name, c := range cases {
		_, err := Parse(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, c.want)
		}
	}
}

// TestRunTimeShapeIsUnsupported: a Reshape whose target comes from data
// (not from shapes) cannot be made static; it is reported, not a crash.
func TestRunTimeShapeIsUnsupported(t *testing.T) {
	m := model(13, &GraphProto{
		Nodes:   []*NodeProto{{Name: "rs", OpType: "Reshape", Inputs: []string{"x", "s"}, Outputs: []string{"y"}}},
		Inputs:  []*ValueInfo{tensorInfo("x", typeFloat, 2, 3), tensorInfo("s", typeInt64, 2)},
		Outputs: []*ValueInfo{{Name: "y", IsTensor: true, ElemType: typeFloat}},
	})
	_, err := Parse(encModel(m))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Ops) != 1 || !strings.Contains(ue.Ops[0].Reason, "run time") {
		t.Fatalf("got %v", err)
	}
}

// TestTruncatedAndCorrupted: every prefix and many byte flips of a real
// model fail cleanly or import; none panics.
func TestTruncatedAndCorrupted(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "cases", "attention_block", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if _, err := Parse(b[:n]); err == nil && n < len(b)/2 {
			t.Errorf("a %d-byte prefix imported", n)
		}
	}
	c := append([]byte(nil), b...)
	for i := range c {
		for _, x := range []byte{0xff, 0x80, 0x01} {
			c[i] ^= x
			if m, err := Parse(c); err == nil {
				m.Close()
			}
			c[i] ^= x
		}
	}
}

func TestDecodeTensorTypedFields(t *testing.T) {
	for _, c := range []struct {
		tp   *TensorProto
		want []float64
	}{
		{&TensorProto{DataType: typeFloat16, Dims: []int64{2}, Int32Data: []int32{0x3c00, 0xc000}}, []float64{1, -2}},
		{&TensorProto{DataType: typeBFloat16, Dims: []int64{1}, Int32Data: []int32{0x3fc0}}, []float64{1.5}},
		{&TensorProto{DataType: typeInt8, Dims: []int64{2}, Int32Data: []int32{-5, 7}}, []float64{-5, 7}},
		{&TensorProto{DataType: typeUint8, Dims: []int64{1}, Int32Data: []int32{250}}, []float64{250}},
		{&TensorProto{DataType: typeBool, Dims: []int64{3}, Int32Data: []int32{0, 1, 5}}, []float64{0, 1, 1}},
		{&TensorProto{DataType: typeInt64, Dims: []int64{2}, Int64Data: []int64{-1 << 40, 3}}, []float64{-1 << 40, 3}},
		{&TensorProto{DataType: typeDouble, Dims: []int64{1}, DoubleData: []float64{0.1}}, []float64{0.1}},
		{&TensorProto{DataType: typeBool, Dims: []int64{2}, RawData: []byte{0, 9}, HasRaw: true}, []float64{0, 1}},
		{&TensorProto{DataType: typeFloat, Dims: []int64{0, 3}}, []float64{}},
	} {
		tp, err := DecodeTensor(encTensor(c.tp))
		if err != nil {
			t.Fatal(err)
		}
		v, err := tp.Tensor()
		if err != nil {
			t.Fatalf("%v: %v", TypeName(c.tp.DataType), err)
		}
		got := v.Clone().Float64s()
		if len(got) != len(c.want) {
			t.Fatalf("%v: got %v, want %v", TypeName(c.tp.DataType), got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: got %v, want %v", TypeName(c.tp.DataType), got, c.want)
			}
		}
	}
	ext := &TensorProto{Name: "e", DataType: typeFloat, Dims: []int64{1}, IsExternal: true, External: []StringPair{{"location", "x.bin"}}}
	if _, err := ext.Tensor(); err == nil || !strings.Contains(err.Error(), "external") {
		t.Errorf("external tensor without a directory: %v", err)
	}
	for _, junk := range [][]byte{{0x0a}, {0x0a, 0x05, 1}, {0xff, 0xff, 0xff}, {0x25, 1, 2}} {
		if _, err := DecodeTensor(junk); err == nil {
			t.Errorf("DecodeTensor(%x) accepted junk", junk)
		}
	}
}
