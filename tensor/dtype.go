package tensor

import "fmt"

// DType is the element type of a tensor.
type DType uint8

// The element types kiln knows. Invalid is the zero value so that an unset
// dtype is caught rather than taken for F32.
const (
	Invalid DType = iota
	F32
	F16
	BF16
	F64
	I8
	U8
	I32
	I64
	Bool
	numDTypes
)

var dtypeInfo = [numDTypes]struct {
	name string
	size int
}{
	Invalid: {"invalid", 0},
	F32:     {"f32", 4},
	F16:     {"f16", 2},
	BF16:    {"bf16", 2},
	F64:     {"f64", 8},
	I8:      {"i8", 1},
	U8:      {"u8", 1},
	I32:     {"i32", 4},
	I64:     {"i64", 8},
	Bool:    {"bool", 1},
}

// DTypes lists every valid dtype, in declaration order.
func DTypes() []DType { return []DType{F32, F16, BF16, F64, I8, U8, I32, I64, Bool} }

// Valid reports whether d is one of kiln's dtypes.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

// Size is the number of bytes of one element (0 for an invalid dtype).
func (d DType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfo[d].size
}

// String is the short lower-case name: f32, bf16, i64, bool, ...
func (d DType) String() string {
	if d < numDTypes {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// IsInt reports whether d is an integer type (Bool is not).
func (d DType) IsInt() bool { return d == I8 || d == U8 || d == I32 || d == I64 }

// ParseDType maps a name produced by String back to its dtype.
func ParseDType(name string) (DType, error) {
	for _, d := range DTypes() {
		if dtypeInfo[d].name == name {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("tensor: unknown dtype %q", name)
}
