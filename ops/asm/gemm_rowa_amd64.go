//go:build amd64 && !purego

package asm

// gemmKernel6x16RowAAVX2 is gemmKernel6x16AVX2 reading A in place, six
// rows lda floats apart, instead of from a packed panel:
//
//	for i < 6, j < 16: t := sum over p < k of a[i*lda+p] * b[p*16+j]
//	c[i*ldc+j] = t  (flags&1 == 0)   or   c[i*ldc+j] += t  (flags&1 == 1)
//
// with each sum formed exactly as the packed kernel forms it (so the
// same bits), k >= 1, a reaching 5*lda+k floats, b k*16 floats and c
// 5*ldc+16 floats; the Go caller checks all of it. It ignores the
// prefetch flag. Broadcasts from six row streams cost the same loads as
// from one packed stream, so an A that every column panel reads once
// (the flash attention's probabilities) is not copied first.
//
//go:noescape
func gemmKernel6x16RowAAVX2(k int, a *float32, lda int, b, c *float32, ldc int, flags uint)
