//go:build amd64 && !purego

package asm

// gemmCols12AVX512 and gemmCols6AVX2 are the colsKernels of the AVX-512
// (MR = 12) and AVX2 (MR = 6) GEMM variants: each step loads the tile's
// rows of A as one vector (through a mask: a panel's step is 48 or 24
// bytes) and adds it times each of the four B values, broadcast, into
// one sum a column. Each sum is the micro-kernel's, multiply-add for
// multiply-add in step order, so the columns are the same bits whichever
// kernel computed them (a pooled conv's tiles, row pairs, cut columns
// elsewhere than the plain conv's, and the two must agree bit for bit).
//
//go:noescape
func gemmCols12AVX512(k int, a, b, c *float32)

//go:noescape
func gemmCols6AVX2(k int, a, b, c *float32)
