package msl

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kilnml/kiln/tensor"
)

// Storage is the MSL element type a dtype is stored as in a buffer.
// BF16 and Bool are stored as their bits (ushort, uchar) so the kernels
// need no MSL 3.1 bfloat and no assumption about bool's layout.
func Storage(dt tensor.DType) (string, error) {
	switch dt {
	case tensor.F32:
		return "float", nil
	case tensor.F16:
		return "half", nil
	case tensor.BF16:
		return "ushort", nil
	case tensor.I32:
		return "int", nil
	case tensor.I64:
		return "long", nil
	case tensor.I8:
		return "char", nil
	case tensor.U8, tensor.Bool:
		return "uchar", nil
	}
	return "", fmt.Errorf("msl: dtype %v is not supported on Metal (no F64 on Apple GPUs)", dt)
}

// compute is the type values of dt are computed in: float for every
// float dtype (half and bfloat16 widen), the natural type otherwise.
func compute(dt tensor.DType) string {
	switch dt {
	case tensor.F32, tensor.F16, tensor.BF16:
		return "float"
	case tensor.I64:
		return "long"
	case tensor.I8, tensor.I32:
		return "int"
	case tensor.U8:
		return "uint"
	case tensor.Bool:
		return "bool"
	}
	return "float"
}

// isFloat reports whether dt computes in float.
func isFloat(dt tensor.DType) bool { return dt == tensor.F32 || dt == tensor.F16 || dt == tensor.BF16 }

// load converts a stored element (an lvalue expression) to dt's compute type.
func load(dt tensor.DType, x string) string {
	switch dt {
	case tensor.F16:
		return "float(" + x + ")"
	case tensor.BF16:
		return "kiln_bf16_load(" + x + ")"
	case tensor.Bool:
		return "(" + x + " != 0)"
	case tensor.I8:
		return "int(" + x + ")"
	case tensor.U8:
		return "uint(" + x + ")"
	}
	return x
}

// store converts a compute-type value to dt's storage type.
func store(dt tensor.DType, v string) string {
	switch dt {
	case tensor.F16:
		return "half(" + v + ")"
	case tensor.BF16:
		return "kiln_bf16_store(" + v + ")"
	case tensor.Bool:
		return "uchar((" + v + ") ? 1 : 0)"
	}
	s, _ := Storage(dt)
	return s + "(" + v + ")"
}

// flit writes a float32 constant as an MSL float literal.
func flit(f float32) string {
	switch {
	case math.IsInf(float64(f), 1):
		return "INFINITY"
	case math.IsInf(float64(f), -1):
		return "(-INFINITY)"
	case f != f:
		return "NAN"
	}
	s := strconv.FormatFloat(float64(f), 'e', -1, 32)
	return "(" + s + "f)"
}
