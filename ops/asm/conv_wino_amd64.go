//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// winoIn8AVX2 and winoOut8AVX2 are the AVX2 winoInKernel and
// winoOutKernel (conv_wino_kernels.go): one tile per lane, the patch
// columns dealt out of contiguous loads with shuffles, the outputs
// interleaved back into rows.
//
//go:noescape
func winoIn8AVX2(src *float32, wp int, dst *float32, dstride int, acc *[8]float32)

//go:noescape
func winoOut8AVX2(src *float32, sstride int, y *float32, ldy int, bias float32)

func init() {
	// The AVX-512 GEMM variant takes the AVX2 transforms: eight tiles a
	// call keep the eight-tile rows of a 14-wide output whole, and the
	// transforms are a small share of the run beside the products
	// (conv_wino_gemm.go).
	winoFamily.add(&winoKernels{cpuid.AVX512, winoIn8AVX2, winoOut8AVX2}, &winoKernels{cpuid.AVX2, winoIn8AVX2, winoOut8AVX2})
}
