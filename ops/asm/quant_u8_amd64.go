//go:build amd64 && !purego

package asm

import (
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// quantizeU8AVX512 is QuantizeU8's AVX-512 kernel (quant_u8_amd64.s).
//
//go:noescape
func quantizeU8AVX512(q *uint8, x *float32, n int, s, z float32)

// quantizeU8AVX2 is the AVX2 kernel for n a multiple of 8.
//
//go:noescape
func quantizeU8AVX2(q *uint8, x *float32, n int, s, z float32)

func init() {
	quantizeU8For[cpuid.AVX512] = quantizeU8AVX512
	quantizeU8For[cpuid.AVX2] = func(q *uint8, x *float32, n int, s, z float32) {
		n8 := n &^ 7
		if n8 > 0 {
			quantizeU8AVX2(q, x, n8, s, z)
		}
		if n8 < n {
			rest := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(x), 4*n8)), n-n8)
			quantizeU8Go(unsafe.Slice((*uint8)(unsafe.Add(unsafe.Pointer(q), n8)), n-n8), rest, s, uint8(z))
		}
	}
}
