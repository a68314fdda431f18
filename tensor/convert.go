package tensor

import (
	"fmt"
	"math"
	"unsafe"
)

// Convert casts every element of src into dst's dtype and stores it in
// dst. Both tensors must be valid (known dtype, Data exactly as long as
// shape and dtype require) and have equal shapes; any dtype pair works.
// If the dtypes are equal the bytes are copied. dst and src may overlap:
// an overlapping src is copied first.
//
// The rules (numpy's where numpy defines them, saturating where it does not):
//
//   - float -> float rounds to nearest, ties to even, with a single rounding
//     (F64 -> F16 does not round twice through F32). NaN stays NaN, ±Inf
//     stays ±Inf, magnitudes past the target's range become ±Inf.
//   - float -> integer truncates toward zero; NaN gives 0; values below or
//     above the target's range (±Inf included) saturate to its min or max.
//   - integer -> integer wraps like C and numpy: the two's-complement value
//     is truncated to the target width (I32 300 -> I8 44, I8 -1 -> U8 255).
//     It never goes through float64, so I64 values past 2^53 stay exact.
//   - integer -> float rounds to nearest, ties to even, with a single
//     rounding (I64 -> BF16 included); past the target's range it is ±Inf.
//   - anything -> Bool is x != 0, so NaN and -Inf give true and -0 false.
//   - Bool -> number is 0 or 1 (any non-zero byte in a Bool tensor reads
//     as true).
func Convert(dst, src Tensor) error {
	if err := checkData(dst); err != nil {
		return fmt.Errorf("tensor: Convert %v to %v: dst: %w", src, dst, err)
	}
	if err := checkData(src); err != nil {
		return fmt.Errorf("tensor: Convert %v to %v: src: %w", src, dst, err)
	}
	if !dst.Shape.Equal(src.Shape) {
		return fmt.Errorf("tensor: Convert %v to %v: shapes differ", src, dst)
	}
	if dst.DType == src.DType {
		copy(dst.Data, src.Data) // memmove: overlap is fine
		return nil
	}
	if Overlaps(dst.Data, src.Data) {
		src = src.Clone()
	}
	if !convertFast(dst, src) {
		convertGeneric(dst, src)
	}
	return nil
}

// checkData reports a tensor whose dtype, shape or data length is wrong.
func checkData(t Tensor) error {
	if !t.DType.Valid() {
		return fmt.Errorf("invalid dtype %v", t.DType)
	}
	if err := t.Shape.Validate(); err != nil {
		return err
	}
	if want := t.NumElements() * t.DType.Size(); len(t.Data) != want {
		return fmt.Errorf("needs %d bytes, has %d", want, len(t.Data))
	}
	return nil
}

// Overlaps reports whether two byte slices share memory.
func Overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// Float64s returns a copy of t's elements widened to float64 (Bool as 0 or
// 1; I64 beyond 2^53 rounds to nearest). Like the typed accessors it panics
// if t's Data does not match its dtype and shape.
func (t Tensor) Float64s() []float64 {
	out := make([]float64, t.NumElements())
	if err := Convert(Tensor{DType: F64, Shape: t.Shape, Data: Bytes(out)}, t); err != nil {
		panic(err)
	}
	return out
}

// FromFloat64s makes a new tensor of dtype dt and shape s holding v
// narrowed with Convert's rules (round to nearest even, saturating float ->
// integer, NaN -> 0, x != 0 for Bool).
func FromFloat64s(dt DType, s Shape, v []float64) (Tensor, error) {
	t, err := Make(dt, s)
	if err != nil {
		return Tensor{}, err
	}
	if len(v) != t.NumElements() {
		return Tensor{}, fmt.Errorf("tensor: shape %v holds %d elements, got %d values", s, t.NumElements(), len(v))
	}
	if err := Convert(t, Tensor{DType: F64, Shape: t.Shape, Data: Bytes(v)}); err != nil {
		return Tensor{}, err
	}
	return t, nil
}

// convertFast handles the common pairs with one direct loop each and
// reports whether it did.
func convertFast(dst, src Tensor) bool {
	switch [2]DType{src.DType, dst.DType} {
	case [2]DType{F32, F16}:
		F32ToF16Slice(dst.F16(), src.F32())
	case [2]DType{F16, F32}:
		F16ToF32Slice(dst.F32(), src.F16())
	case [2]DType{F32, BF16}:
		F32ToBF16Slice(dst.BF16(), src.F32())
	case [2]DType{BF16, F32}:
		BF16ToF32Slice(dst.F32(), src.BF16())
	case [2]DType{F32, F64}:
		widenFloat(dst.F64(), src.F32())
	case [2]DType{F64, F32}:
		d := dst.F32()
		for i, x := range src.F64()[:len(d)] {
			d[i] = float32(x)
		}
	case [2]DType{F32, I32}:
		d := dst.I32()
		for i, x := range src.F32()[:len(d)] {
			d[i] = int32(floatToInt(float64(x), math.MinInt32, math.MaxInt32))
		}
	case [2]DType{I32, F32}:
		d := dst.F32()
		for i, v := range src.I32()[:len(d)] {
			d[i] = float32(v) // int32 -> float32 is a single correct rounding
		}
	case [2]DType{F32, I64}:
		d := dst.I64()
		for i, x := range src.F32()[:len(d)] {
			d[i] = floatToInt(float64(x), math.MinInt64, math.MaxInt64)
		}
	case [2]DType{I64, F32}:
		d := dst.F32()
		for i, v := range src.I64()[:len(d)] {
			d[i] = i64ToF32(v)
		}
	default:
		return false
	}
	return true
}

// convertChunk is how many elements the generic path stages at a time.
const convertChunk = 512

// convertGeneric converts any pair in chunks: floats are widened exactly
// to float64 and narrowed with float rules; integers and Bool are widened
// to int64 and narrowed with integer rules, never through float64.
func convertGeneric(dst, src Tensor) {
	n := src.NumElements()
	var fbuf [convertChunk]float64
	var ibuf [convertChunk]int64
	for off := 0; off < n; off += convertChunk {
		m := min(convertChunk, n-off)
		if src.DType.IsFloat() {
			loadFloat(fbuf[:m], src, off)
			storeFloat(dst, off, fbuf[:m])
		} else {
			loadInt(ibuf[:m], src, off)
			storeInt(dst, off, ibuf[:m])
		}
	}
}

// loadFloat widens src[off:off+len(buf)] (a float dtype) exactly into buf.
func loadFloat(buf []float64, src Tensor, off int) {
	end := off + len(buf)
	switch src.DType {
	case F32:
		widenFloat(buf, src.F32()[off:end])
	case F64:
		copy(buf, src.F64()[off:end])
	case F16:
		for i, h := range src.F16()[off:end] {
			buf[i] = float64(F16ToF32(h))
		}
	case BF16:
		for i, b := range src.BF16()[off:end] {
			buf[i] = float64(BF16ToF32(b))
		}
	default:
		panic("tensor: loadFloat on " + src.DType.String())
	}
}

// loadInt widens src[off:off+len(buf)] (an integer dtype or Bool) into buf.
func loadInt(buf []int64, src Tensor, off int) {
	end := off + len(buf)
	switch src.DType {
	case I8:
		widenInt(buf, src.I8()[off:end])
	case U8:
		widenInt(buf, src.U8()[off:end])
	case I32:
		widenInt(buf, src.I32()[off:end])
	case I64:
		copy(buf, src.I64()[off:end])
	case Bool:
		// Read raw bytes: any non-zero byte is true, without relying on
		// the bytes being exactly 0 or 1.
		for i, b := range src.Data[off:end] {
			buf[i] = int64(b2u8(b != 0))
		}
	default:
		panic("tensor: loadInt on " + src.DType.String())
	}
}

// storeFloat narrows buf into dst[off:off+len(buf)] with the float rules.
func storeFloat(dst Tensor, off int, buf []float64) {
	end := off + len(buf)
	switch dst.DType {
	case F32:
		d := dst.F32()[off:end]
		for i, x := range buf {
			d[i] = float32(x)
		}
	case F64:
		copy(dst.F64()[off:end], buf)
	case F16:
		d := dst.F16()[off:end]
		for i, x := range buf {
			d[i] = f64ToF16(x)
		}
	case BF16:
		d := dst.BF16()[off:end]
		for i, x := range buf {
			d[i] = f64ToBF16(x)
		}
	case I8:
		saturate(dst.I8()[off:end], buf, math.MinInt8, math.MaxInt8)
	case U8:
		saturate(dst.U8()[off:end], buf, 0, math.MaxUint8)
	case I32:
		saturate(dst.I32()[off:end], buf, math.MinInt32, math.MaxInt32)
	case I64:
		saturate(dst.I64()[off:end], buf, math.MinInt64, math.MaxInt64)
	case Bool:
		d := dst.Data[off:end]
		for i, x := range buf {
			d[i] = b2u8(x != 0) // NaN != 0 is true
		}
	}
}

// storeInt narrows buf into dst[off:off+len(buf)] with the integer rules.
func storeInt(dst Tensor, off int, buf []int64) {
	end := off + len(buf)
	switch dst.DType {
	case F32:
		d := dst.F32()[off:end]
		for i, v := range buf {
			d[i] = i64ToF32(v)
		}
	case F64:
		d := dst.F64()[off:end]
		for i, v := range buf {
			d[i] = float64(v) // one rounding to nearest even
		}
	case F16:
		d := dst.F16()[off:end]
		for i, v := range buf {
			d[i] = f64ToF16(i64ToF64Odd(v))
		}
	case BF16:
		d := dst.BF16()[off:end]
		for i, v := range buf {
			d[i] = f64ToBF16(i64ToF64Odd(v))
		}
	case I8:
		wrap(dst.I8()[off:end], buf)
	case U8:
		wrap(dst.U8()[off:end], buf)
	case I32:
		wrap(dst.I32()[off:end], buf)
	case I64:
		copy(dst.I64()[off:end], buf)
	case Bool:
		d := dst.Data[off:end]
		for i, v := range buf {
			d[i] = b2u8(v != 0)
		}
	}
}

type integer interface{ int8 | uint8 | int32 | int64 }

func widenFloat(dst []float64, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = float64(x)
	}
}

func widenInt[T integer](dst []int64, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = int64(v)
	}
}

// wrap truncates each value to T's width (two's complement).
func wrap[T integer](dst []T, src []int64) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(v)
	}
}

// saturate truncates each value toward zero and clamps it to [lo, hi].
func saturate[T integer](dst []T, src []float64, lo, hi int64) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = T(floatToInt(x, lo, hi))
	}
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
