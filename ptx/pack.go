package ptx

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// Layout returns each parameter's byte offset in the launch argument
// buffer (every parameter at its alignment, in order) and the buffer's
// size, as the driver's CU_LAUNCH_PARAM_BUFFER_POINTER expects.
func (e *Entry) Layout() (offsets []int, size int) {
	offsets = make([]int, len(e.Params))
	for i, p := range e.Params {
		a := p.Alignment()
		size = (size + a - 1) / a * a
		offsets[i] = size
		size += p.Bytes()
	}
	return offsets, size
}

// Pack lays out args against the entry's signature, checking the count
// and that every argument fits its parameter's type:
//
//	.u64 .s64 .b64  any Go integer (a device pointer is a uintptr) that fits
//	.u32 .s32 .b32  any Go integer that fits the width and signedness
//	.u16 .s16 .b16, .u8 .s8 .b8  likewise
//	.f32  float32     .f64  float64
//	array parameters (.b8 name[N])  a []byte of exactly N bytes
//
// The buffer is 8-byte aligned.
func (e *Entry) Pack(args ...any) ([]byte, error) {
	if len(args) != len(e.Params) {
		return nil, fmt.Errorf("ptx: %s takes %d arguments, got %d", e.Name, len(e.Params), len(args))
	}
	offs, size := e.Layout()
	words := make([]uint64, (size+7)/8)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:size]
	for i, p := range e.Params {
		if err := put(buf[offs[i]:offs[i]+p.Bytes()], p, args[i]); err != nil {
			return nil, fmt.Errorf("ptx: %s argument %d (%s %s): %w", e.Name, i, p.Type, p.Name, err)
		}
	}
	return buf, nil
}

func put(dst []byte, p Param, arg any) error {
	if p.Count > 0 {
		b, ok := arg.([]byte)
		if !ok || len(b) != len(dst) {
			return fmt.Errorf("want a []byte of %d bytes, got %T", len(dst), arg)
		}
		copy(dst, b)
		return nil
	}
	v := reflect.ValueOf(arg)
	switch p.Type {
	case F32:
		if v.Kind() != reflect.Float32 {
			return fmt.Errorf("want float32, got %T", arg)
		}
		binary.LittleEndian.PutUint32(dst, math.Float32bits(float32(v.Float())))
		return nil
	case F64:
		if v.Kind() != reflect.Float64 {
			return fmt.Errorf("want float64, got %T", arg)
		}
		binary.LittleEndian.PutUint64(dst, math.Float64bits(v.Float()))
		return nil
	}
	bitsN := 8 * p.Type.Size()
	signed := p.Type[1] == 's'
	unsigned := p.Type[1] == 'u'
	var u uint64
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s := v.Int()
		switch {
		case unsigned && s < 0:
			return fmt.Errorf("negative %d for an unsigned parameter", s)
		case bitsN < 64 && (s < -(1<<(bitsN-1)) || (signed && s >= 1<<(bitsN-1)) || s >= 1<<bitsN):
			return fmt.Errorf("%d does not fit %d bits", s, bitsN)
		}
		u = uint64(s)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u = v.Uint()
		switch {
		case signed && bitsN < 64 && u >= 1<<(bitsN-1), signed && bitsN == 64 && u > math.MaxInt64:
			return fmt.Errorf("%d does not fit a signed %d-bit parameter", u, bitsN)
		case bitsN < 64 && u >= 1<<bitsN:
			return fmt.Errorf("%d does not fit %d bits", u, bitsN)
		}
	default:
		return fmt.Errorf("want an integer, got %T", arg)
	}
	for i := range dst {
		dst[i] = byte(u >> (8 * i))
	}
	return nil
}
