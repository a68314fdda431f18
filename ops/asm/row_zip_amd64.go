//go:build amd64 && !purego

package asm

// zip2AddAVX512 is the zip2Add primitive on zmm for n a multiple of 16:
// both rows plus b, interleaved by two VPERMT2PS.
//
//go:noescape
func zip2AddAVX512(y, a, c *float32, n int, b float32)

// zipSumAVX512 is the zipSum primitive on zmm: sixteen pairs of outputs
// a step, the even and odd sums interleaved by two VPERMI2PS, the last
// w mod 32 outputs of each row as one masked step.
//
//go:noescape
func zipSumAVX512(y *float32, ldd int, x *float32, offs *int, ne, nt, lds, rows, w int, b float32)

// zipSum16AVX2 is the zipSum16 primitive on ymm: eight pairs of outputs
// a step, interleaved by VUNPCKLPS/VUNPCKHPS and two VPERM2F128.
//
//go:noescape
func zipSum16AVX2(y *float32, ldd int, x *float32, offs *int, ne, nt, lds, rows, w int, b float32)
