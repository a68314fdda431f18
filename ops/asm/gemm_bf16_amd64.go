//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// gemmPanelBF16AVX512 is the BF16 micro-kernel (AVX512_BF16) run over a
// column of tiles sharing one B panel. For t < tiles it computes
//
//	for i < 12, j < 16:
//		s := 0
//		for q < kp: s = bf16Dot2(s, a[(12*t+i)*lda+q], b[q*16+j])   (one VDPBF16PS lane)
//		c[(12*t+i)*ldc+j] = s          (flags&1 == 0)
//		c[(12*t+i)*ldc+j] += s         (flags&1 == 1)
//
// with tiles >= 1, kp >= 1, a reaching (12*tiles-1)*lda+kp words, b
// kp*16 words and c (12*tiles-1)*ldc+16 floats; the Go caller checks all
// of it. It ignores the prefetch flag.
//
// The float32 12×16 kernel's shape with pairs for steps: a zmm holds a
// B row of 16 columns × one pair, each of the twelve C rows is one
// accumulator, and each VDPBF16PS takes its row's A pair (a 32-bit word)
// by embedded broadcast from the converted rows, read in place (as
// gemmPanel12x16RowAAVX512 does): two steps of k per instruction where
// the float32 kernel's FMA does one.
//
//go:noescape
func gemmPanelBF16AVX512(tiles, kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, flags uint)

// bf16ConvertRowsAVX512 converts rows of float32 to bf16 pairs with
// VCVTNE2PS2BF16 (nearest even, denormals to zero, NaN quiet):
//
//	for r < rows, q < 16*n32: dst[r*ldd+q] = bf16FromF32(src[r*lds+2q]) | bf16FromF32(src[r*lds+2q+1])<<16
//
// rows >= 1, n32 >= 1, src reaching (rows-1)*lds+32*n32 floats, dst
// (rows-1)*ldd+16*n32 words; the Go caller checks all of it.
//
//go:noescape
func bf16ConvertRowsAVX512(rows, n32 int, src *float32, lds int, dst *uint32, ldd int)

// gemvBF16AVX512 is the one-row BF16 kernel (see bf16GemvKernel): eight
// panels at a time, the A pair broadcast into a register once per pair
// and eight B rows loaded, where the 12-row kernel would spend twelve
// dot products on each B row for one useful row. Each lane's sum is
// formed as the panel kernel forms it: the same bits.
//
//go:noescape
func gemvBF16AVX512(kp, panels int, a *uint32, b *uint32, pstride int, c *float32, flags uint)

func init() {
	gemmBF16Family.add(&GemmBF16Variant{Name: "avx512bf16", Feature: cpuid.AVX512, panel: gemmPanelBF16AVX512, gemv: gemvBF16AVX512, convert: bf16ConvertRowsAVX512})
}
