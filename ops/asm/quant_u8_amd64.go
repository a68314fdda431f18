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

// dequantRowAVX512 is DequantRow's AVX-512 kernel (b nil: no bias).
//
//go:noescape
func dequantRowAVX512(y *float32, acc, ct, cz *int32, ra int32, sc, b *float32, n int)

// dequantRowAVX2 is DequantRow's AVX2 kernel for n a multiple of 8.
//
//go:noescape
func dequantRowAVX2(y *float32, acc, ct, cz *int32, ra int32, sc, b *float32, n int)

func init() {
	dequantRowFor[cpuid.AVX512] = dequantRowAVX512
	dequantRowFor[cpuid.AVX2] = func(y *float32, acc, ct, cz *int32, ra int32, sc, b *float32, n int) {
		n8 := n &^ 7
		if n8 > 0 {
			dequantRowAVX2(y, acc, ct, cz, ra, sc, b, n8)
		}
		if n8 < n {
			var bias []float32
			if b != nil {
				bias = unsafe.Slice(f32At(b, n8), n-n8)
			}
			dequantRowGo(unsafe.Slice(f32At(y, n8), n-n8), unsafe.Slice(i32At(acc, n8), n-n8), unsafe.Slice(i32At(ct, n8), n-n8),
				unsafe.Slice(i32At(cz, n8), n-n8), ra, unsafe.Slice(f32At(sc, n8), n-n8), bias)
		}
	}
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

// i32At is p advanced by i elements (f32At's int32 twin, conv_wino_kernels.go).
func i32At(p *int32, i int) *int32 { return (*int32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }
