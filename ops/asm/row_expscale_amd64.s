//go:build amd64 && !purego

#include "textflag.h"

// func expScaleF32AVX2(y, x *float32, n int, scale, m float32) float64
//
// y[i] = exp(x[i]·scale - m), the sum returned in float64 (see
// expScaleGo). Built for throughput, as the attention kernel's softmax
// needs it: 17 vector operations per eight elements where expShift takes
// 26, since on a core whose FP pipes are shared this is bound by the
// number of operations, not by latency.
//   - t = round(x·scale) - m;
//   - z = t·log2 e + (1.5·2^23 + 127) in one FMA: z's low mantissa bits
//     are k + 127 for k = round(t·log2 e), so 2^k is z << 23, and
//     z - (1.5·2^23 + 127) is k as a float;
//   - r = t - k·ln2 (hi and lo parts, fused), q = r + r²·poly(r), and
//     the result is fma(q, 2^k, 2^k);
//   - lanes with k < -126 (t below about -87.5, -Inf) are cleared; a NaN
//     compares false and stays NaN through the FMAs.

#define C8(off, v) \
	DATA rowExpS<>+(off+0)(SB)/4, $v;  \
	DATA rowExpS<>+(off+4)(SB)/4, $v;  \
	DATA rowExpS<>+(off+8)(SB)/4, $v;  \
	DATA rowExpS<>+(off+12)(SB)/4, $v; \
	DATA rowExpS<>+(off+16)(SB)/4, $v; \
	DATA rowExpS<>+(off+20)(SB)/4, $v; \
	DATA rowExpS<>+(off+24)(SB)/4, $v; \
	DATA rowExpS<>+(off+28)(SB)/4, $v

C8(0, 0x3f318000)   // ln2 hi
C8(32, 0xb95e8083)  // ln2 lo
C8(64, 0x39506967)  // P0
C8(96, 0x3ab743ce)  // P1
C8(128, 0x3c088908) // P2
C8(160, 0x3d2aa9c1) // P3
C8(192, 0x3e2aaaaa) // P4
C8(224, 0x3f000000) // P5
C8(256, 0x3fb8aa3b) // log2 e
C8(288, 0x4b40007f) // 1.5·2^23 + 127
C8(320, 0x4b400001) // 1.5·2^23 + 1: z below it is k < -126
GLOBL rowExpS<>(SB), RODATA|NOPTR, $352

#define PY    DI
#define PX    SI
#define N     CX
#define TMP   AX
#define NEG   BX
#define SHIFT Y15 // m
#define SCALE Y14
#define SUM   Y13 // float64 sums
#define MASK  Y12

// EXPS(X, R, K, P): P = exp(X·scale - m) for the eight floats in X
// (X, R, K clobbered).
#define EXPS(X, R, K, P) \
	VMULPS       SCALE, X, X;              \
	VSUBPS       SHIFT, X, R;              \
	VMOVUPS      rowExpS<>+288(SB), K;     \
	VFMADD231PS  rowExpS<>+256(SB), R, K;  \
	VSUBPS       rowExpS<>+288(SB), K, P;  \
	VFNMADD231PS rowExpS<>+0(SB), P, R;    \
	VFNMADD231PS rowExpS<>+32(SB), P, R;   \
	VMOVUPS      rowExpS<>+64(SB), P;      \
	VFMADD213PS  rowExpS<>+96(SB), R, P;   \
	VFMADD213PS  rowExpS<>+128(SB), R, P;  \
	VFMADD213PS  rowExpS<>+160(SB), R, P;  \
	VFMADD213PS  rowExpS<>+192(SB), R, P;  \
	VFMADD213PS  rowExpS<>+224(SB), R, P;  \
	VMULPS       R, R, X;                  \
	VFMADD213PS  R, X, P;                  \
	VCMPPS       $1, rowExpS<>+320(SB), K, X; \
	VPSLLD       $23, K, K;                \
	VFMADD213PS  K, K, P;                  \
	VANDNPS      P, X, P

// SUMS adds the eight floats of P to SUM: the two halves are added in
// float32 first (one rounding of two terms at most 1 each), then widened.
#define SUMS(P, XP, A, XA) \
	VEXTRACTF128 $1, P, XA;  \
	VADDPS       XA, XP, XA; \
	VCVTPS2PD    XA, A;      \
	VADDPD       A, SUM, SUM

TEXT ·expScaleF32AVX2(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS s+24(FP), SCALE
	VBROADCASTSS m+28(FP), SHIFT
	VXORPD       SUM, SUM, SUM

exps16: // two chains of eight
	CMPQ    N, $16
	JB      exps8
	VMOVUPS (PX), Y0
	VMOVUPS 32(PX), Y4
	EXPS(Y0, Y1, Y2, Y3)
	EXPS(Y4, Y5, Y6, Y7)
	VMOVUPS Y3, (PY)
	VMOVUPS Y7, 32(PY)
	SUMS(Y3, X3, Y0, X0)
	SUMS(Y7, X7, Y4, X4)
	ADDQ    $64, PX
	ADDQ    $64, PY
	SUBQ    $16, N
	JMP     exps16

exps8:
	CMPQ    N, $8
	JB      expsTail
	VMOVUPS (PX), Y0
	EXPS(Y0, Y1, Y2, Y3)
	VMOVUPS Y3, (PY)
	SUMS(Y3, X3, Y0, X0)
	ADDQ    $32, PX
	ADDQ    $32, PY
	SUBQ    $8, N

expsTail:
	TESTQ        N, N
	JZ           expsFold
	LEAQ         ·rowTailMask+32(SB), TMP
	MOVQ         N, NEG
	NEGQ         NEG
	VMOVDQU      (TMP)(NEG*4), MASK
	VMASKMOVPS   (PX), MASK, Y0
	EXPS(Y0, Y1, Y2, Y3)
	VANDPS       MASK, Y3, Y3 // lanes past n stay out of the sum
	VMASKMOVPS   Y3, MASK, (PY)
	SUMS(Y3, X3, Y0, X0)

expsFold:
	VEXTRACTF128 $1, SUM, X1
	VADDPD       X1, X13, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+32(FP)
	RET
