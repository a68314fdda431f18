//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func avgRows2x2AVX512(y, x *float32, rows, w, ow int)
// The 2×2, stride-2 average pool of rows output rows of ow (avgRows2x2Go):
// output row r reads input rows 2r and 2r+1 (w floats each) and
//
//	y[r·ow + j] = float32(((0 + (0 + x0[2j] + x1[2j])) + (0 + x0[2j+1] + x1[2j+1])) / 4)
//
// in float64 as the general path sums (AccAdd into a cleared row, then
// each window's columns from 0): 8 outputs a step, the inputs widened to
// float64 (VCVTPS2PD), the columns' sums split into even and odd ones by
// two permutes, the tail through opmasks. ×0.25 is ÷4 (an exact scaling).
// ---------------------------------------------------------------------
// AVG_STEP: Y8 = the eight averages of the sixteen columns in Z0 (row
// 2r) and Z1 (row 2r+1).
#define AVG_STEP \
	VCVTPS2PD     Y0, Z2;      \ // row 2r, columns 0-7
	VEXTRACTF32X8 $1, Z0, Y3;  \
	VCVTPS2PD     Y3, Z3;      \ // 8-15
	VCVTPS2PD     Y1, Z4;      \ // row 2r+1
	VEXTRACTF32X8 $1, Z1, Y5;  \
	VCVTPS2PD     Y5, Z5;      \
	VADDPD        Z20, Z2, Z2; \ // 0 + x0
	VADDPD        Z20, Z3, Z3; \
	VADDPD        Z4, Z2, Z2;  \ // + x1: the folded row
	VADDPD        Z5, Z3, Z3;  \
	VMOVAPD       Z2, Z6;      \
	VPERMT2PD     Z3, Z22, Z6; \ // even columns
	VPERMT2PD     Z3, Z23, Z2; \ // odd columns
	VADDPD        Z20, Z6, Z6; \ // 0 + even
	VADDPD        Z2, Z6, Z6;  \ // + odd
	VMULPD        Z21, Z6, Z6; \ // ÷ 4
	VCVTPD2PS     Z6, Y8

TEXT ·avgRows2x2AVX512(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         rows+16(FP), R11
	MOVQ         w+24(FP), R8
	SHLQ         $2, R8                 // an input row, bytes
	MOVQ         ow+32(FP), R9
	VPXORQ       Z20, Z20, Z20          // +0
	VBROADCASTSD avgQuarter<>(SB), Z21  // 0.25
	VMOVDQU64    avgEvenOdd<>+0(SB), Z22
	VMOVDQU64    avgEvenOdd<>+64(SB), Z23
	MOVQ         R9, CX
	ANDQ         $7, CX                 // outputs past the last whole step
	MOVL         $1, AX
	SHLL         CX, AX
	DECL         AX
	KMOVW        AX, K2                 // their lanes
	ADDL         CX, CX
	MOVL         $1, AX
	SHLL         CX, AX
	DECL         AX
	KMOVW        AX, K1                 // their inputs' lanes (two each)
	MOVQ         R9, R12
	SHRQ         $3, R12                // whole steps a row

row:
	MOVQ SI, AX        // input row 2r
	LEAQ (SI)(R8*1), DX // input row 2r+1
	MOVQ DI, BX
	MOVQ R12, R10
	TESTQ R10, R10
	JZ    tail

step:
	VMOVUPS (AX), Z0
	VMOVUPS (DX), Z1
	AVG_STEP
	VMOVUPS Y8, (BX)
	ADDQ    $64, AX
	ADDQ    $64, DX
	ADDQ    $32, BX
	DECQ    R10
	JNZ     step

tail:
	KORTESTW K2, K2
	JZ       next
	VMOVUPS.Z (AX), K1, Z0
	VMOVUPS.Z (DX), K1, Z1
	AVG_STEP
	VMOVUPS   Y8, K2, (BX)

next:
	LEAQ (SI)(R8*2), SI
	LEAQ (DI)(R9*4), DI
	DECQ R11
	JNZ  row
	VZEROUPPER
	RET

DATA avgQuarter<>+0(SB)/8, $0.25
GLOBL avgQuarter<>(SB), RODATA|NOPTR, $8

// avgEvenOdd: the even then the odd doubles of two registers.
DATA avgEvenOdd<>+0(SB)/8, $0
DATA avgEvenOdd<>+8(SB)/8, $2
DATA avgEvenOdd<>+16(SB)/8, $4
DATA avgEvenOdd<>+24(SB)/8, $6
DATA avgEvenOdd<>+32(SB)/8, $8
DATA avgEvenOdd<>+40(SB)/8, $10
DATA avgEvenOdd<>+48(SB)/8, $12
DATA avgEvenOdd<>+56(SB)/8, $14
DATA avgEvenOdd<>+64(SB)/8, $1
DATA avgEvenOdd<>+72(SB)/8, $3
DATA avgEvenOdd<>+80(SB)/8, $5
DATA avgEvenOdd<>+88(SB)/8, $7
DATA avgEvenOdd<>+96(SB)/8, $9
DATA avgEvenOdd<>+104(SB)/8, $11
DATA avgEvenOdd<>+112(SB)/8, $13
DATA avgEvenOdd<>+120(SB)/8, $15
GLOBL avgEvenOdd<>(SB), RODATA|NOPTR, $128
