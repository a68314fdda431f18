//go:build amd64 && !purego

#include "textflag.h"

// Winograd F(2×2, 3×3) transforms for eight tiles; see winoInKernel and
// winoOutKernel (conv_wino_kernels.go) for the exact arithmetic, which
// these follow operation for operation.

DATA winoAbs<>+0(SB)/4, $0x7fffffff
GLOBL winoAbs<>(SB), RODATA|NOPTR, $4

// DEAL(lo, hi, even, odd): the even and odd elements of the sixteen
// floats lo:hi, in order (shuffle within lanes, then put the quads in
// order).
#define DEAL(lo, hi, even, odd) \
	VSHUFPS $0x88, hi, lo, even; \
	VSHUFPS $0xdd, hi, lo, odd;  \
	VPERMPD $0xd8, even, even;   \
	VPERMPD $0xd8, odd, odd

// ABSACC(x): add |x| to the sums in Y15 (Y9 holds the mask), using Y11.
#define ABSACC(x) \
	VANDPS x, Y9, Y11; \
	VADDPS Y11, Y15, Y15

// ROWU(row): the column transform of one patch row, left in Y12 (u0),
// Y13 (u1), Y10 (u2) and Y0 (u3): columns 2i..2i+3 of the eight tiles
// dealt out of four loads (at 0 and at 2 floats on), |x| of the loads
// added to Y15, then u0 = x0-x2, u1 = x1+x2, u2 = x2-x1, u3 = x1-x3.
// Uses Y10-Y14 and Y0.
#define ROWU(row) \
	VMOVUPS (row), Y10;       \
	ABSACC(Y10);              \
	VMOVUPS 32(row), Y14;     \
	ABSACC(Y14);              \
	DEAL(Y10, Y14, Y12, Y13); \
	VMOVUPS 8(row), Y10;      \
	ABSACC(Y10);              \
	VMOVUPS 40(row), Y0;      \
	ABSACC(Y0);               \
	DEAL(Y10, Y0, Y14, Y11);  \
	VSUBPS  Y11, Y13, Y0;     \
	VSUBPS  Y14, Y12, Y12;    \
	VSUBPS  Y13, Y14, Y10;    \
	VADDPS  Y14, Y13, Y13

// STOREV(x): store x at DI, then move DI to the next value.
#define STOREV(x) \
	VMOVUPS x, (DI); \
	ADDQ    DX, DI

// func winoIn8AVX2(src *float32, wp int, dst *float32, dstride int, acc *[8]float32)
TEXT ·winoIn8AVX2(SB), NOSPLIT, $0-40
	MOVQ src+0(FP), SI
	MOVQ wp+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ dstride+24(FP), DX
	MOVQ acc+32(FP), AX
	SHLQ $2, BX                // row stride in bytes
	SHLQ $2, DX                // value stride in bytes
	VBROADCASTSS winoAbs<>(SB), Y9
	VMOVUPS (AX), Y15

	// Rows 1 and 2 are kept in Y1-Y4 and Y5-Y8.
	LEAQ    (SI)(BX*1), CX
	ROWU(CX)
	VMOVAPS Y12, Y1
	VMOVAPS Y13, Y2
	VMOVAPS Y10, Y3
	VMOVAPS Y0, Y4
	LEAQ    (SI)(BX*2), CX
	ROWU(CX)
	VMOVAPS Y12, Y5
	VMOVAPS Y13, Y6
	VMOVAPS Y10, Y7
	VMOVAPS Y0, Y8

	// Row 0, then V[0][b] = u0[b] - u2[b].
	ROWU(SI)
	VSUBPS Y5, Y12, Y12
	STOREV(Y12)
	VSUBPS Y6, Y13, Y13
	STOREV(Y13)
	VSUBPS Y7, Y10, Y10
	STOREV(Y10)
	VSUBPS Y8, Y0, Y0
	STOREV(Y0)

	// V[1][b] = u1[b] + u2[b]
	VADDPS Y5, Y1, Y0
	STOREV(Y0)
	VADDPS Y6, Y2, Y0
	STOREV(Y0)
	VADDPS Y7, Y3, Y0
	STOREV(Y0)
	VADDPS Y8, Y4, Y0
	STOREV(Y0)

	// V[2][b] = u2[b] - u1[b]
	VSUBPS Y1, Y5, Y0
	STOREV(Y0)
	VSUBPS Y2, Y6, Y0
	STOREV(Y0)
	VSUBPS Y3, Y7, Y0
	STOREV(Y0)
	VSUBPS Y4, Y8, Y0
	STOREV(Y0)

	// Row 3, then V[3][b] = u1[b] - u3[b].
	LEAQ   (SI)(BX*2), CX
	ADDQ   BX, CX
	ROWU(CX)
	VSUBPS Y12, Y1, Y1
	STOREV(Y1)
	VSUBPS Y13, Y2, Y2
	STOREV(Y2)
	VSUBPS Y10, Y3, Y3
	STOREV(Y3)
	VSUBPS Y0, Y4, Y4
	VMOVUPS Y4, (DI)

	VMOVUPS Y15, (AX)
	VZEROUPPER
	RET

// SROW(s0, s1): the column transform of one row a of product values at
// SI (then SI moves to the next row): s0 = (M0+M1)+M2, s1 = (M1-M2)-M3.
// Uses Y12-Y15.
#define SROW(s0, s1) \
	VMOVUPS (SI), Y12;      \
	ADDQ    DX, SI;         \
	VMOVUPS (SI), Y13;      \
	ADDQ    DX, SI;         \
	VMOVUPS (SI), Y14;      \
	ADDQ    DX, SI;         \
	VMOVUPS (SI), Y15;      \
	ADDQ    DX, SI;         \
	VADDPS  Y13, Y12, s0;   \
	VADDPS  Y14, s0, s0;    \
	VSUBPS  Y14, Y13, s1;   \
	VSUBPS  Y15, s1, s1

// INTERLEAVE(c0, c1, row): store the sixteen outputs of one row, column
// 2i from c0 and 2i+1 from c1. Uses Y12-Y13.
#define INTERLEAVE(c0, c1, row) \
	VUNPCKLPS  c1, c0, Y12;       \
	VUNPCKHPS  c1, c0, Y13;       \
	VPERM2F128 $0x20, Y13, Y12, c0; \
	VPERM2F128 $0x31, Y13, Y12, c1; \
	VMOVUPS    c0, (row);         \
	VMOVUPS    c1, 32(row)

// func winoOut8AVX2(src *float32, sstride int, y *float32, ldy int, bias float32)
TEXT ·winoOut8AVX2(SB), NOSPLIT, $0-36
	MOVQ src+0(FP), SI
	MOVQ sstride+8(FP), DX
	MOVQ y+16(FP), DI
	MOVQ ldy+24(FP), BX
	SHLQ $2, DX
	SHLQ $2, BX
	VBROADCASTSS bias+32(FP), Y11

	SROW(Y0, Y1) // a = 0
	SROW(Y2, Y3) // a = 1
	SROW(Y4, Y5) // a = 2
	SROW(Y6, Y7) // a = 3

	// Row 0: ((s0 + s1) + s2) + bias; row 1: ((s1 - s2) - s3) + bias.
	VADDPS Y2, Y0, Y8
	VADDPS Y4, Y8, Y8
	VADDPS Y11, Y8, Y8  // row 0, column 2i
	VADDPS Y3, Y1, Y9
	VADDPS Y5, Y9, Y9
	VADDPS Y11, Y9, Y9  // row 0, column 2i+1
	VSUBPS Y4, Y2, Y10
	VSUBPS Y6, Y10, Y10
	VADDPS Y11, Y10, Y10 // row 1, column 2i
	VSUBPS Y5, Y3, Y0
	VSUBPS Y7, Y0, Y0
	VADDPS Y11, Y0, Y0  // row 1, column 2i+1

	INTERLEAVE(Y8, Y9, DI)
	ADDQ BX, DI
	INTERLEAVE(Y10, Y0, DI)
	VZEROUPPER
	RET
