//go:build amd64 && !purego

package asm

// gemmPanel6x16RowAAVX2 is gemmPanel6x16AVX2 reading A in place, tile
// t's six rows lda floats apart from row 6t, instead of from packed
// panels:
//
//	for t < tiles, i < 6, j < 16: s := sum over p < k of a[(6*t+i)*lda+p] * b[p*16+j]
//	c[(6*t+i)*ldc+j] = s  (flags&1 == 0)   or   c[(6*t+i)*ldc+j] += s  (flags&1 == 1)
//
// with each sum formed exactly as the packed kernel forms it (so the
// same bits), tiles >= 1, k >= 1, a reaching (6*tiles-1)*lda+k floats, b
// k*16 floats and c (6*tiles-1)*ldc+16 floats; the Go caller checks all
// of it. It ignores the prefetch flag. Broadcasts from six row streams
// cost the same loads as from one packed stream, so an A that every
// column panel reads once (the flash attention's probabilities) is not
// copied first.
//
//go:noescape
func gemmPanel6x16RowAAVX2(tiles, k int, a *float32, lda int, b, c *float32, ldc int, flags uint)

// gemmKernel6x16RowAAVX2 is one tile of gemmPanel6x16RowAAVX2.
func gemmKernel6x16RowAAVX2(k int, a *float32, lda int, b, c *float32, ldc int, flags uint) {
	gemmPanel6x16RowAAVX2(1, k, a, lda, b, c, ldc, flags)
}
