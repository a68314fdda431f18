package onnx

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// TestMutatedModels: structured mutations the byte-level fuzzer rarely
// reaches. Every attribute and every small integer initializer (shapes,
// axes, pads) of every case model is set to hostile values; each variant
// must import or fail with an error, and one that imports must run in the
// reference interpreter without panicking.
func TestMutatedModels(t *testing.T) {
	ints := []int64{-1 << 40, -7, -1, 0, 1, 3, 1 << 40, math.MaxInt64, math.MinInt64}
	floats := []float32{float32(math.NaN()), float32(math.Inf(1)), -1e30, 0, -1}
	imported := 0
	try := func(mp *ModelProto) {
		t.Helper()
		m, err := Parse(encModel(mp))
		if err != nil {
			return
		}
		imported++
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
		ops.Interpret(m.Graph, feeds)
	}
	dirs, _ := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	variants := 0
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		mp, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := Parse(encModel(mp)); err != nil { // the encoder is faithful
			t.Fatalf("%s re-encoded: %v", dir, err)
		} else {
			m.Close()
		}
		for _, n := range mp.Graph.Nodes {
			for _, a := range n.Attrs {
				saved := *a
				for _, v := range ints {
					switch a.Type {
					case AttrInt:
						a.I = v
					case AttrInts:
						a.Ints = []int64{v, v}
					default:
						continue
					}
					try(mp)
					variants++
				}
				if a.Type == AttrTensor && a.T != nil && a.T.DataType == typeInt64 && a.T.HasRaw && len(a.T.RawData) >= 8 {
					saved := a.T.RawData
					for _, v := range ints {
						for at := 0; at+8 <= len(saved); at += 8 {
							raw := append([]byte(nil), saved...)
							binary.LittleEndian.PutUint64(raw[at:], uint64(v))
							a.T.RawData = raw
							try(mp)
							variants++
						}
					}
					a.T.RawData = saved
				}
				for _, f := range floats {
					if a.Type != AttrFloat {
						break
					}
					a.F = f
					try(mp)
					variants++
				}
				*a = saved
			}
		}
		for _, init := range mp.Graph.Initializers {
			if init.DataType != typeInt64 || !init.HasRaw || len(init.RawData) > 64 {
				continue
			}
			saved := init.RawData
			for _, v := range ints {
				raw := append([]byte(nil), saved...)
				binary.LittleEndian.PutUint64(raw[len(raw)-8:], uint64(v))
				init.RawData = raw
				try(mp)
				variants++
			}
			init.RawData = saved
		}
	}
	t.Logf("%d variants, %d imported", variants, imported)
	if variants < 500 {
		t.Errorf("only %d variants tried", variants)
	}
}
