//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// gemmPanelU8S8VNNI512 is the AVX512_VNNI panel kernel (see
// i8PanelKernel) with 8×32 tiles: two panels' quads in two zmm registers
// (64 bytes each: 16 columns × 4 steps), each of the eight rows' A quad
// broadcast into a register (VPDPBUSD reads its unsigned bytes from the
// first source, so A cannot be the broadcast memory operand) and two
// VPDPBUSD a row: 16 dot products of 64 multiply-adds each against 10
// loads a quad, 16 accumulators to cover VPDPBUSD's latency. A bytes,
// lda bytes apart; kq a multiple of 4.
//
//go:noescape
func gemmPanelU8S8VNNI512(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)

// gemvU8S8VNNI512 is the AVX512_VNNI one-row kernel (see i8GemvKernel):
// eight panels at a time, the panels' quads VPDPBUSD's signed memory
// operand, the A quad broadcast once per quad.
//
//go:noescape
func gemvU8S8VNNI512(kq, panels int, a *byte, b *int8, pstride int, c *int32, flags uint)

// gemmPanelU8S8AVXVNNI is the AVX-VNNI panel kernel (VEX VPDPBUSD on
// ymm) with 6×16 tiles: 12 accumulators, the panel's quad in two
// registers, two A broadcast registers: all sixteen ymm.
//
//go:noescape
func gemmPanelU8S8AVXVNNI(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)

// gemmPanelU8S8AVX2 is the AVX2 panel kernel with 2×16 tiles, A packed
// as zero-extended words (lda bytes apart, 8 bytes a quad): the panel's
// quad sign-extended into four registers once per quad and used by both
// rows, VPMADDWD + VPADDD per row and group (exact, unlike VPMADDUBSW;
// see gemm_i8.go).
//
//go:noescape
func gemmPanelU8S8AVX2(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)

func init() {
	if cpuid.HasAVX512VNNI() {
		gemmI8Family.add(&GemmU8S8Variant{Name: "avx512vnni", Feature: cpuid.AVX512, mr: 8, nr: 32, panel: gemmPanelU8S8VNNI512, gemv: gemvU8S8VNNI512})
	}
	if cpuid.HasAVXVNNI() {
		gemmI8Family.add(&GemmU8S8Variant{Name: "avxvnni", Feature: cpuid.AVX2, mr: 6, nr: 16, panel: gemmPanelU8S8AVXVNNI})
	}
	gemmI8Family.add(&GemmU8S8Variant{Name: "avx2", Feature: cpuid.AVX2, mr: 2, nr: 16, aWide: true, panel: gemmPanelU8S8AVX2})
}
