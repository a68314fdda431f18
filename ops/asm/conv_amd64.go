//go:build amd64 && !purego

package asm

// axpyF32AVX2 does y[i] += a·x[i] for i < n with fused multiply-adds, the
// inner step of the direct (depthwise) convolution.
//
//go:noescape
func axpyF32AVX2(y, x *float32, n int, a float32)
