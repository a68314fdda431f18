//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func ewAffinePlanesAVX512(dst, x *float32, planes, n int, a, b *float32, floor float32)
// For q < planes, i < n: t = a[q]·x[q·n+i], then t + b[q], each rounded,
// then dst[q·n+i] = max(floor, t) by VMAXPS, which returns t when it is
// NaN or a zero of either sign (floor 0: the twin's Relu; -Inf: t). A
// plane's last n mod 16 floats go through an opmask. See ew_affine.go.
// ---------------------------------------------------------------------
TEXT ·ewAffinePlanesAVX512(SB), NOSPLIT, $0-52
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         planes+16(FP), R11
	MOVQ         n+24(FP), R8
	MOVQ         a+32(FP), R9
	MOVQ         b+40(FP), R10
	VBROADCASTSS floor+48(FP), Z3
	MOVQ         R8, CX
	ANDQ         $15, CX           // a plane's tail
	MOVL         $1, AX
	SHLL         CX, AX
	DECL         AX
	KMOVW        AX, K1
	MOVQ         R8, R12
	SHRQ         $4, R12           // a plane's whole blocks

plane:
	VBROADCASTSS (R9), Z1
	VBROADCASTSS (R10), Z2
	MOVQ         R12, BX
	TESTQ        BX, BX
	JZ           tail

block:
	VMULPS  (SI), Z1, Z0
	VADDPS  Z2, Z0, Z0
	VMAXPS  Z0, Z3, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    BX
	JNZ     block

tail:
	TESTQ     CX, CX
	JZ        next
	VMOVUPS.Z (SI), K1, Z0
	VMULPS    Z0, Z1, Z0
	VADDPS    Z2, Z0, Z0
	VMAXPS    Z0, Z3, Z0
	VMOVUPS   Z0, K1, (DI)
	LEAQ      (SI)(CX*4), SI
	LEAQ      (DI)(CX*4), DI

next:
	ADDQ $4, R9
	ADDQ $4, R10
	DECQ R11
	JNZ  plane
	VZEROUPPER
	RET
