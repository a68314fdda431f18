package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// ctx is what an op mapping sees: the node, its input values and the
// graph to build in (the model's graph, or a scratch graph when folding).
type ctx struct {
	imp   *importer
	g     *graph.Graph
	n     *NodeProto
	name  string
	opset int64
	ins   []*value // nil for an omitted optional input
	attrs map[string]*Attribute
	local map[int]*graph.Node // scratch-graph constants, by input index
}

// opFunc maps one ONNX node; it returns one kiln node per ONNX output (nil
// for outputs it does not produce). Errors from unsupported attributes are
// made with unsupportedf.
type opFunc func(c *ctx) ([]*graph.Node, error)

// opDef is a mapping and the first opset that defines the op. Control
// flow ops have flow instead of fn: they import their subgraphs and bind
// their outputs themselves (see control.go).
type opDef struct {
	since int64
	fn    opFunc
	flow  func(c *ctx) error
}

// opTable holds every mapping; the ops_*.go files fill it from init.
var opTable = map[string]opDef{}

func register(name string, since int64, fn opFunc) { opTable[name] = opDef{since: since, fn: fn} }

// registerFlow adds a control-flow op (see opDef.flow).
func registerFlow(name string, since int64, flow func(c *ctx) error) {
	opTable[name] = opDef{since: since, flow: flow}
}

// one wraps a single-output mapping.
func one(f func(c *ctx) (*graph.Node, error)) opFunc {
	return func(c *ctx) ([]*graph.Node, error) {
		n, err := f(c)
		if err != nil {
			return nil, err
		}
		return []*graph.Node{n}, nil
	}
}

// has reports whether optional input i was given.
func (c *ctx) has(i int) bool { return i < len(c.ins) && c.ins[i] != nil }

// in returns input i as a node of c.g (nil when omitted).
func (c *ctx) in(i int) *graph.Node {
	if !c.has(i) {
		return nil
	}
	v := c.ins[i]
	if c.g == c.imp.g {
		return c.imp.materialise(v)
	}
	if n, ok := c.local[i]; ok {
		return n
	}
	n := c.g.Constant(*v.known)
	c.local[i] = n
	return n
}

// need returns required input i, or an error naming it.
func (c *ctx) need(i int) (*graph.Node, error) {
	if !c.has(i) {
		return nil, fmt.Errorf("missing required input %d", i)
	}
	return c.in(i), nil
}

// dtype and shape of input i without materialising it.
func (c *ctx) dtype(i int) tensor.DType { return c.ins[i].dtype() }
func (c *ctx) shape(i int) tensor.Shape { return c.ins[i].shape() }

// known returns input i's import-time value, read through an aligned copy
// when it views the file at an odd offset.
func (c *ctx) known(i int) (tensor.Tensor, bool) {
	if !c.has(i) {
		return tensor.Tensor{}, false
	}
	return knownValue(c.ins[i])
}

// knownValue is v's import-time value, as ctx.known reads it; a value
// whose fold was deferred for its size is folded now, as it is needed.
func knownValue(v *value) (tensor.Tensor, bool) {
	if v.known == nil && v.lazy != nil {
		v.lazy()
	}
	if v.known == nil {
		return tensor.Tensor{}, false
	}
	t := *v.known
	if len(t.Data) > 0 && uintptr(unsafe.Pointer(&t.Data[0]))%uintptr(t.DType.Size()) != 0 {
		t = t.Clone()
	}
	return t, true
}

// ints reads input i as a list of integers known at import time (a
// shape, axes, pads...). Shape sub-graphs have been folded by then, so a
// run-time value here is a model kiln cannot make static.
func (c *ctx) ints(i int, what string) ([]int, error) {
	t, ok := c.known(i)
	if !ok {
		return nil, unsupportedf("%s (input %d) must be known at import time, but it is computed at run time "+
			"(a dynamic shape: kiln plans static shapes; a model input can be bound with onnx.WithInputValue)", what, i)
	}
	return intsOf(t, what)
}

// intsOf converts an integer tensor to ints, saturating values outside
// ±2^62 (ONNX uses INT64_MAX and INT64_MIN as "to the end" in Slice).
func intsOf(t tensor.Tensor, what string) ([]int, error) {
	out := make([]int, t.NumElements())
	for i := range out {
		var v int64
		switch t.DType {
		case tensor.I64:
			v = int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
		case tensor.I32:
			v = int64(int32(binary.LittleEndian.Uint32(t.Data[4*i:])))
		case tensor.I8:
			v = int64(int8(t.Data[i]))
		case tensor.U8:
			v = int64(t.Data[i])
		default:
			return nil, fmt.Errorf("%s must be integers, got %v", what, t.DType)
		}
		out[i] = int(max(-1<<62, min(v, 1<<62)))
	}
	return out, nil
}

// scalar reads input i as one number known at import time.
func (c *ctx) scalar(i int) (float64, bool) {
	t, ok := c.known(i)
	if !ok || t.NumElements() != 1 {
		return 0, false
	}
	return t.Float64s()[0], true
}

// Attribute access. A missing attribute gives the default; one of the
// wrong type is an error.

func (c *ctx) attr(name string, want AttrType) (*Attribute, error) {
	a, ok := c.attrs[name]
	if !ok {
		return nil, nil
	}
	if a.Type != want && a.Type != AttrUndefined {
		return nil, fmt.Errorf("attribute %q has type %v, want %v", name, a.Type, want)
	}
	return a, nil
}

func (c *ctx) attrInt(name string, def int64) (int64, error) {
	a, err := c.attr(name, AttrInt)
	if a == nil || err != nil {
		return def, err
	}
	return a.I, nil
}

func (c *ctx) attrFloat(name string, def float32) (float32, error) {
	a, err := c.attr(name, AttrFloat)
	if a == nil || err != nil {
		return def, err
	}
	return a.F, nil
}

func (c *ctx) attrString(name, def string) (string, error) {
	a, err := c.attr(name, AttrString)
	if a == nil || err != nil {
		return def, err
	}
	return string(a.S), nil
}

// attrInts returns a list attribute as ints (nil, false when absent).
func (c *ctx) attrInts(name string) ([]int, bool, error) {
	a, err := c.attr(name, AttrInts)
	if a == nil || err != nil {
		return nil, false, err
	}
	out := make([]int, len(a.Ints))
	for i, v := range a.Ints {
		if v > math.MaxInt32 || v < math.MinInt32 {
			return nil, false, fmt.Errorf("attribute %q: value %d out of range", name, v)
		}
		out[i] = int(v)
	}
	return out, true, nil
}

func (c *ctx) attrBool(name string, def bool) (bool, error) {
	d := int64(0)
	if def {
		d = 1
	}
	v, err := c.attrInt(name, d)
	return v != 0, err
}

// used reports whether output i is read by anything.
func (c *ctx) used(i int) bool {
	return i < len(c.n.Outputs) && c.n.Outputs[i] != "" && c.imp.uses[c.n.Outputs[i]] > 0
}

// axis normalises an axis attribute against a rank.
func axis(ax, rank int) (int, error) { return tensor.NormAxis(ax, rank) }
