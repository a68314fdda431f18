package testmodels

import (
	"encoding/base64"
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// JSONTensor is a tensor as the reference generator writes it: the dtype's
// short name (tensor.DType.String), the dims, and the elements as base64 of
// little-endian row-major bytes, so NaN, Inf and f16/bf16 bit patterns
// survive exactly.
type JSONTensor struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	B64   string `json:"b64"`
}

// Decode turns the JSON form into a host tensor, checking that the byte
// count matches dtype and shape.
func (j JSONTensor) Decode() (tensor.Tensor, error) {
	dt, err := tensor.ParseDType(j.DType)
	if err != nil {
		return tensor.Tensor{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(j.B64)
	if err != nil {
		return tensor.Tensor{}, fmt.Errorf("testmodels: %s%v: %w", j.DType, j.Shape, err)
	}
	// Copy into a fresh buffer so the typed views are aligned.
	t, err := tensor.Make(dt, tensor.Shape(append([]int{}, j.Shape...)))
	if err != nil {
		return tensor.Tensor{}, err
	}
	if len(raw) != len(t.Data) {
		return tensor.Tensor{}, fmt.Errorf("testmodels: %v needs %d bytes, data has %d", t, len(t.Data), len(raw))
	}
	copy(t.Data, raw)
	return t, nil
}

// EncodeTensor is the inverse of Decode.
func EncodeTensor(t tensor.Tensor) JSONTensor {
	return JSONTensor{DType: t.DType.String(), Shape: append([]int{}, t.Shape...), B64: base64.StdEncoding.EncodeToString(t.Data)}
}
