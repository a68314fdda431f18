//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func convTPackTapsAVX512(dst, w *float32, c, ldw, n, taps int, off, step *int, spread bool) bool
// For input channel q < c, output channel r < n, tap t < taps
// (convTPackTapsGo), with e = 2 where spread (n <= 8), else 1:
//
//	dst[off[t] + q·step[t] + e·r] = w[q·ldw + r·taps + t]
//
// and reports whether any of those weights is NaN or infinite. Per input
// channel: the n channels' taps load as rows of a 16×16 block (masked to
// taps floats; rows past n are left as they were: their lanes are not
// stored), which transposes (T4, L4) into one register per tap, stored
// masked to n floats.
// ---------------------------------------------------------------------

#include "transpose512_amd64.h"

// STORE_TAP(Z): a tap's register to (DI)(AX*4): its n channels, or
// with spread every other float (Z18 the permute, Z17 scratch).
#define STORE_TAP(Z) \
	CMPB      spread+64(FP), $0;   \
	JNE       3(PC);               \
	VMOVUPS   Z, K2, (DI)(AX*4);   \
	JMP       3(PC);               \
	VPERMPS   Z, Z18, Z17;         \
	VMOVUPS   Z17, K2, (DI)(AX*4)

TEXT ·convTPackTapsAVX512(SB), NOSPLIT, $0-73
	MOVQ   dst+0(FP), DI
	MOVQ   w+8(FP), SI
	MOVQ   c+16(FP), DX
	MOVQ   ldw+24(FP), R8
	SHLQ   $2, R8
	MOVQ   n+32(FP), R9
	MOVQ   taps+40(FP), R10
	MOVQ   off+48(FP), R11
	MOVQ   step+56(FP), R12
	LEAQ   (R10*4), R13     // a channel's taps, bytes
	LEAQ   (R13)(R13*2), R14
	MOVQ   R10, CX
	MOVL   $1, AX
	SHLL   CX, AX
	DECL   AX
	KMOVW  AX, K1           // a row's taps
	MOVQ   R9, CX
	MOVL   $1, AX
	SHLL   CX, AX
	DECL   AX
	KMOVW  AX, K2           // a tap's channels
	CMPB   spread+64(FP), $0
	JEQ    plain
	MOVQ   R9, CX
	ADDQ   CX, CX
	MOVL   $1, AX
	SHLL   CX, AX
	DECL   AX
	ANDL   $0x5555, AX
	KMOVW  AX, K2           // spread: the even floats of 2n
	VMOVDQU32 packSpread<>(SB), Z18

plain:
	VPXORD Z16, Z16, Z16    // v - v of every weight, or'ed: 0 while all are finite
	XORQ   BX, BX           // the input channel

channel:
	MOVQ SI, AX
	VMOVUPS.Z (AX), K1, Z0
	VSUBPS    Z0, Z0, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $1
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*1), K1, Z1
	VSUBPS    Z1, Z1, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $2
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*2), K1, Z2
	VSUBPS    Z2, Z2, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $3
	JEQ       loaded
	VMOVUPS.Z (AX)(R14*1), K1, Z3
	VSUBPS    Z3, Z3, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $4
	JEQ       loaded
	LEAQ      (AX)(R13*4), AX
	VMOVUPS.Z (AX), K1, Z4
	VSUBPS    Z4, Z4, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $5
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*1), K1, Z5
	VSUBPS    Z5, Z5, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $6
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*2), K1, Z6
	VSUBPS    Z6, Z6, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $7
	JEQ       loaded
	VMOVUPS.Z (AX)(R14*1), K1, Z7
	VSUBPS    Z7, Z7, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $8
	JEQ       loaded
	LEAQ      (AX)(R13*4), AX
	VMOVUPS.Z (AX), K1, Z8
	VSUBPS    Z8, Z8, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $9
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*1), K1, Z9
	VSUBPS    Z9, Z9, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $10
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*2), K1, Z10
	VSUBPS    Z10, Z10, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $11
	JEQ       loaded
	VMOVUPS.Z (AX)(R14*1), K1, Z11
	VSUBPS    Z11, Z11, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $12
	JEQ       loaded
	LEAQ      (AX)(R13*4), AX
	VMOVUPS.Z (AX), K1, Z12
	VSUBPS    Z12, Z12, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $13
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*1), K1, Z13
	VSUBPS    Z13, Z13, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $14
	JEQ       loaded
	VMOVUPS.Z (AX)(R13*2), K1, Z14
	VSUBPS    Z14, Z14, Z17
	VPORD     Z17, Z16, Z16
	CMPQ      R9, $15
	JEQ       loaded
	VMOVUPS.Z (AX)(R14*1), K1, Z15
	VSUBPS    Z15, Z15, Z17
	VPORD     Z17, Z16, Z16

loaded:
	TRANSPOSE16
	MOVQ    0(R12), AX
	IMULQ   BX, AX
	ADDQ    0(R11), AX
	STORE_TAP(Z0)
	CMPQ    R10, $1
	JEQ     stored
	MOVQ    8(R12), AX
	IMULQ   BX, AX
	ADDQ    8(R11), AX
	STORE_TAP(Z1)
	CMPQ    R10, $2
	JEQ     stored
	MOVQ    16(R12), AX
	IMULQ   BX, AX
	ADDQ    16(R11), AX
	STORE_TAP(Z2)
	CMPQ    R10, $3
	JEQ     stored
	MOVQ    24(R12), AX
	IMULQ   BX, AX
	ADDQ    24(R11), AX
	STORE_TAP(Z3)
	CMPQ    R10, $4
	JEQ     stored
	MOVQ    32(R12), AX
	IMULQ   BX, AX
	ADDQ    32(R11), AX
	STORE_TAP(Z4)
	CMPQ    R10, $5
	JEQ     stored
	MOVQ    40(R12), AX
	IMULQ   BX, AX
	ADDQ    40(R11), AX
	STORE_TAP(Z5)
	CMPQ    R10, $6
	JEQ     stored
	MOVQ    48(R12), AX
	IMULQ   BX, AX
	ADDQ    48(R11), AX
	STORE_TAP(Z6)
	CMPQ    R10, $7
	JEQ     stored
	MOVQ    56(R12), AX
	IMULQ   BX, AX
	ADDQ    56(R11), AX
	STORE_TAP(Z7)
	CMPQ    R10, $8
	JEQ     stored
	MOVQ    64(R12), AX
	IMULQ   BX, AX
	ADDQ    64(R11), AX
	STORE_TAP(Z8)
	CMPQ    R10, $9
	JEQ     stored
	MOVQ    72(R12), AX
	IMULQ   BX, AX
	ADDQ    72(R11), AX
	STORE_TAP(Z9)
	CMPQ    R10, $10
	JEQ     stored
	MOVQ    80(R12), AX
	IMULQ   BX, AX
	ADDQ    80(R11), AX
	STORE_TAP(Z10)
	CMPQ    R10, $11
	JEQ     stored
	MOVQ    88(R12), AX
	IMULQ   BX, AX
	ADDQ    88(R11), AX
	STORE_TAP(Z11)
	CMPQ    R10, $12
	JEQ     stored
	MOVQ    96(R12), AX
	IMULQ   BX, AX
	ADDQ    96(R11), AX
	STORE_TAP(Z12)
	CMPQ    R10, $13
	JEQ     stored
	MOVQ    104(R12), AX
	IMULQ   BX, AX
	ADDQ    104(R11), AX
	STORE_TAP(Z13)
	CMPQ    R10, $14
	JEQ     stored
	MOVQ    112(R12), AX
	IMULQ   BX, AX
	ADDQ    112(R11), AX
	STORE_TAP(Z14)
	CMPQ    R10, $15
	JEQ     stored
	MOVQ    120(R12), AX
	IMULQ   BX, AX
	ADDQ    120(R11), AX
	STORE_TAP(Z15)

stored:
	ADDQ R8, SI
	INCQ BX
	CMPQ BX, DX
	JLT  channel

	VPTESTMD Z16, Z16, K3
	KORTESTW K3, K3
	SETNE    ret+72(FP)
	VZEROUPPER
	RET

// packSpread: lane 2i (and 2i+1) takes float i.
DATA packSpread<>+0(SB)/4, $0
DATA packSpread<>+4(SB)/4, $0
DATA packSpread<>+8(SB)/4, $1
DATA packSpread<>+12(SB)/4, $1
DATA packSpread<>+16(SB)/4, $2
DATA packSpread<>+20(SB)/4, $2
DATA packSpread<>+24(SB)/4, $3
DATA packSpread<>+28(SB)/4, $3
DATA packSpread<>+32(SB)/4, $4
DATA packSpread<>+36(SB)/4, $4
DATA packSpread<>+40(SB)/4, $5
DATA packSpread<>+44(SB)/4, $5
DATA packSpread<>+48(SB)/4, $6
DATA packSpread<>+52(SB)/4, $6
DATA packSpread<>+56(SB)/4, $7
DATA packSpread<>+60(SB)/4, $7
GLOBL packSpread<>(SB), RODATA|NOPTR, $64
