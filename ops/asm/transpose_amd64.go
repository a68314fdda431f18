//go:build amd64 && !purego

package asm

// transpose8AVX2 transposes a rows×cols block of 32-bit words (rows and
// cols multiples of 8, row strides lds and ldd in elements):
//
//	dst[j·ldd+i] = src[i·lds+j]   for i < rows, j < cols
//
// eight rows at a time: each 8×8 tile is loaded into eight ymm registers,
// transposed in registers (unpack, shuffle, lane permute) and stored as
// eight rows of dst.
//
//go:noescape
func transpose8AVX2(dst *uint32, ldd int, src *uint32, lds int, rows, cols int)
