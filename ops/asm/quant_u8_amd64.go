//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// quantizeU8AVX512 is QuantizeU8's AVX-512 kernel (quant_u8_amd64.s).
//
//go:noescape
func quantizeU8AVX512(q *uint8, x *float32, n int, s, z float32)

func init() { quantizeU8For[cpuid.AVX512] = quantizeU8AVX512 }
