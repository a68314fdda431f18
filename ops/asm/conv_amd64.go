//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpu"

// axpyF32AVX2 does y[i] += a·x[i] for i < n with fused multiply-adds, the
// inner step of the direct (depthwise) convolution.
//
//go:noescape
func axpyF32AVX2(y, x *float32, n int, a float32)

// convTaps16S1AVX2 and convTaps16S2AVX2 are the AVX2 convTapsKernels
// (conv_pack.go) for strides 1 and 2. Stride 2 loads 31 floats as four
// vectors (the last one float back, so nothing past the sixteenth cell
// is read) and keeps the even ones with shuffles.
//
//go:noescape
func convTaps16S1AVX2(dst, src *float32, off *int, n int)

//go:noescape
func convTaps16S2AVX2(dst, src *float32, off *int, n int)

func init() {
	convTapsAsm = append(convTapsAsm, convTaps{cpu.AVX2, convTaps16S1AVX2, convTaps16S2AVX2})
}
