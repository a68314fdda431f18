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

// blendTapsWinAVX512 is the blendTapsWin primitive (see blendTapsWinGo):
// narrow taps in the window layout, two output rows at a time, so each
// block's record (taps and weights) is loaded once for both. Per row,
// two registers hold the blends of the aligned source vectors at cur and
// cur+16 (Z0, Z1 for the first row, Z2, Z3 for the second); a block
// whose window starts at cur+16 shifts them and blends one vector more,
// one elsewhere blends two, so at 2× each source is blended once per row
// rather than once per block that reads it. The vector that reaches past
// the row's end loads masked (K1: the w mod 16 sources that exist), one
// wholly past it is zero.
//
// The two rows of a pair are r and r + ⌈rows/2⌉, not neighbours: stores
// alternating between two rows of one page (rows of 1 KiB at 2× from
// 128) measured 29 against 42 GB/s for one row at a time (1×64×128×128
// to 256×256, one thread), where each row's store stream keeps to its
// own pages and the pair runs at 45; in cache the pair runs 76 against
// 53. A row left over (odd rows) runs as both rows of its pair.
//
// Registers: DI and R8 the two output rows, SI, DX and R11, R12 their
// source rows, CX the pair's first row, BX the block's byte offset in an
// output row (its record is at R10 + 4·BX), R13 the rows' end, R9 cur,
// AX and R14 scratch.
// func blendTapsWinAVX512(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, win *uint32, blocks int)
TEXT ·blendTapsWinAVX512(SB), NOSPLIT, $0-88
	MOVQ  w+16(FP), CX
	ANDL  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	MOVQ  win+72(FP), R10
	MOVQ  blocks+80(FP), R13
	SHLQ  $6, R13
	XORQ  CX, CX
pair:
	MOVQ  CX, AX
	IMULQ ow+24(FP), AX
	MOVQ  y+0(FP), DI
	LEAQ  (DI)(AX*4), DI
	MOVQ  rows+64(FP), BX
	INCQ  BX
	SHRQ  $1, BX
	ADDQ  CX, BX                   // the second row, ⌈rows/2⌉ on
	CMPQ  BX, rows+64(FP)
	JLT   two
	MOVQ  CX, BX                   // none (odd rows): the first again
two:
	MOVQ         BX, AX
	IMULQ        ow+24(FP), AX
	MOVQ         y+0(FP), R8
	LEAQ         (R8)(AX*4), R8
	MOVQ         i0+32(FP), R14
	MOVLQSX      (R14)(CX*4), SI
	MOVLQSX      (R14)(BX*4), R11
	MOVQ         i1+40(FP), R14
	MOVLQSX      (R14)(CX*4), DX
	MOVLQSX      (R14)(BX*4), R12
	MOVQ         w+16(FP), AX
	IMULQ        AX, SI
	IMULQ        AX, DX
	IMULQ        AX, R11
	IMULQ        AX, R12
	MOVQ         x+8(FP), AX
	LEAQ         (AX)(SI*4), SI
	LEAQ         (AX)(DX*4), DX
	LEAQ         (AX)(R11*4), R11
	LEAQ         (AX)(R12*4), R12
	MOVQ         wy0+48(FP), R14
	VBROADCASTSS (R14)(CX*4), Z26
	VBROADCASTSS (R14)(BX*4), Z28
	MOVQ         wy1+56(FP), R14
	VBROADCASTSS (R14)(CX*4), Z27
	VBROADCASTSS (R14)(BX*4), Z29
	INCQ         CX
	MOVQ         $-32, R9          // no vector blended yet
	XORQ         BX, BX
block:
	MOVLQSX 192(R10)(BX*4), R14    // the block's window start
	CMPQ    R14, R9
	JEQ     perm                   // both vectors kept
	SUBQ    $16, R14
	CMPQ    R14, R9
	JEQ     adv                    // one kept
	SUBQ    $16, R14
	MOVQ    R14, R9                // none: blend two
adv:
	VMOVAPS Z1, Z0
	VMOVAPS Z3, Z2
	ADDQ    $16, R9
	LEAQ    32(R9), AX             // the end of the vector at cur+16
	CMPQ    AX, w+16(FP)
	JGT     part
	VMULPS  -64(SI)(AX*4), Z26, Z1
	VMULPS  -64(DX)(AX*4), Z27, Z5
	VADDPS  Z5, Z1, Z1
	VMULPS  -64(R11)(AX*4), Z28, Z3
	VMULPS  -64(R12)(AX*4), Z29, Z5
	VADDPS  Z5, Z3, Z3
	JMP     next
part:
	SUBQ      $16, AX              // its start
	CMPQ      AX, w+16(FP)
	JGE       zero
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	VMOVUPS.Z (DX)(AX*4), K1, Z5
	VMULPS    Z26, Z1, Z1
	VMULPS    Z27, Z5, Z5
	VADDPS    Z5, Z1, Z1
	VMOVUPS.Z (R11)(AX*4), K1, Z3
	VMOVUPS.Z (R12)(AX*4), K1, Z5
	VMULPS    Z28, Z3, Z3
	VMULPS    Z29, Z5, Z5
	VADDPS    Z5, Z3, Z3
	JMP       next
zero:
	VPXORD Z1, Z1, Z1
	VPXORD Z3, Z3, Z3
next:
	CMPL R9, 192(R10)(BX*4)
	JLT  adv
perm:
	VMOVDQU32 (R10)(BX*4), Z4      // first taps | second taps<<16
	VPSRLD    $16, Z4, Z5
	VMOVDQA32 Z4, Z6
	VMOVDQA32 Z5, Z7
	VPERMI2PS Z1, Z0, Z4
	VPERMI2PS Z1, Z0, Z5
	VPERMI2PS Z3, Z2, Z6
	VPERMI2PS Z3, Z2, Z7
	VMOVUPS   64(R10)(BX*4), Z8    // the weights
	VMOVUPS   128(R10)(BX*4), Z9
	VMULPS    Z8, Z4, Z4           // rounded products, then their sum
	VMULPS    Z9, Z5, Z5
	VADDPS    Z5, Z4, Z4
	VMULPS    Z8, Z6, Z6
	VMULPS    Z9, Z7, Z7
	VADDPS    Z7, Z6, Z6
	VMOVUPS   Z4, (DI)(BX*1)
	VMOVUPS   Z6, (R8)(BX*1)
	ADDQ      $64, BX
	CMPQ      BX, R13
	JLT       block
	MOVQ      rows+64(FP), AX
	INCQ      AX
	SHRQ      $1, AX
	CMPQ      CX, AX
	JLT       pair
	VZEROUPPER
	RET

// blendTapsWin8AVX2 is blendTapsWinAVX512 on ymm, one row at a time:
// blocks of 8 outputs (Taps.win8), Y0 and Y1 the blends of the aligned
// vectors of 8 sources at cur and cur+8. AVX2 has no two-register
// permute: each tap is picked from both (VPERMPS reads an index's low
// three bits) and the two chosen between on its bit 3, moved to the
// sign. The vector that reaches past the row's end loads under Y15
// (VMASKMOVPS: the w mod 8 sources that exist; the others are not read),
// one wholly past it is zero.
//
// Registers: DI the output row, SI and DX its source rows, CX the row,
// BX the block's byte offset in the output row (its record is at R10 +
// 4·BX), R13 the row's end, R9 cur, AX and R14 scratch.
// func blendTapsWin8AVX2(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, win *uint32, blocks int)
TEXT ·blendTapsWin8AVX2(SB), NOSPLIT, $0-88
	MOVQ    w+16(FP), CX
	ANDQ    $7, CX
	NEGQ    CX
	LEAQ    ·rowTailMask+32(SB), AX
	VMOVDQU (AX)(CX*4), Y15
	MOVQ    y+0(FP), DI
	MOVQ    win+72(FP), R10
	MOVQ    blocks+80(FP), R13
	SHLQ    $5, R13
	XORQ    CX, CX
row:
	MOVQ         i0+32(FP), R14
	MOVLQSX      (R14)(CX*4), SI
	MOVQ         i1+40(FP), R14
	MOVLQSX      (R14)(CX*4), DX
	MOVQ         w+16(FP), AX
	IMULQ        AX, SI
	IMULQ        AX, DX
	MOVQ         x+8(FP), AX
	LEAQ         (AX)(SI*4), SI
	LEAQ         (AX)(DX*4), DX
	MOVQ         wy0+48(FP), R14
	VBROADCASTSS (R14)(CX*4), Y13
	MOVQ         wy1+56(FP), R14
	VBROADCASTSS (R14)(CX*4), Y14
	MOVQ         $-16, R9          // no vector blended yet
	XORQ         BX, BX
block:
	MOVLQSX 96(R10)(BX*4), R14     // the block's window start
	CMPQ    R14, R9
	JEQ     perm                   // both vectors kept
	SUBQ    $8, R14
	CMPQ    R14, R9
	JEQ     adv                    // one kept
	SUBQ    $8, R14
	MOVQ    R14, R9                // none: blend two
adv:
	VMOVAPS Y1, Y0
	ADDQ    $8, R9
	LEAQ    16(R9), AX             // the end of the vector at cur+8
	CMPQ    AX, w+16(FP)
	JGT     part
	VMULPS  -32(SI)(AX*4), Y13, Y1
	VMULPS  -32(DX)(AX*4), Y14, Y5
	VADDPS  Y5, Y1, Y1
	JMP     next
part:
	SUBQ       $8, AX              // its start
	CMPQ       AX, w+16(FP)
	JGE        zero
	VMASKMOVPS (SI)(AX*4), Y15, Y1
	VMASKMOVPS (DX)(AX*4), Y15, Y5
	VMULPS     Y13, Y1, Y1
	VMULPS     Y14, Y5, Y5
	VADDPS     Y5, Y1, Y1
	JMP        next
zero:
	VXORPS Y1, Y1, Y1
next:
	CMPL R9, 96(R10)(BX*4)
	JLT  adv
perm:
	VMOVDQU   (R10)(BX*4), Y4      // first taps | second taps<<16
	VPSRLD    $16, Y4, Y5
	VPERMPS   Y0, Y4, Y6
	VPERMPS   Y1, Y4, Y7
	VPSLLD    $28, Y4, Y4          // bit 3: from the vector at cur+8
	VBLENDVPS Y4, Y7, Y6, Y6
	VPERMPS   Y0, Y5, Y8
	VPERMPS   Y1, Y5, Y9
	VPSLLD    $28, Y5, Y5
	VBLENDVPS Y5, Y9, Y8, Y8
	VMULPS    32(R10)(BX*4), Y6, Y6  // rounded products, then their sum
	VMULPS    64(R10)(BX*4), Y8, Y8
	VADDPS    Y8, Y6, Y6
	VMOVUPS   Y6, (DI)(BX*1)
	ADDQ      $32, BX
	CMPQ      BX, R13
	JLT       block
	MOVQ      ow+24(FP), R14
	LEAQ      (DI)(R14*4), DI
	INCQ      CX
	CMPQ      CX, rows+64(FP)
	JLT       row
	VZEROUPPER
	RET
