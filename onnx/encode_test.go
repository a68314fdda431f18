package onnx

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A test-only protobuf encoder for the decoded types, so tests can build
// models (bad ones included) without Python.

func appendStr(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMsg(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendVarint(b []byte, num protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func encModel(m *ModelProto) []byte {
	var b []byte
	b = appendVarint(b, 1, m.IRVersion)
	if m.ProducerName != "" {
		b = appendStr(b, 2, m.ProducerName)
	}
	for _, o := range m.Opsets {
		var ob []byte
		if o.Domain != "" {
			ob = appendStr(ob, 1, o.Domain)
		}
		ob = appendVarint(ob, 2, o.Version)
		b = appendMsg(b, 8, ob)
	}
	if m.Graph != nil {
		b = appendMsg(b, 7, encGraph(m.Graph))
	}
	return b
}

func encGraph(g *GraphProto) []byte {
	var b []byte
	for _, n := range g.Nodes {
		b = appendMsg(b, 1, encNode(n))
	}
	b = appendStr(b, 2, g.Name)
	for _, t := range g.Initializers {
		b = appendMsg(b, 5, encTensor(t))
	}
	for _, v := range g.Inputs {
		b = appendMsg(b, 11, encValueInfo(v))
	}
	for _, v := range g.Outputs {
		b = appendMsg(b, 12, encValueInfo(v))
	}
	return b
}

func encNode(n *NodeProto) []byte {
	var b []byte
	for _, s := range n.Inputs {
		b = appendStr(b, 1, s)
	}
	for _, s := range n.Outputs {
		b = appendStr(b, 2, s)
	}
	b = appendStr(b, 3, n.Name)
	b = appendStr(b, 4, n.OpType)
	for _, a := range n.Attrs {
		b = appendMsg(b, 5, encAttr(a))
	}
	if n.Domain != "" {
		b = appendStr(b, 7, n.Domain)
	}
	return b
}

func encAttr(a *Attribute) []byte {
	var b []byte
	b = appendStr(b, 1, a.Name)
	b = appendVarint(b, 20, int64(a.Type))
	switch a.Type {
	case AttrFloat:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.F))
	case AttrInt:
		b = appendVarint(b, 3, a.I)
	case AttrString:
		b = appendMsg(b, 4, a.S)
	case AttrTensor:
		b = appendMsg(b, 5, encTensor(a.T))
	case AttrFloats:
		var p []byte
		for _, f := range a.Floats {
			p = protowire.AppendFixed32(p, math.Float32bits(f))
		}
		b = appendMsg(b, 7, p)
	case AttrStrings:
		for _, s := range a.Strings {
			b = appendMsg(b, 9, s)
		}
	case AttrInts:
		var p []byte
		for _, v := range a.Ints {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = appendMsg(b, 8, p)
	case AttrGraph:
		b = appendMsg(b, 6, encGraph(a.G))
	case AttrGraphs:
		for _, g := range a.Graphs {
			b = appendMsg(b, 11, encGraph(g))
		}
	}
	return b
}

func encTensor(t *TensorProto) []byte {
	var b []byte
	for _, d := range t.Dims {
		b = appendVarint(b, 1, d)
	}
	b = appendVarint(b, 2, int64(t.DataType))
	if len(t.FloatData) > 0 {
		var p []byte
		for _, f := range t.FloatData {
			p = protowire.AppendFixed32(p, math.Float32bits(f))
		}
		b = appendMsg(b, 4, p)
	}
	if len(t.Int64Data) > 0 {
		var p []byte
		for _, v := range t.Int64Data {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = appendMsg(b, 7, p)
	}
	if len(t.Int32Data) > 0 {
		var p []byte
		for _, v := range t.Int32Data {
			p = protowire.AppendVarint(p, uint64(int64(v)))
		}
		b = appendMsg(b, 5, p)
	}
	if len(t.DoubleData) > 0 {
		var p []byte
		for _, f := range t.DoubleData {
			p = protowire.AppendFixed64(p, math.Float64bits(f))
		}
		b = appendMsg(b, 10, p)
	}
	b = appendStr(b, 8, t.Name)
	if t.HasRaw {
		b = appendMsg(b, 9, t.RawData)
	}
	for _, kv := range t.External {
		var e []byte
		e = appendStr(e, 1, kv.Key)
		e = appendStr(e, 2, kv.Value)
		b = appendMsg(b, 13, e)
	}
	if t.IsExternal {
		b = appendVarint(b, 14, 1)
	}
	return b
}

func encValueInfo(v *ValueInfo) []byte {
	var tt []byte
	tt = appendVarint(tt, 1, int64(v.ElemType))
	if v.HasShape {
		var sh []byte
		for _, d := range v.Dims {
			var db []byte
			if d.HasValue {
				db = appendVarint(db, 1, d.Value)
			} else if d.Param != "" {
				db = appendStr(db, 2, d.Param)
			}
			sh = appendMsg(sh, 1, db)
		}
		tt = appendMsg(tt, 2, sh)
	}
	var b []byte
	b = appendStr(b, 1, v.Name)
	return appendMsg(b, 2, appendMsg(nil, 1, tt))
}

// Builders for test models.

func tensorInfo(name string, elem int32, dims ...int64) *ValueInfo {
	v := &ValueInfo{Name: name, IsTensor: true, ElemType: elem, HasShape: true}
	for _, d := range dims {
		v.Dims = append(v.Dims, Dim{Value: d, HasValue: true})
	}
	return v
}

func f32Init(name string, dims []int64, vals ...float32) *TensorProto {
	return &TensorProto{Name: name, Dims: dims, DataType: typeFloat, FloatData: vals}
}

func intsAttr(name string, v ...int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: v}
}

func intAttr(name string, v int64) *Attribute { return &Attribute{Name: name, Type: AttrInt, I: v} }

func graphAttr(name string, g *GraphProto) *Attribute {
	return &Attribute{Name: name, Type: AttrGraph, G: g}
}

// model wraps a graph in a ModelProto at the given opset.
func model(opset int64, g *GraphProto) *ModelProto {
	return &ModelProto{IRVersion: 8, Opsets: []OpsetID{{Version: opset}}, Graph: g}
}
