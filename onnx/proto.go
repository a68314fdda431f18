package onnx

import (
	"errors"
	"fmt"
)

// The messages of onnx.proto that kiln reads, with only the fields it
// uses; unknown fields are skipped, so newer files still decode. Field
// numbers are those of onnx.proto (IR version 10).

// ModelProto is a decoded ONNX model file.
type ModelProto struct {
	IRVersion       int64
	Opsets          []OpsetID
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	DocString       string
	Graph           *GraphProto
	Metadata        []StringPair
	HasFunctions    bool // model-local functions (not supported as ops)
}

// OpsetID is one opset import: a domain ("" is the default ai.onnx) and
// its version.
type OpsetID struct {
	Domain  string
	Version int64
}

// StringPair is a StringStringEntryProto (metadata, external data keys).
type StringPair struct{ Key, Value string }

// GraphProto is a model's main graph.
type GraphProto struct {
	Name         string
	Nodes        []*NodeProto
	Initializers []*TensorProto
	Inputs       []*ValueInfo
	Outputs      []*ValueInfo
	ValueInfo    []*ValueInfo
	HasSparse    bool // sparse initializers (not supported)
}

// NodeProto is one operator application.
type NodeProto struct {
	Name    string
	OpType  string
	Domain  string
	Inputs  []string // "" marks an omitted optional input
	Outputs []string
	Attrs   []*Attribute
}

// ValueInfo is a named value with its type: graph inputs and outputs.
type ValueInfo struct {
	Name     string
	IsTensor bool  // the type is a tensor type (not a sequence or map)
	ElemType int32 // TensorProto data type
	HasShape bool
	Dims     []Dim
}

// Dim is one dimension of a value's shape: a fixed size, a named symbolic
// size, or neither (unknown).
type Dim struct {
	Value    int64
	HasValue bool
	Param    string
}

func (d Dim) String() string {
	switch {
	case d.HasValue:
		return fmt.Sprint(d.Value)
	case d.Param != "":
		return d.Param
	}
	return "?"
}

// Decode parses a serialized ModelProto. Byte fields (tensor data) are
// views into data, which must stay unchanged while the result is used.
func Decode(data []byte) (*ModelProto, error) {
	m := &ModelProto{}
	err := walk(data, func(fl field) error {
		var err error
		switch fl.num {
		case 1:
			m.IRVersion, err = fl.int64()
		case 2:
			m.ProducerName, err = fl.str()
		case 3:
			m.ProducerVersion, err = fl.str()
		case 4:
			m.Domain, err = fl.str()
		case 5:
			m.ModelVersion, err = fl.int64()
		case 6:
			m.DocString, err = fl.str()
		case 7:
			var b []byte
			if b, err = fl.bytes(); err == nil {
				m.Graph, err = decodeGraph(b, 0)
			}
		case 8:
			var b []byte
			if b, err = fl.bytes(); err == nil {
				var o OpsetID
				o, err = decodeOpset(b)
				m.Opsets = append(m.Opsets, o)
			}
		case 14:
			var b []byte
			if b, err = fl.bytes(); err == nil {
				var p StringPair
				p, err = decodePair(b)
				m.Metadata = append(m.Metadata, p)
			}
		case 25:
			m.HasFunctions = true
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("onnx: not a valid ONNX model: %w", err)
	}
	if m.Graph == nil || m.IRVersion <= 0 {
		return nil, errors.New("onnx: not an ONNX model (no graph or IR version)")
	}
	return m, nil
}

func decodeOpset(b []byte) (OpsetID, error) {
	var o OpsetID
	err := walk(b, func(fl field) error {
		var err error
		switch fl.num {
		case 1:
			o.Domain, err = fl.str()
		case 2:
			o.Version, err = fl.int64()
		}
		return err
	})
	return o, err
}

func decodePair(b []byte) (StringPair, error) {
	var p StringPair
	err := walk(b, func(fl field) error {
		var err error
		switch fl.num {
		case 1:
			p.Key, err = fl.str()
		case 2:
			p.Value, err = fl.str()
		}
		return err
	})
	return p, err
}

func decodeGraph(b []byte, depth int) (*GraphProto, error) {
	g := &GraphProto{}
	err := walk(b, func(fl field) error {
		var err error
		var sub []byte
		if fl.num == 1 || fl.num == 5 || (fl.num >= 11 && fl.num <= 13) {
			if sub, err = fl.bytes(); err != nil {
				return err
			}
		}
		switch fl.num {
		case 1:
			var n *NodeProto
			if n, err = decodeNode(sub, depth); err != nil {
				return fmt.Errorf("node %d: %w", len(g.Nodes), err)
			}
			g.Nodes = append(g.Nodes, n)
		case 2:
			g.Name, err = fl.str()
		case 5:
			var t *TensorProto
			if t, err = decodeTensor(sub); err != nil {
				return fmt.Errorf("initializer %d: %w", len(g.Initializers), err)
			}
			g.Initializers = append(g.Initializers, t)
		case 11, 12, 13:
			var v *ValueInfo
			if v, err = decodeValueInfo(sub); err != nil {
				return fmt.Errorf("value info: %w", err)
			}
			switch fl.num {
			case 11:
				g.Inputs = append(g.Inputs, v)
			case 12:
				g.Outputs = append(g.Outputs, v)
			default:
				g.ValueInfo = append(g.ValueInfo, v)
			}
		case 15:
			g.HasSparse = true
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	return g, nil
}

func decodeNode(b []byte, depth int) (*NodeProto, error) {
	n := &NodeProto{}
	err := walk(b, func(fl field) error {
		var err error
		var s string
		switch fl.num {
		case 1:
			s, err = fl.str()
			n.Inputs = append(n.Inputs, s)
		case 2:
			s, err = fl.str()
			n.Outputs = append(n.Outputs, s)
		case 3:
			n.Name, err = fl.str()
		case 4:
			n.OpType, err = fl.str()
		case 7:
			n.Domain, err = fl.str()
		case 5:
			var sub []byte
			if sub, err = fl.bytes(); err == nil {
				var a *Attribute
				if a, err = decodeAttribute(sub, depth); err != nil {
					return fmt.Errorf("attribute %d: %w", len(n.Attrs), err)
				}
				n.Attrs = append(n.Attrs, a)
			}
		}
		return err
	})
	return n, err
}

func decodeValueInfo(b []byte) (*ValueInfo, error) {
	v := &ValueInfo{}
	err := walk(b, func(fl field) error {
		switch fl.num {
		case 1:
			var err error
			v.Name, err = fl.str()
			return err
		case 2:
			tp, err := fl.bytes()
			if err != nil {
				return err
			}
			return decodeType(tp, v)
		}
		return nil
	})
	return v, err
}

// decodeType reads TypeProto.tensor_type (field 1); sequence, map and
// optional types leave IsTensor false.
func decodeType(b []byte, v *ValueInfo) error {
	return walk(b, func(fl field) error {
		if fl.num != 1 {
			return nil
		}
		tt, err := fl.bytes()
		if err != nil {
			return err
		}
		v.IsTensor = true
		return walk(tt, func(fl field) error {
			var err error
			switch fl.num {
			case 1:
				var e int64
				e, err = fl.int64()
				v.ElemType = int32(e)
			case 2:
				var sh []byte
				if sh, err = fl.bytes(); err == nil {
					v.HasShape = true
					err = decodeShape(sh, v)
				}
			}
			return err
		})
	})
}

func decodeShape(b []byte, v *ValueInfo) error {
	return walk(b, func(fl field) error {
		if fl.num != 1 {
			return nil
		}
		db, err := fl.bytes()
		if err != nil {
			return err
		}
		var d Dim
		err = walk(db, func(fl field) error {
			var err error
			switch fl.num {
			case 1:
				d.Value, err = fl.int64()
				d.HasValue = true
			case 2:
				d.Param, err = fl.str()
			}
			return err
		})
		v.Dims = append(v.Dims, d)
		return err
	})
}
