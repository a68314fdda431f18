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

// winoIn16AVX512 and winoOut16AVX512 are the AVX-512 winoIn16Kernel
// and winoOut16Kernel: sixteen tiles a call, one a zmm lane, the patch
// columns dealt out with two-register permutes, the outputs interleaved
// back into rows by two more and stored, as the tiles are read, through
// opmasks.
//
//go:noescape
func winoIn16AVX512(src *float32, wp int, dst *float32, dstride int, acc *[16]float32)

//go:noescape
func winoOut16AVX512(src *float32, sstride int, y *float32, ldy int, bias float32, cols int)

func init() {
	// The AVX-512 GEMM variant takes the sixteen-tile transforms where a
	// row's tiles fill a panel (conv_wino_gemm.go), the AVX2 ones for the
	// rest: eight tiles a call keep the eight-tile rows of a 14-wide
	// output whole.
	winoFamily.add(&winoKernels{cpuid.AVX512, winoIn8AVX2, winoOut8AVX2, winoIn16AVX512, winoOut16AVX512},
		&winoKernels{cpuid.AVX2, winoIn8AVX2, winoOut8AVX2, nil, nil})
}
