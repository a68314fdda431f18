//go:build amd64 && !purego

package asm

// gemmKernel4x16AVX2 is the four-row companion of gemmKernel6x16AVX2
// (same arguments, flags and packed A layout: six floats per step, of
// which it reads the first four). It computes
//
//	for i < 4, j < 16: t := sum over p < k of a[p*6+i] * b[p*16+j]
//	c[i*ldc+j] = t  (flags&1 == 0)   or   c[i*ldc+j] += t  (flags&1 == 1)
//
// with each sum formed exactly as the 6×16 kernel forms it, so a tile's
// rows are the same bits whichever kernel wrote them. The last row panel
// of an M ≡ 4 (mod 6) product (M = 16: 6+6+4) runs it instead of the
// 6-row kernel into scratch, which does 50% more FMAs and then copies.
//
//go:noescape
func gemmKernel4x16AVX2(k int, a, b, c *float32, ldc int, flags uint)
