//go:build amd64 && !purego

#include "textflag.h"

// The blendTaps primitive (see BlendTaps): per output row, per block of
// 16 outputs, the 32 sources at the block's base of both source rows
// (masked past the row's end) blended, v = wy0·s0 + wy1·s1, then each
// output's two taps picked from v with a two-register permute and
// weighed: LerpTaps's block on the blend, no row of v stored.
//
// Registers: DI the output row, SI and DX its source rows, CX the row,
// AX the block, BX its first output, R8..R13 the layout (base, mask,
// r0, r1) and tap weights, R14 scratch (the block's base).

// func blendTapsAVX512(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, base *int32, mask *uint32, r0, r1 *int32, tw0, tw1 *float32, blocks int)
TEXT ·blendTapsAVX512(SB), NOSPLIT, $0-128
	MOVQ y+0(FP), DI
	MOVQ base+72(FP), R8
	MOVQ mask+80(FP), R9
	MOVQ r0+88(FP), R10
	MOVQ r1+96(FP), R11
	MOVQ tw0+104(FP), R12
	MOVQ tw1+112(FP), R13
	XORQ CX, CX
row:
	MOVQ         i0+32(FP), R14
	MOVLQSX      (R14)(CX*4), SI
	IMULQ        w+16(FP), SI
	SHLQ         $2, SI
	ADDQ         x+8(FP), SI
	MOVQ         i1+40(FP), R14
	MOVLQSX      (R14)(CX*4), DX
	IMULQ        w+16(FP), DX
	SHLQ         $2, DX
	ADDQ         x+8(FP), DX
	MOVQ         wy0+48(FP), R14
	VBROADCASTSS (R14)(CX*4), Z26
	MOVQ         wy1+56(FP), R14
	VBROADCASTSS (R14)(CX*4), Z27
	XORQ         AX, AX
	XORQ         BX, BX
block:
	MOVLQSX   (R8)(AX*4), R14      // the block's first source
	CMPL      (R9)(AX*4), $-1
	JNE       part                 // not all 32 sources exist (the row's end)
	VMOVUPS   (SI)(R14*4), Z0      // unmasked where all exist: masked loads cost more
	VMOVUPS   64(SI)(R14*4), Z1
	VMOVUPS   (DX)(R14*4), Z2
	VMOVUPS   64(DX)(R14*4), Z3
	JMP       blend
part:
	KMOVW     (R9)(AX*4), K1       // sources base .. base+15 that exist
	KMOVW     2(R9)(AX*4), K2      // and base+16 .. base+31
	VMOVUPS.Z (SI)(R14*4), K1, Z0
	VMOVUPS.Z 64(SI)(R14*4), K2, Z1
	VMOVUPS.Z (DX)(R14*4), K1, Z2
	VMOVUPS.Z 64(DX)(R14*4), K2, Z3
blend:
	VMULPS    Z26, Z0, Z0
	VMULPS    Z27, Z2, Z2
	VADDPS    Z2, Z0, Z0           // v, sources base .. base+15
	VMULPS    Z26, Z1, Z1
	VMULPS    Z27, Z3, Z3
	VADDPS    Z3, Z1, Z1           // and base+16 .. base+31
	VMOVDQU32 (R10)(BX*4), Z4      // first taps, relative to base
	VMOVDQU32 (R11)(BX*4), Z5      // second taps
	VPERMI2PS Z1, Z0, Z4
	VPERMI2PS Z1, Z0, Z5
	VMULPS    (R12)(BX*4), Z4, Z4  // rounded products, then their sum
	VMULPS    (R13)(BX*4), Z5, Z5
	VADDPS    Z5, Z4, Z4
	VMOVUPS   Z4, (DI)(BX*4)
	ADDQ      $16, BX
	INCQ      AX
	CMPQ      AX, blocks+120(FP)
	JLT       block
	MOVQ      ow+24(FP), R14
	LEAQ      (DI)(R14*4), DI
	INCQ      CX
	CMPQ      CX, rows+64(FP)
	JLT       row
	VZEROUPPER
	RET

// blendTaps16AVX512 is blendTapsAVX512 for taps whose every block spans
// at most 16 sources (upsampling): one vector of each source row, a
// one-register permute.
// func blendTaps16AVX512(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, base *int32, mask *uint32, r0, r1 *int32, tw0, tw1 *float32, blocks int)
TEXT ·blendTaps16AVX512(SB), NOSPLIT, $0-128
	MOVQ y+0(FP), DI
	MOVQ base+72(FP), R8
	MOVQ mask+80(FP), R9
	MOVQ r0+88(FP), R10
	MOVQ r1+96(FP), R11
	MOVQ tw0+104(FP), R12
	MOVQ tw1+112(FP), R13
	XORQ CX, CX
row:
	MOVQ         i0+32(FP), R14
	MOVLQSX      (R14)(CX*4), SI
	IMULQ        w+16(FP), SI
	SHLQ         $2, SI
	ADDQ         x+8(FP), SI
	MOVQ         i1+40(FP), R14
	MOVLQSX      (R14)(CX*4), DX
	IMULQ        w+16(FP), DX
	SHLQ         $2, DX
	ADDQ         x+8(FP), DX
	MOVQ         wy0+48(FP), R14
	VBROADCASTSS (R14)(CX*4), Z26
	MOVQ         wy1+56(FP), R14
	VBROADCASTSS (R14)(CX*4), Z27
	XORQ         AX, AX
	XORQ         BX, BX
block:
	MOVLQSX   (R8)(AX*4), R14      // the block's first source
	KMOVW     (R9)(AX*4), K1       // sources base .. base+15 that exist
	KORTESTW  K1, K1
	JCC       part                 // not all sixteen (the row's end)
	VMOVUPS   (SI)(R14*4), Z0      // unmasked where all exist: masked loads cost more
	VMOVUPS   (DX)(R14*4), Z2
	JMP       blend
part:
	VMOVUPS.Z (SI)(R14*4), K1, Z0
	VMOVUPS.Z (DX)(R14*4), K1, Z2
blend:
	VMULPS    Z26, Z0, Z0
	VMULPS    Z27, Z2, Z2
	VADDPS    Z2, Z0, Z0           // v, sources base .. base+15
	VMOVDQU32 (R10)(BX*4), Z4      // first taps, relative to base
	VMOVDQU32 (R11)(BX*4), Z5      // second taps
	VPERMPS   Z0, Z4, Z4
	VPERMPS   Z0, Z5, Z5
	VMULPS    (R12)(BX*4), Z4, Z4  // rounded products, then their sum
	VMULPS    (R13)(BX*4), Z5, Z5
	VADDPS    Z5, Z4, Z4
	VMOVUPS   Z4, (DI)(BX*4)
	ADDQ      $16, BX
	INCQ      AX
	CMPQ      AX, blocks+120(FP)
	JLT       block
	MOVQ      ow+24(FP), R14
	LEAQ      (DI)(R14*4), DI
	INCQ      CX
	CMPQ      CX, rows+64(FP)
	JLT       row
	VZEROUPPER
	RET
