//go:build amd64 && !purego

#include "textflag.h"

// The int8 GEMM kernels (u8 × s8 → int32); see gemm_i8.go for the
// layouts and the exactness argument, gemm_i8_amd64.go for the contracts.
// Go's assembler knows VPDPBUSD only in its EVEX (AVX-512) form; the VEX
// form of AVX-VNNI is spelled as BYTEs with the GNU (AT&T) disassembly in
// a comment, which TestBF16Encodings checks against objdump. Operand
// order: VPDPBUSD's first source holds the unsigned bytes (A, broadcast
// into a register), the second the signed ones (B), so A cannot come
// from a broadcast memory operand.

// ---------------------------------------------------------------------
// Repeated bodies (written by a script from these patterns, kept here
// expanded so the encodings sit next to their disassembly).
//
// QUAD512(aoff, boff): one quad of the 8×32 AVX512_VNNI tile: B's two
// panels at boff(DI) and boff(DI)(R13) into Z0, Z1; for rows r = 0..7 the
// A quad at aoff plus row r's address (SI, R10 = row 3, R11 = row 6, plus
// 0-2 times BX) broadcast into Z2/Z3 and two VPDPBUSD into Z(16+2r),
// Z(17+2r).
//
// QUADVNNI(aoff, boff): one quad of the 6×16 AVX-VNNI tile: B in Y0
// (columns 0-7) and Y1 (8-15); rows 0-5 (SI, R10 = row 3) broadcast into
// Y2/Y3, accumulators Y(4+2r), Y(5+2r).
//
// QUADAVX2(aoff, boff): one quad of the 2×16 AVX2 tile: A's quads are
// four zero-extended words (8 bytes), broadcast as a qword into Y0 (row
// 0) and Y1 (row 1); B's 16 columns are four groups of four columns ×
// four steps, each sign-extended to words into Y2-Y5 (VPMOVSXBW); each
// VPMADDWD leaves, per column of the group, two lanes: steps 0-1 and
// steps 2-3. Accumulators Y(6+4r+g); Y14, Y15 are the products.
// ---------------------------------------------------------------------

#define QUAD512(aoff, boff) \
	VMOVDQU32 boff(DI), Z0; \
	VMOVDQU32 boff(DI)(R13*1), Z1; \
	VPBROADCASTD aoff(SI), Z2; \
	VPDPBUSD Z0, Z2, Z16; \
	VPDPBUSD Z1, Z2, Z17; \
	VPBROADCASTD aoff(SI)(BX*1), Z3; \
	VPDPBUSD Z0, Z3, Z18; \
	VPDPBUSD Z1, Z3, Z19; \
	VPBROADCASTD aoff(SI)(BX*2), Z2; \
	VPDPBUSD Z0, Z2, Z20; \
	VPDPBUSD Z1, Z2, Z21; \
	VPBROADCASTD aoff(R10), Z3; \
	VPDPBUSD Z0, Z3, Z22; \
	VPDPBUSD Z1, Z3, Z23; \
	VPBROADCASTD aoff(R10)(BX*1), Z2; \
	VPDPBUSD Z0, Z2, Z24; \
	VPDPBUSD Z1, Z2, Z25; \
	VPBROADCASTD aoff(R10)(BX*2), Z3; \
	VPDPBUSD Z0, Z3, Z26; \
	VPDPBUSD Z1, Z3, Z27; \
	VPBROADCASTD aoff(R11), Z2; \
	VPDPBUSD Z0, Z2, Z28; \
	VPDPBUSD Z1, Z2, Z29; \
	VPBROADCASTD aoff(R11)(BX*1), Z3; \
	VPDPBUSD Z0, Z3, Z30; \
	VPDPBUSD Z1, Z3, Z31

#define VNNI_ROW0 \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x6d; BYTE $0x50; BYTE $0xe0 /* {vex} vpdpbusd %ymm0,%ymm2,%ymm4 */; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x6d; BYTE $0x50; BYTE $0xe9 /* {vex} vpdpbusd %ymm1,%ymm2,%ymm5 */

#define VNNI_ROW1 \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x65; BYTE $0x50; BYTE $0xf0 /* {vex} vpdpbusd %ymm0,%ymm3,%ymm6 */; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x65; BYTE $0x50; BYTE $0xf9 /* {vex} vpdpbusd %ymm1,%ymm3,%ymm7 */

#define VNNI_ROW2 \
	BYTE $0xc4; BYTE $0x62; BYTE $0x6d; BYTE $0x50; BYTE $0xc0 /* {vex} vpdpbusd %ymm0,%ymm2,%ymm8 */; \
	BYTE $0xc4; BYTE $0x62; BYTE $0x6d; BYTE $0x50; BYTE $0xc9 /* {vex} vpdpbusd %ymm1,%ymm2,%ymm9 */

#define VNNI_ROW3 \
	BYTE $0xc4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xd0 /* {vex} vpdpbusd %ymm0,%ymm3,%ymm10 */; \
	BYTE $0xc4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xd9 /* {vex} vpdpbusd %ymm1,%ymm3,%ymm11 */

#define VNNI_ROW4 \
	BYTE $0xc4; BYTE $0x62; BYTE $0x6d; BYTE $0x50; BYTE $0xe0 /* {vex} vpdpbusd %ymm0,%ymm2,%ymm12 */; \
	BYTE $0xc4; BYTE $0x62; BYTE $0x6d; BYTE $0x50; BYTE $0xe9 /* {vex} vpdpbusd %ymm1,%ymm2,%ymm13 */

#define VNNI_ROW5 \
	BYTE $0xc4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xf0 /* {vex} vpdpbusd %ymm0,%ymm3,%ymm14 */; \
	BYTE $0xc4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xf9 /* {vex} vpdpbusd %ymm1,%ymm3,%ymm15 */

#define QUADVNNI(aoff, boff) \
	VMOVDQU boff(DI), Y0; \
	VMOVDQU boff+32(DI), Y1; \
	VPBROADCASTD aoff(SI), Y2; \
	VNNI_ROW0; \
	VPBROADCASTD aoff(SI)(BX*1), Y3; \
	VNNI_ROW1; \
	VPBROADCASTD aoff(SI)(BX*2), Y2; \
	VNNI_ROW2; \
	VPBROADCASTD aoff(R10), Y3; \
	VNNI_ROW3; \
	VPBROADCASTD aoff(R10)(BX*1), Y2; \
	VNNI_ROW4; \
	VPBROADCASTD aoff(R10)(BX*2), Y3; \
	VNNI_ROW5

#define QUADAVX2(aoff, boff) \
	VPBROADCASTQ aoff(SI), Y0; \
	VPBROADCASTQ aoff(SI)(BX*1), Y1; \
	VPMOVSXBW boff+0(DI), Y2; \
	VPMOVSXBW boff+16(DI), Y3; \
	VPMOVSXBW boff+32(DI), Y4; \
	VPMOVSXBW boff+48(DI), Y5; \
	VPMADDWD Y2, Y0, Y14; \
	VPADDD Y14, Y6, Y6; \
	VPMADDWD Y2, Y1, Y15; \
	VPADDD Y15, Y10, Y10; \
	VPMADDWD Y3, Y0, Y14; \
	VPADDD Y14, Y7, Y7; \
	VPMADDWD Y3, Y1, Y15; \
	VPADDD Y15, Y11, Y11; \
	VPMADDWD Y4, Y0, Y14; \
	VPADDD Y14, Y8, Y8; \
	VPMADDWD Y4, Y1, Y15; \
	VPADDD Y15, Y12, Y12; \
	VPMADDWD Y5, Y0, Y14; \
	VPADDD Y14, Y9, Y9; \
	VPMADDWD Y5, Y1, Y15; \
	VPADDD Y15, Y13, Y13

// ---------------------------------------------------------------------
// func gemmPanelU8S8VNNI512(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)
// For t < tiles: C tile t [8×32] (+)= A rows 8t..8t+7 [kq quads, lda
// bytes apart] · B's two panels [kq quads × 16 columns each, 64·kq bytes
// apart].
// ---------------------------------------------------------------------
TEXT ·gemmPanelU8S8VNNI512(SB), NOSPLIT, $0-64
	MOVQ tiles+0(FP), AX
	MOVQ a+16(FP), R12        // A row 0 of the tile
	MOVQ lda+24(FP), BX
	MOVQ c+40(FP), DX         // C row 0 of the tile
	MOVQ ldc+48(FP), R8
	MOVQ flags+56(FP), R9
	SHLQ $2, R8               // ldc in bytes
	MOVQ kq+8(FP), R13
	SHLQ $6, R13              // panel stride: 64 bytes a quad

v512tile:
	MOVQ   kq+8(FP), CX
	SHRQ   $2, CX             // groups of four quads (kq is a multiple of 4)
	MOVQ   b+32(FP), DI
	MOVQ   R12, SI
	LEAQ   (BX)(BX*2), R10
	LEAQ   (SI)(R10*2), R11   // A row 6
	ADDQ   SI, R10            // A row 3
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

v512loop:
	QUAD512(0, 0)
	QUAD512(4, 64)
	QUAD512(8, 128)
	QUAD512(12, 192)
	ADDQ $16, SI
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $256, DI
	DECQ CX
	JNZ  v512loop

	// C rows 0-2 at DX, rows 3-5 at R10, rows 6-7 at R11.
	LEAQ  (R8)(R8*2), R10
	LEAQ  (DX)(R10*2), R11
	ADDQ  DX, R10
	TESTQ $1, R9
	JZ    v512write
	VPADDD (DX), Z16, Z16
	VPADDD 64(DX), Z17, Z17
	VPADDD (DX)(R8*1), Z18, Z18
	VPADDD 64(DX)(R8*1), Z19, Z19
	VPADDD (DX)(R8*2), Z20, Z20
	VPADDD 64(DX)(R8*2), Z21, Z21
	VPADDD (R10), Z22, Z22
	VPADDD 64(R10), Z23, Z23
	VPADDD (R10)(R8*1), Z24, Z24
	VPADDD 64(R10)(R8*1), Z25, Z25
	VPADDD (R10)(R8*2), Z26, Z26
	VPADDD 64(R10)(R8*2), Z27, Z27
	VPADDD (R11), Z28, Z28
	VPADDD 64(R11), Z29, Z29
	VPADDD (R11)(R8*1), Z30, Z30
	VPADDD 64(R11)(R8*1), Z31, Z31

v512write:
	VMOVDQU32 Z16, (DX)
	VMOVDQU32 Z17, 64(DX)
	VMOVDQU32 Z18, (DX)(R8*1)
	VMOVDQU32 Z19, 64(DX)(R8*1)
	VMOVDQU32 Z20, (DX)(R8*2)
	VMOVDQU32 Z21, 64(DX)(R8*2)
	VMOVDQU32 Z22, (R10)
	VMOVDQU32 Z23, 64(R10)
	VMOVDQU32 Z24, (R10)(R8*1)
	VMOVDQU32 Z25, 64(R10)(R8*1)
	VMOVDQU32 Z26, (R10)(R8*2)
	VMOVDQU32 Z27, 64(R10)(R8*2)
	VMOVDQU32 Z28, (R11)
	VMOVDQU32 Z29, 64(R11)
	VMOVDQU32 Z30, (R11)(R8*1)
	VMOVDQU32 Z31, 64(R11)(R8*1)

	// The next tile: A and C rows 8 on.
	LEAQ (R12)(BX*8), R12
	LEAQ (DX)(R8*8), DX
	DECQ AX
	JNZ  v512tile
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func gemvU8S8VNNI512(kq, panels int, a *byte, b *int8, pstride int, c *int32, flags uint)
// One row of A [kq quads] times panels B panels [kq quads × 16 columns,
// pstride bytes apart] into C's panels×16 contiguous int32s, eight panels
// at a time: the A quad broadcast once, the panels' quads read as
// VPDPBUSD's signed memory operand.
// ---------------------------------------------------------------------
TEXT ·gemvU8S8VNNI512(SB), NOSPLIT, $0-56
	MOVQ panels+8(FP), BX
	MOVQ b+24(FP), DI         // first panel of the group
	MOVQ pstride+32(FP), R13
	MOVQ c+40(FP), DX
	MOVQ flags+48(FP), R9
	CMPQ BX, $8
	JB   gone

g8:
	MOVQ   kq+0(FP), CX
	MOVQ   a+16(FP), SI
	MOVQ   DI, R10            // panels 0-2 at the current quad
	LEAQ   (R13)(R13*2), R8
	LEAQ   (R10)(R8*1), R11   // panels 3-5
	LEAQ   (R11)(R8*1), R12   // panels 6-7
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

g8loop:
	VPBROADCASTD (SI), Z8
	VPDPBUSD     (R10), Z8, Z16
	VPDPBUSD     (R10)(R13*1), Z8, Z17
	VPDPBUSD     (R10)(R13*2), Z8, Z18
	VPDPBUSD     (R11), Z8, Z19
	VPDPBUSD     (R11)(R13*1), Z8, Z20
	VPDPBUSD     (R11)(R13*2), Z8, Z21
	VPDPBUSD     (R12), Z8, Z22
	VPDPBUSD     (R12)(R13*1), Z8, Z23
	ADDQ         $4, SI
	ADDQ         $64, R10
	ADDQ         $64, R11
	ADDQ         $64, R12
	DECQ         CX
	JNZ          g8loop

	TESTQ  $1, R9
	JZ     g8write
	VPADDD (DX), Z16, Z16
	VPADDD 64(DX), Z17, Z17
	VPADDD 128(DX), Z18, Z18
	VPADDD 192(DX), Z19, Z19
	VPADDD 256(DX), Z20, Z20
	VPADDD 320(DX), Z21, Z21
	VPADDD 384(DX), Z22, Z22
	VPADDD 448(DX), Z23, Z23

g8write:
	VMOVDQU32 Z16, (DX)
	VMOVDQU32 Z17, 64(DX)
	VMOVDQU32 Z18, 128(DX)
	VMOVDQU32 Z19, 192(DX)
	VMOVDQU32 Z20, 256(DX)
	VMOVDQU32 Z21, 320(DX)
	VMOVDQU32 Z22, 384(DX)
	VMOVDQU32 Z23, 448(DX)
	ADDQ      $512, DX
	LEAQ      (DI)(R13*8), DI
	SUBQ      $8, BX
	CMPQ      BX, $8
	JAE       g8

gone:
	// The last 0-7 panels, one at a time.
	TESTQ BX, BX
	JZ    gdone

g1:
	MOVQ   kq+0(FP), CX
	MOVQ   a+16(FP), SI
	MOVQ   DI, R10
	VPXORD Z16, Z16, Z16

g1loop:
	VPBROADCASTD (SI), Z8
	VPDPBUSD     (R10), Z8, Z16
	ADDQ         $4, SI
	ADDQ         $64, R10
	DECQ         CX
	JNZ          g1loop
	TESTQ        $1, R9
	JZ           g1write
	VPADDD       (DX), Z16, Z16

g1write:
	VMOVDQU32 Z16, (DX)
	ADDQ      $64, DX
	ADDQ      R13, DI
	DECQ      BX
	JNZ       g1

gdone:
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func gemmPanelU8S8AVXVNNI(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)
// For t < tiles: C tile t [6×16] (+)= A rows 6t..6t+5 · one B panel,
// with AVX-VNNI's VEX VPDPBUSD on ymm registers.
// ---------------------------------------------------------------------
TEXT ·gemmPanelU8S8AVXVNNI(SB), NOSPLIT, $0-64
	MOVQ tiles+0(FP), AX
	MOVQ a+16(FP), R12
	MOVQ lda+24(FP), BX
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R8
	MOVQ flags+56(FP), R9
	SHLQ $2, R8

vvtile:
	MOVQ  kq+8(FP), CX
	SHRQ  $2, CX
	MOVQ  b+32(FP), DI
	MOVQ  R12, SI
	LEAQ  (BX)(BX*2), R10
	ADDQ  SI, R10             // A row 3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15

vvloop:
	QUADVNNI(0, 0)
	QUADVNNI(4, 64)
	QUADVNNI(8, 128)
	QUADVNNI(12, 192)
	ADDQ $16, SI
	ADDQ $16, R10
	ADDQ $256, DI
	DECQ CX
	JNZ  vvloop

	// C rows 0-2 at DX, rows 3-5 at R10.
	LEAQ   (R8)(R8*2), R10
	ADDQ   DX, R10
	TESTQ  $1, R9
	JZ     vvwrite
	VPADDD (DX), Y4, Y4
	VPADDD 32(DX), Y5, Y5
	VPADDD (DX)(R8*1), Y6, Y6
	VPADDD 32(DX)(R8*1), Y7, Y7
	VPADDD (DX)(R8*2), Y8, Y8
	VPADDD 32(DX)(R8*2), Y9, Y9
	VPADDD (R10), Y10, Y10
	VPADDD 32(R10), Y11, Y11
	VPADDD (R10)(R8*1), Y12, Y12
	VPADDD 32(R10)(R8*1), Y13, Y13
	VPADDD (R10)(R8*2), Y14, Y14
	VPADDD 32(R10)(R8*2), Y15, Y15

vvwrite:
	VMOVDQU Y4, (DX)
	VMOVDQU Y5, 32(DX)
	VMOVDQU Y6, (DX)(R8*1)
	VMOVDQU Y7, 32(DX)(R8*1)
	VMOVDQU Y8, (DX)(R8*2)
	VMOVDQU Y9, 32(DX)(R8*2)
	VMOVDQU Y10, (R10)
	VMOVDQU Y11, 32(R10)
	VMOVDQU Y12, (R10)(R8*1)
	VMOVDQU Y13, 32(R10)(R8*1)
	VMOVDQU Y14, (R10)(R8*2)
	VMOVDQU Y15, 32(R10)(R8*2)

	// The next tile: A and C rows 6 on.
	LEAQ (BX)(BX*2), R11
	LEAQ (R12)(R11*2), R12
	LEAQ (R10)(R8*2), DX
	ADDQ R8, DX
	DECQ AX
	JNZ  vvtile
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func gemmPanelU8S8AVX2(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)
// For t < tiles: C tile t [2×16] (+)= A rows 2t, 2t+1 (quads of
// zero-extended words, 8 bytes each) · one B panel, by VPMOVSXBW and
// VPMADDWD (exact; see gemm_i8.go). Each column's sum is two lanes until
// the write-back folds them (VPHADDD, then VPERMQ to put the columns in
// order).
// ---------------------------------------------------------------------
TEXT ·gemmPanelU8S8AVX2(SB), NOSPLIT, $0-64
	MOVQ tiles+0(FP), AX
	MOVQ a+16(FP), R12
	MOVQ lda+24(FP), BX
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R8
	MOVQ flags+56(FP), R9
	SHLQ $2, R8

a2tile:
	MOVQ  kq+8(FP), CX
	SHRQ  $2, CX
	MOVQ  b+32(FP), DI
	MOVQ  R12, SI
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13

a2loop:
	QUADAVX2(0, 0)
	QUADAVX2(8, 64)
	QUADAVX2(16, 128)
	QUADAVX2(24, 192)
	ADDQ $32, SI
	ADDQ $256, DI
	DECQ CX
	JNZ  a2loop

	// Fold each column's two lanes: VPHADDD of groups (0, 1) gives
	// columns 0 1 4 5 | 2 3 6 7, which VPERMQ $0xd8 puts in order.
	VPHADDD Y7, Y6, Y0
	VPHADDD Y9, Y8, Y1
	VPHADDD Y11, Y10, Y2
	VPHADDD Y13, Y12, Y3
	VPERMQ  $0xd8, Y0, Y0
	VPERMQ  $0xd8, Y1, Y1
	VPERMQ  $0xd8, Y2, Y2
	VPERMQ  $0xd8, Y3, Y3
	TESTQ   $1, R9
	JZ      a2write
	VPADDD  (DX), Y0, Y0
	VPADDD  32(DX), Y1, Y1
	VPADDD  (DX)(R8*1), Y2, Y2
	VPADDD  32(DX)(R8*1), Y3, Y3

a2write:
	VMOVDQU Y0, (DX)
	VMOVDQU Y1, 32(DX)
	VMOVDQU Y2, (DX)(R8*1)
	VMOVDQU Y3, 32(DX)(R8*1)

	// The next tile: A and C rows 2 on.
	LEAQ (R12)(BX*2), R12
	LEAQ (DX)(R8*2), DX
	DECQ AX
	JNZ  a2tile
	VZEROUPPER
	RET
