package tensor

import (
	"fmt"
	"unsafe"
)

// Tensor is a host tensor: a dtype, a shape and the elements as
// little-endian bytes in row-major order. Data may be a view into a larger
// buffer; copying a Tensor copies the header, not the elements.
type Tensor struct {
	DType DType
	Shape Shape
	Data  []byte
}

// New allocates a zeroed tensor. It panics on a negative dim or invalid
// dtype; use Make where the shape comes from user input.
func New(dt DType, dims ...int) Tensor {
	t, err := Make(dt, Shape(dims))
	if err != nil {
		panic(err)
	}
	return t
}

// Make allocates a zeroed tensor after validating dtype and shape.
func Make(dt DType, s Shape) (Tensor, error) {
	if !dt.Valid() {
		return Tensor{}, fmt.Errorf("tensor: invalid dtype %v", dt)
	}
	if err := s.Validate(); err != nil {
		return Tensor{}, fmt.Errorf("tensor: %w", err)
	}
	return Tensor{DType: dt, Shape: s.Clone(), Data: make([]byte, s.NumElements()*dt.Size())}, nil
}

// View wraps existing bytes as a tensor, checking that their length
// matches dtype and shape exactly.
func View(dt DType, s Shape, data []byte) (Tensor, error) {
	if !dt.Valid() {
		return Tensor{}, fmt.Errorf("tensor: invalid dtype %v", dt)
	}
	if err := s.Validate(); err != nil {
		return Tensor{}, fmt.Errorf("tensor: %w", err)
	}
	if want := s.NumElements() * dt.Size(); len(data) != want {
		return Tensor{}, fmt.Errorf("tensor: %v %v needs %d bytes, got %d", dt, s, want, len(data))
	}
	return Tensor{DType: dt, Shape: s, Data: data}, nil
}

// FromF32 copies values into a new F32 tensor of the given shape.
func FromF32(s Shape, values []float32) (Tensor, error) {
	return fromSlice(F32, s, values)
}

// FromF64 copies values into a new F64 tensor of the given shape.
func FromF64(s Shape, values []float64) (Tensor, error) { return fromSlice(F64, s, values) }

// FromI32 copies values into a new I32 tensor of the given shape.
func FromI32(s Shape, values []int32) (Tensor, error) { return fromSlice(I32, s, values) }

// FromI64 copies values into a new I64 tensor of the given shape.
func FromI64(s Shape, values []int64) (Tensor, error) { return fromSlice(I64, s, values) }

// FromBool copies values into a new Bool tensor of the given shape.
func FromBool(s Shape, values []bool) (Tensor, error) { return fromSlice(Bool, s, values) }

func fromSlice[T any](dt DType, s Shape, values []T) (Tensor, error) {
	t, err := Make(dt, s)
	if err != nil {
		return t, err
	}
	if len(values) != s.NumElements() {
		return Tensor{}, fmt.Errorf("tensor: shape %v holds %d elements, got %d values", s, s.NumElements(), len(values))
	}
	copy(Elems[T](t.Data), values)
	return t, nil
}

// NumElements is the element count of the tensor's shape.
func (t Tensor) NumElements() int { return t.Shape.NumElements() }

// Clone deep-copies the tensor.
func (t Tensor) Clone() Tensor {
	return Tensor{DType: t.DType, Shape: t.Shape.Clone(), Data: append([]byte(nil), t.Data...)}
}

// String is a short description: f32[2 3].
func (t Tensor) String() string { return t.DType.String() + t.Shape.String() }

// Elems reinterprets little-endian bytes as a slice of T without copying.
// len(b) must be a multiple of T's size and b suitably aligned (buffers
// from make and kiln's arena are).
func Elems[T any](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// Bytes reinterprets a slice of T as bytes without copying.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// F32 views the elements of an F32 tensor (it panics for another dtype:
// that is a programming error inside kiln, not bad user input).
func (t Tensor) F32() []float32 { t.must(F32); return Elems[float32](t.Data) }

// F64 views the elements of an F64 tensor.
func (t Tensor) F64() []float64 { t.must(F64); return Elems[float64](t.Data) }

// F16 views the raw bits of an F16 tensor.
func (t Tensor) F16() []uint16 { t.must(F16); return Elems[uint16](t.Data) }

// BF16 views the raw bits of a BF16 tensor.
func (t Tensor) BF16() []uint16 { t.must(BF16); return Elems[uint16](t.Data) }

// I8 views the elements of an I8 tensor.
func (t Tensor) I8() []int8 { t.must(I8); return Elems[int8](t.Data) }

// U8 views the elements of a U8 tensor.
func (t Tensor) U8() []uint8 { t.must(U8); return t.Data }

// I32 views the elements of an I32 tensor.
func (t Tensor) I32() []int32 { t.must(I32); return Elems[int32](t.Data) }

// I64 views the elements of an I64 tensor.
func (t Tensor) I64() []int64 { t.must(I64); return Elems[int64](t.Data) }

// Bool views the elements of a Bool tensor (one byte each, 0 or 1).
func (t Tensor) Bool() []bool { t.must(Bool); return Elems[bool](t.Data) }

func (t Tensor) must(dt DType) {
	if t.DType != dt {
		panic(fmt.Sprintf("tensor: %v accessed as %v", t, dt))
	}
}

// Info names a tensor and gives its dtype and shape: a graph's input,
// output or param as a compiled graph describes it.
type Info struct {
	Name  string
	DType DType
	Shape Shape
}
