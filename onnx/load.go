package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/mmapfile"
	"github.com/kilnml/kiln/tensor"
)

// Option adjusts an import.
type Option func(*options)

type options struct {
	shapes     map[string][]int
	values     map[string]tensor.Tensor
	dims       map[string]int
	constLimit int
	loopBound  int // WithLoopBound
	baseDir    string
	hasBase    bool
}

// WithShape fixes the shape of a graph input whose dims are symbolic or
// unknown, e.g. WithShape("input_ids", 1, 128). Dims the model fixes must
// agree. Symbolic dims named in the input (say "batch", "sequence") are
// bound to the given sizes for every other input that uses them too.
func WithShape(input string, dims ...int) Option {
	return func(o *options) { o.shapes[input] = slices.Clone(dims) }
}

// WithInputValue freezes a graph input to a value known at import time:
// the input becomes a constant, so shape and axis arguments that an
// exporter left as inputs (Reshape's shape, Slice's starts, ...) can be
// static. The value's dtype and shape must match the input's declaration
// (symbolic dims take the value's sizes). The compiled graph no longer
// has that input.
func WithInputValue(input string, value tensor.Tensor) Option {
	return func(o *options) { o.values[input] = value }
}

// WithDim binds a symbolic dimension by name for every input that uses it,
// e.g. WithDim("batch_size", 8).
func WithDim(name string, size int) Option {
	return func(o *options) { o.dims[name] = size }
}

// WithConstantLimit sets how large a floating-point initializer may be and
// still be imported as a graph Constant (folded and fused at compile
// time) rather than a named Param. The default, 1, makes scalars
// constants and every weight a Param that SetParams fills. Integer and
// bool initializers (shapes, indices) are always constants.
func WithConstantLimit(elements int) Option {
	return func(o *options) { o.constLimit = elements }
}

// WithBaseDir names the directory external-data files are read from when
// a model is given to Parse as bytes (Load uses the model file's own
// directory).
func WithBaseDir(dir string) Option {
	return func(o *options) { o.baseDir, o.hasBase = dir, true }
}

// Model is an imported ONNX model: a kiln graph plus the values of the
// initializers that became its params.
type Model struct {
	// Graph is the imported graph: one Input per graph input (in order),
	// one Param per weight initializer (named as in the model), outputs
	// named as the model's outputs.
	Graph *graph.Graph
	// Proto is the decoded file; its tensor data views the model's bytes.
	Proto *ModelProto
	// Opset is the model's ai.onnx opset.
	Opset int64

	weights map[string]tensor.Tensor
	file    *mmapfile.File
	ext     *external
	closed  bool
}

// Load reads an ONNX model file (memory-mapped where possible) and
// imports it. External-data files are resolved in the file's directory.
// Close the model once its params are set.
func Load(path string, opts ...Option) (*Model, error) {
	f, err := mmapfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	m, err := parse(f.Bytes(), filepath.Dir(path), true, opts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.file = f
	return m, nil
}

// Parse imports a model held in memory. data must stay unchanged while
// the model is used: weights are views into it.
func Parse(data []byte, opts ...Option) (*Model, error) {
	return parse(data, "", false, opts)
}

func parse(data []byte, dir string, hasDir bool, opts []Option) (*Model, error) {
	o := options{shapes: map[string][]int{}, values: map[string]tensor.Tensor{}, dims: map[string]int{}, constLimit: 1}
	for _, fn := range opts {
		fn(&o)
	}
	if o.hasBase {
		dir, hasDir = o.baseDir, true
	}
	if err := sniff(data); err != nil {
		return nil, err
	}
	mp, err := Decode(data)
	if err != nil {
		return nil, err
	}
	var ext *external
	if hasDir {
		ext = newExternal(dir)
	}
	m, err := importModel(mp, len(data), ext, o)
	if err != nil {
		ext.close()
		return nil, err
	}
	return m, nil
}

// sniff names the common wrong files before protobuf decoding turns them
// into a less helpful error.
func sniff(b []byte) error {
	switch {
	case len(b) == 0:
		return errors.New("onnx: empty file")
	case strings.HasPrefix(string(b), "\x93NUMPY"):
		return errors.New("onnx: this is a .npy array, not an ONNX model")
	case strings.HasPrefix(string(b), "PK\x03\x04"):
		return errors.New("onnx: this is a zip archive (a PyTorch checkpoint?), not an ONNX model")
	case len(b) >= 9 && b[8] == '{' && binary.LittleEndian.Uint64(b) <= uint64(len(b)-8) && b[4]|b[5]|b[6]|b[7] == 0:
		// A u64 header length then JSON: the safetensors layout.
		return errors.New("onnx: this looks like a safetensors file, not an ONNX model")
	}
	return nil
}

// Weight returns the value of a weight initializer that became a Param.
// Its data may view the model file and is valid until Close.
func (m *Model) Weight(name string) (tensor.Tensor, bool) {
	t, ok := m.weights[name]
	return t, ok && !m.closed
}

// ParamSetter is what SetParams needs of a compiled graph:
// *kiln.CompiledGraph has it. An interface, so that parsing a model does
// not link the executor and the kernels.
type ParamSetter interface {
	Params() []tensor.Info
	SetParamTyped(name string, data []byte, dt tensor.DType) error
}

// SetParams sets every param of cg from the model's initializers, by name.
// cg must come from compiling m.Graph (or a graph whose params are a
// subset of its initializers).
func (m *Model) SetParams(cg ParamSetter) error {
	if m.closed {
		return errors.New("onnx: SetParams on a closed model")
	}
	var missing []string
	var buf []byte
	for _, p := range cg.Params() {
		w, ok := m.weights[p.Name]
		if !ok {
			missing = append(missing, p.Name)
			continue
		}
		// Weights may view a mapped file: copy them out under a fault
		// guard (a file truncated since Load is an error, not SIGBUS).
		var err error
		if buf, err = mmapfile.CopyOut(buf, w.Data); err != nil {
			return fmt.Errorf("onnx: initializer %q: %w", p.Name, err)
		}
		if err := cg.SetParamTyped(p.Name, buf, w.DType); err != nil {
			return fmt.Errorf("onnx: %w", err)
		}
	}
	if missing != nil {
		return fmt.Errorf("onnx: the model has no initializer for params %s", strings.Join(missing, ", "))
	}
	return nil
}

// Close releases the model's file mappings. Weights and Proto tensor data
// must not be used afterwards; the Graph stays valid.
func (m *Model) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	err := errors.Join(m.ext.close(), m.file.Close())
	m.weights = nil
	return err
}
