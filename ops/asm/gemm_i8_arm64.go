//go:build !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// gemmPanelU8S8NEON is the arm64 panel kernel (see i8PanelKernel) with
// 4×16 tiles on SDOT (Armv8.2 dot product), which multiplies signed
// bytes by signed bytes: A is packed as a-128 (aShift) and the driver
// adds 128·Σ_p B[p][j] afterwards (see gemm_i8.go). 16 accumulators
// (four rows × four groups of four columns), four registers holding the
// panel's quad and four holding four quads of each row's A, used by
// element: 16 SDOTs (256 multiply-adds) against 5 loads a quad. USDOT
// (u8×s8 directly) needs FEAT_I8MM, which fewer cores have.
//
//go:noescape
func gemmPanelU8S8NEON(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)

func init() {
	if cpuid.HasDotProd() {
		gemmI8Family.add(&GemmU8S8Variant{Name: "neondot", Feature: cpuid.NEON, mr: 4, nr: 16, aShift: true, panel: gemmPanelU8S8NEON})
	}
}
