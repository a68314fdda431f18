//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func convTPackTapsAVX512(dst, w *float32, c, ldw, n, taps int, off, step *int) bool
// For input channel q < c, output channel r < n, tap t < taps
// (convTPackTapsGo):
//
//	dst[off[t] + q·step[t] + r] = w[q·ldw + r·taps + t]
//
// and reports whether any of those weights is NaN or infinite. Per input
// channel: the n channels' taps load as rows of a 16×16 block (masked to
// taps floats; rows past n are left as they were: their lanes are not
// stored), which transposes (T4, L4) into one register per tap, stored
// masked to n floats.
// ---------------------------------------------------------------------

#include "transpose512_amd64.h"

TEXT ·convTPackTapsAVX512(SB), NOSPLIT, $0-65
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
	VMOVUPS Z0, K2, (DI)(AX*4)
	CMPQ    R10, $1
	JEQ     stored
	MOVQ    8(R12), AX
	IMULQ   BX, AX
	ADDQ    8(R11), AX
	VMOVUPS Z1, K2, (DI)(AX*4)
	CMPQ    R10, $2
	JEQ     stored
	MOVQ    16(R12), AX
	IMULQ   BX, AX
	ADDQ    16(R11), AX
	VMOVUPS Z2, K2, (DI)(AX*4)
	CMPQ    R10, $3
	JEQ     stored
	MOVQ    24(R12), AX
	IMULQ   BX, AX
	ADDQ    24(R11), AX
	VMOVUPS Z3, K2, (DI)(AX*4)
	CMPQ    R10, $4
	JEQ     stored
	MOVQ    32(R12), AX
	IMULQ   BX, AX
	ADDQ    32(R11), AX
	VMOVUPS Z4, K2, (DI)(AX*4)
	CMPQ    R10, $5
	JEQ     stored
	MOVQ    40(R12), AX
	IMULQ   BX, AX
	ADDQ    40(R11), AX
	VMOVUPS Z5, K2, (DI)(AX*4)
	CMPQ    R10, $6
	JEQ     stored
	MOVQ    48(R12), AX
	IMULQ   BX, AX
	ADDQ    48(R11), AX
	VMOVUPS Z6, K2, (DI)(AX*4)
	CMPQ    R10, $7
	JEQ     stored
	MOVQ    56(R12), AX
	IMULQ   BX, AX
	ADDQ    56(R11), AX
	VMOVUPS Z7, K2, (DI)(AX*4)
	CMPQ    R10, $8
	JEQ     stored
	MOVQ    64(R12), AX
	IMULQ   BX, AX
	ADDQ    64(R11), AX
	VMOVUPS Z8, K2, (DI)(AX*4)
	CMPQ    R10, $9
	JEQ     stored
	MOVQ    72(R12), AX
	IMULQ   BX, AX
	ADDQ    72(R11), AX
	VMOVUPS Z9, K2, (DI)(AX*4)
	CMPQ    R10, $10
	JEQ     stored
	MOVQ    80(R12), AX
	IMULQ   BX, AX
	ADDQ    80(R11), AX
	VMOVUPS Z10, K2, (DI)(AX*4)
	CMPQ    R10, $11
	JEQ     stored
	MOVQ    88(R12), AX
	IMULQ   BX, AX
	ADDQ    88(R11), AX
	VMOVUPS Z11, K2, (DI)(AX*4)
	CMPQ    R10, $12
	JEQ     stored
	MOVQ    96(R12), AX
	IMULQ   BX, AX
	ADDQ    96(R11), AX
	VMOVUPS Z12, K2, (DI)(AX*4)
	CMPQ    R10, $13
	JEQ     stored
	MOVQ    104(R12), AX
	IMULQ   BX, AX
	ADDQ    104(R11), AX
	VMOVUPS Z13, K2, (DI)(AX*4)
	CMPQ    R10, $14
	JEQ     stored
	MOVQ    112(R12), AX
	IMULQ   BX, AX
	ADDQ    112(R11), AX
	VMOVUPS Z14, K2, (DI)(AX*4)
	CMPQ    R10, $15
	JEQ     stored
	MOVQ    120(R12), AX
	IMULQ   BX, AX
	ADDQ    120(R11), AX
	VMOVUPS Z15, K2, (DI)(AX*4)

stored:
	ADDQ R8, SI
	INCQ BX
	CMPQ BX, DX
	JLT  channel

	VPTESTMD Z16, Z16, K3
	KORTESTW K3, K3
	SETNE    ret+64(FP)
	VZEROUPPER
	RET
