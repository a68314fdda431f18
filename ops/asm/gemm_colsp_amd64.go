//go:build amd64 && !purego

package asm

// gemmColsPanels4AVX512 and gemmColsPanels8x1AVX512 are the AVX-512
// GEMM variant's colsPanelsKernels: four panels by four columns (sixteen
// sums) and eight panels by one column, each sum gemmCols12AVX512's,
// multiply-add for multiply-add in step order.
//
//go:noescape
func gemmColsPanels4AVX512(k int, a *float32, astride int, b, c *float32)

//go:noescape
func gemmColsPanels8x1AVX512(k int, a *float32, astride int, b, c *float32)
