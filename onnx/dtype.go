package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// ONNX TensorProto.DataType values.
const (
	typeFloat    = 1
	typeUint8    = 2
	typeInt8     = 3
	typeUint16   = 4
	typeInt16    = 5
	typeInt32    = 6
	typeInt64    = 7
	typeString   = 8
	typeBool     = 9
	typeFloat16  = 10
	typeDouble   = 11
	typeUint32   = 12
	typeUint64   = 13
	typeBFloat16 = 16
)

var onnxTypeNames = map[int32]string{
	0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
	7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64",
	14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ",
	19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1",
}

// TypeName is the ONNX name of a data type (FLOAT, INT64, ...).
func TypeName(t int32) string {
	if s, ok := onnxTypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type %d", t)
}

// DType maps an ONNX data type to kiln's; types kiln lacks (strings,
// unsigned 16-64 bit, complex, 8- and 4-bit floats) are an error.
func DType(t int32) (tensor.DType, error) {
	switch t {
	case typeFloat:
		return tensor.F32, nil
	case typeUint8:
		return tensor.U8, nil
	case typeInt8:
		return tensor.I8, nil
	case typeInt32:
		return tensor.I32, nil
	case typeInt64:
		return tensor.I64, nil
	case typeBool:
		return tensor.Bool, nil
	case typeFloat16:
		return tensor.F16, nil
	case typeDouble:
		return tensor.F64, nil
	case typeBFloat16:
		return tensor.BF16, nil
	}
	return 0, fmt.Errorf("data type %s is not supported by kiln", TypeName(t))
}
