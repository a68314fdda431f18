//go:build amd64 && !purego

package asm

// addStride2AVX2 and addStride2AVX512 are the addStride2 primitive
// (row_stride2_amd64.s): whole vectors of sources, then the row's last
// n mod 8 (16) one at a time.
//
//go:noescape
func addStride2AVX2(y *float32, ldd int, x *float32, lds, rows, n int)

//go:noescape
func addStride2AVX512(y *float32, ldd int, x *float32, lds, rows, n int)
