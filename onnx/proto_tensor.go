package onnx

import (
	"fmt"
)

// TensorProto is a serialized tensor: an initializer, a Constant's value,
// or a test-data .pb file. Its data is in exactly one of RawData, a typed
// field, or an external file.
type TensorProto struct {
	Name       string
	Dims       []int64
	DataType   int32
	RawData    []byte // view into the decoded input
	HasRaw     bool   // raw_data was present (it may be empty)
	FloatData  []float32
	Int32Data  []int32
	Int64Data  []int64
	DoubleData []float64
	Uint64Data []uint64
	HasStrings bool
	External   []StringPair // external_data keys: location, offset, length
	IsExternal bool         // data_location == EXTERNAL
	HasSegment bool
}

// AttrType is AttributeProto.AttributeType.
type AttrType int32

// The attribute types ONNX defines.
const (
	AttrUndefined AttrType = 0
	AttrFloat     AttrType = 1
	AttrInt       AttrType = 2
	AttrString    AttrType = 3
	AttrTensor    AttrType = 4
	AttrGraph     AttrType = 5
	AttrFloats    AttrType = 6
	AttrInts      AttrType = 7
	AttrStrings   AttrType = 8
	AttrTensors   AttrType = 9
	AttrGraphs    AttrType = 10
	AttrSparse    AttrType = 11
	AttrSparses   AttrType = 12
	AttrTypeProto AttrType = 13
	AttrTypes     AttrType = 14
)

var attrTypeNames = map[AttrType]string{
	AttrFloat: "FLOAT", AttrInt: "INT", AttrString: "STRING", AttrTensor: "TENSOR", AttrGraph: "GRAPH",
	AttrFloats: "FLOATS", AttrInts: "INTS", AttrStrings: "STRINGS", AttrTensors: "TENSORS",
	AttrGraphs: "GRAPHS", AttrSparse: "SPARSE_TENSOR", AttrSparses: "SPARSE_TENSORS",
	AttrTypeProto: "TYPE_PROTO", AttrTypes: "TYPE_PROTOS",
}

func (t AttrType) String() string {
	if s, ok := attrTypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("attribute type %d", int32(t))
}

// Attribute is a node attribute. Graph-valued attributes (the bodies of
// If, Loop and Scan) are decoded into G and Graphs.
type Attribute struct {
	Name    string
	Type    AttrType
	RefName string // set inside function bodies; unsupported
	F       float32
	I       int64
	S       []byte
	T       *TensorProto
	Floats  []float32
	Ints    []int64
	Strings [][]byte
	Tensors []*TensorProto
	G       *GraphProto   // a GRAPH attribute
	Graphs  []*GraphProto // a GRAPHS attribute
}

func decodeTensor(b []byte) (*TensorProto, error) {
	t := &TensorProto{}
	err := walk(b, func(fl field) error {
		var err error
		switch fl.num {
		case 1:
			t.Dims, err = appendInt64s(t.Dims, fl)
		case 2:
			var v int64
			v, err = fl.int64()
			t.DataType = int32(v)
		case 3:
			t.HasSegment = true
		case 4:
			t.FloatData, err = appendFloat32s(t.FloatData, fl)
		case 5:
			var v []int64
			if v, err = appendInt64s(nil, fl); err == nil {
				for _, x := range v {
					t.Int32Data = append(t.Int32Data, int32(x))
				}
			}
		case 6:
			t.HasStrings = true
		case 7:
			t.Int64Data, err = appendInt64s(t.Int64Data, fl)
		case 8:
			t.Name, err = fl.str()
		case 9:
			t.RawData, err = fl.bytes()
			t.HasRaw = true
		case 10:
			t.DoubleData, err = appendFloat64s(t.DoubleData, fl)
		case 11:
			var v []int64
			if v, err = appendInt64s(nil, fl); err == nil {
				for _, x := range v {
					t.Uint64Data = append(t.Uint64Data, uint64(x))
				}
			}
		case 13:
			var sub []byte
			if sub, err = fl.bytes(); err == nil {
				var p StringPair
				p, err = decodePair(sub)
				t.External = append(t.External, p)
			}
		case 14:
			var v int64
			v, err = fl.int64()
			t.IsExternal = v == 1
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	return t, nil
}

// maxGraphDepth bounds the nesting of subgraphs (a Loop in an If in a
// Loop...), so a crafted file cannot recurse the decoder without limit.
const maxGraphDepth = 16

func decodeAttribute(b []byte, depth int) (*Attribute, error) {
	a := &Attribute{}
	err := walk(b, func(fl field) error {
		var err error
		switch fl.num {
		case 1:
			a.Name, err = fl.str()
		case 20:
			var v int64
			v, err = fl.int64()
			a.Type = AttrType(v)
		case 21:
			a.RefName, err = fl.str()
		case 2:
			a.F, err = fl.float32()
		case 3:
			a.I, err = fl.int64()
		case 4:
			a.S, err = fl.bytes()
		case 5:
			var sub []byte
			if sub, err = fl.bytes(); err == nil {
				a.T, err = decodeTensor(sub)
			}
		case 7:
			a.Floats, err = appendFloat32s(a.Floats, fl)
		case 8:
			a.Ints, err = appendInt64s(a.Ints, fl)
		case 9:
			var s []byte
			s, err = fl.bytes()
			a.Strings = append(a.Strings, s)
		case 10:
			var sub []byte
			if sub, err = fl.bytes(); err == nil {
				var t *TensorProto
				t, err = decodeTensor(sub)
				a.Tensors = append(a.Tensors, t)
			}
		case 6, 11:
			var sub []byte
			if sub, err = fl.bytes(); err != nil {
				return err
			}
			if depth >= maxGraphDepth {
				return fmt.Errorf("subgraphs nested more than %d deep", maxGraphDepth)
			}
			var g *GraphProto
			if g, err = decodeGraph(sub, depth+1); err != nil {
				return err
			}
			if fl.num == 6 {
				a.G = g
			} else {
				a.Graphs = append(a.Graphs, g)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%q: %w", a.Name, err)
	}
	return a, nil
}

// DecodeTensor parses one serialized TensorProto, as the ONNX test suite
// stores inputs and expected outputs (input_0.pb, output_0.pb). Tensors
// with external data are refused: a lone .pb has no directory.
func DecodeTensor(data []byte) (*TensorProto, error) {
	t, err := decodeTensor(data)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return t, nil
}
