//go:build amd64 && !purego

package asm

// zip2AddAVX512 is the zip2Add primitive on zmm for n a multiple of 16:
// both rows plus b, interleaved by two VPERMT2PS.
//
//go:noescape
func zip2AddAVX512(y, a, c *float32, n int, b float32)
