package onnx

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A small protobuf reader over protowire: each message decoder walks its
// fields once and keeps only what kiln needs. Byte fields (raw_data above
// all) stay views into the input, so a memory-mapped model is never
// copied. Every length comes from the input itself, so allocations are
// bounded by its size.

// field is one decoded field of a message.
type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64 // varint, fixed32 and fixed64 values
	b   []byte // bytes value (strings, sub-messages, packed arrays)
}

// walk calls f for every field of message b, in order. Groups are
// skipped (ONNX has none).
func walk(b []byte, f func(fl field) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireErr(n)
		}
		b = b[n:]
		fl := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			fl.v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			fl.v = uint64(v)
		case protowire.Fixed64Type:
			fl.v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			fl.b, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n >= 0 {
				b = b[n:]
				continue
			}
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, wireErr(n))
		}
		b = b[n:]
		if err := f(fl); err != nil {
			return err
		}
	}
	return nil
}

func wireErr(n int) error {
	return fmt.Errorf("corrupt protobuf: %w", protowire.ParseError(n))
}

func (fl field) want(t protowire.Type) error {
	if fl.typ != t {
		return fmt.Errorf("field %d has wire type %d, want %d", fl.num, fl.typ, t)
	}
	return nil
}

// bytes returns a length-delimited value (string, bytes or message).
func (fl field) bytes() ([]byte, error) { return fl.b, fl.want(protowire.BytesType) }

func (fl field) str() (string, error) {
	b, err := fl.bytes()
	return string(b), err
}

func (fl field) int64() (int64, error) { return int64(fl.v), fl.want(protowire.VarintType) }

func (fl field) float32() (float32, error) {
	return math.Float32frombits(uint32(fl.v)), fl.want(protowire.Fixed32Type)
}

// appendInt64s adds a repeated int64/int32/uint64 field, packed or not.
func appendInt64s(dst []int64, fl field) ([]int64, error) {
	switch fl.typ {
	case protowire.VarintType:
		return append(dst, int64(fl.v)), nil
	case protowire.BytesType:
		b := fl.b
		for len(b) > 0 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, fmt.Errorf("field %d: %w", fl.num, wireErr(n))
			}
			dst = append(dst, int64(v))
			b = b[n:]
		}
		return dst, nil
	}
	return nil, fmt.Errorf("field %d: wire type %d for a repeated integer", fl.num, fl.typ)
}

// appendFloat32s adds a repeated float field, packed or not.
func appendFloat32s(dst []float32, fl field) ([]float32, error) {
	switch fl.typ {
	case protowire.Fixed32Type:
		return append(dst, math.Float32frombits(uint32(fl.v))), nil
	case protowire.BytesType:
		if len(fl.b)%4 != 0 {
			return nil, fmt.Errorf("field %d: packed floats of %d bytes", fl.num, len(fl.b))
		}
		for b := fl.b; len(b) > 0; b = b[4:] {
			v, _ := protowire.ConsumeFixed32(b)
			dst = append(dst, math.Float32frombits(v))
		}
		return dst, nil
	}
	return nil, fmt.Errorf("field %d: wire type %d for a repeated float", fl.num, fl.typ)
}

// appendFloat64s adds a repeated double field, packed or not.
func appendFloat64s(dst []float64, fl field) ([]float64, error) {
	switch fl.typ {
	case protowire.Fixed64Type:
		return append(dst, math.Float64frombits(fl.v)), nil
	case protowire.BytesType:
		if len(fl.b)%8 != 0 {
			return nil, fmt.Errorf("field %d: packed doubles of %d bytes", fl.num, len(fl.b))
		}
		for b := fl.b; len(b) > 0; b = b[8:] {
			v, _ := protowire.ConsumeFixed64(b)
			dst = append(dst, math.Float64frombits(v))
		}
		return dst, nil
	}
	return nil, fmt.Errorf("field %d: wire type %d for a repeated double", fl.num, fl.typ)
}
