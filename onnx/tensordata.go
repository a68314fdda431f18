package onnx

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/kilnml/kiln/tensor"
)

// Tensor converts a TensorProto to a host tensor. Raw data is a view into
// the decoded input (not copied, and possibly unaligned: Clone it before
// reading typed elements); typed fields are converted into a new buffer.
// Tensors stored in external files need the model's directory: use Load.
func (t *TensorProto) Tensor() (tensor.Tensor, error) { return tensorOf(t, nil) }

// shape checks the dims: non-negative and with a bounded element count.
func (t *TensorProto) shape() (tensor.Shape, error) {
	s := make(tensor.Shape, len(t.Dims))
	for i, d := range t.Dims {
		if d < 0 || d > tensor.MaxElements {
			return nil, fmt.Errorf("tensor %q: invalid dim %d in %v", t.Name, d, t.Dims)
		}
		s[i] = int(d)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	return s, nil
}

// tensorOf decodes t, reading external data through ext (nil: refuse it).
func tensorOf(t *TensorProto, ext *external) (tensor.Tensor, error) {
	dt, err := DType(t.DataType)
	if err != nil {
		return tensor.Tensor{}, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	s, err := t.shape()
	if err != nil {
		return tensor.Tensor{}, err
	}
	if t.HasSegment {
		return tensor.Tensor{}, fmt.Errorf("tensor %q: segmented tensors are not supported", t.Name)
	}
	n := s.NumElements()
	want := n * dt.Size()
	var data []byte
	switch {
	case t.IsExternal:
		if ext == nil {
			return tensor.Tensor{}, fmt.Errorf("tensor %q: data is in an external file, which needs the model's directory (use Load or WithBaseDir)", t.Name)
		}
		if data, err = ext.read(t, want); err != nil {
			return tensor.Tensor{}, err
		}
	case t.HasRaw:
		if len(t.RawData) != want {
			return tensor.Tensor{}, fmt.Errorf("tensor %q: %v%v needs %d bytes, raw_data has %d", t.Name, dt, s, want, len(t.RawData))
		}
		data = t.RawData
	default:
		if data, err = typedData(t, dt, n); err != nil {
			return tensor.Tensor{}, fmt.Errorf("tensor %q: %v%v: %w", t.Name, dt, s, err)
		}
	}
	if dt == tensor.Bool {
		data = boolBytes(data)
	}
	return tensor.View(dt, s, data)
}

// boolBytes maps any non-zero byte to 1 (copying only if needed): a Go
// bool must be 0 or 1.
func boolBytes(b []byte) []byte {
	for i, c := range b {
		if c > 1 {
			b = append([]byte(nil), b...)
			for j := i; j < len(b); j++ {
				if b[j] != 0 {
					b[j] = 1
				}
			}
			return b
		}
	}
	return b
}

// typedData converts the typed repeated field that holds dt's values.
func typedData(t *TensorProto, dt tensor.DType, n int) ([]byte, error) {
	count := func(have int, field string) error {
		if have != n {
			if have == 0 && n > 0 && !t.HasStrings {
				return errors.New("no data (neither raw_data nor " + field + ")")
			}
			return fmt.Errorf("declares %d elements, %s holds %d", n, field, have)
		}
		return nil
	}
	// The count is checked before allocating, so the buffer is never
	// larger than the values the file really holds.
	var err error
	switch dt {
	case tensor.F32:
		err = count(len(t.FloatData), "float_data")
	case tensor.F64:
		err = count(len(t.DoubleData), "double_data")
	case tensor.I64:
		err = count(len(t.Int64Data), "int64_data")
	default: // int32_data holds I32, I8, U8, Bool and the 16-bit float bits
		err = count(len(t.Int32Data), "int32_data")
	}
	if err != nil {
		return nil, err
	}
	out, err := tensor.Make(dt, tensor.Shape{n})
	if err != nil {
		return nil, err
	}
	switch dt {
	case tensor.F32:
		copy(out.F32(), t.FloatData)
	case tensor.F64:
		copy(out.F64(), t.DoubleData)
	case tensor.I64:
		copy(out.I64(), t.Int64Data)
	default:
		for i, v := range t.Int32Data {
			switch dt {
			case tensor.I32:
				out.I32()[i] = v
			case tensor.I8:
				out.I8()[i] = int8(v)
			case tensor.U8:
				out.U8()[i] = uint8(v)
			case tensor.Bool:
				out.Bool()[i] = v != 0
			case tensor.F16, tensor.BF16:
				tensor.Elems[uint16](out.Data)[i] = uint16(v)
			}
		}
	}
	return out.Data, nil
}

// externalLoc is a tensor's parsed external_data entry.
type externalLoc struct {
	location       string
	offset, length int64 // length -1: to the tensor's size
}

func parseExternal(t *TensorProto) (externalLoc, error) {
	loc := externalLoc{length: -1}
	for _, kv := range t.External {
		switch kv.Key {
		case "location":
			loc.location = kv.Value
		case "offset", "length":
			v, err := strconv.ParseInt(kv.Value, 10, 64)
			if err != nil || v < 0 {
				return loc, fmt.Errorf("tensor %q: bad external %s %q", t.Name, kv.Key, kv.Value)
			}
			if kv.Key == "offset" {
				loc.offset = v
			} else {
				loc.length = v
			}
		}
	}
	if loc.location == "" {
		return loc, fmt.Errorf("tensor %q: external data without a location", t.Name)
	}
	return loc, nil
}

// slice cuts a tensor's bytes out of its external file.
func (loc externalLoc) slice(name string, file []byte, want int) ([]byte, error) {
	if loc.length >= 0 && loc.length != int64(want) {
		return nil, fmt.Errorf("tensor %q: external length %d, but its dims need %d bytes", name, loc.length, want)
	}
	if loc.offset > int64(len(file)) || int64(want) > int64(len(file))-loc.offset || loc.offset > math.MaxInt {
		// (offset+want may overflow: print the two apart.)
		return nil, fmt.Errorf("tensor %q: %d bytes at offset %d lie outside %s (%d bytes)", name, want, loc.offset, loc.location, len(file))
	}
	return file[loc.offset : int(loc.offset)+want], nil
}
