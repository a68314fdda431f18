//go:build !purego

package asm

// transpose8NEON transposes a rows×cols block of 32-bit words (rows and
// cols multiples of 8, row strides lds and ldd in elements):
//
//	dst[j·ldd+i] = src[i·lds+j]   for i < rows, j < cols
//
// eight rows at a time: each 8×8 tile is loaded into sixteen registers,
// transposed as four 4×4 quarters (TRN1/TRN2 on words, then on
// doublewords) and stored as eight rows of dst.
//
//go:noescape
func transpose8NEON(dst *uint32, ldd int, src *uint32, lds int, rows, cols int)
