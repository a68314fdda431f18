//go:build amd64 && !purego

#include "textflag.h"

// func expScaleF32AVX2(y, x *float32, n int, scale, m float32) float64
//
// y[i] = exp(x[i]·scale - m), the sum returned in float64 (see
// expScaleGo). Built for throughput, as the attention kernel's softmax
// needs it: 17 vector operations per eight elements where expShift takes
// 26. One vector's steps form a chain of about 50 cycles, so the main
// loop runs four vectors, their steps interleaved, for the out-of-order
// core to overlap (15-20% faster than two back to back on Zen 5). The
// sum: the main loop adds its four vectors pairwise in float32, then the
// two halves, and widens the four sums into SUM (float64); the shorter
// loops add each vector's halves. So each float32 partial is a tree of
// at most 8 non-negative terms, 3 roundings deep: within 1.8e-7 of its
// exact value (relative), as the whole sum is. Cutting the per-vector
// widening to one per four vectors took 5-10% off the kernel.
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
#define TT    Y12 // a temporary of EXPQ, shared by the chains
#define MASK  Y11 // tail lanes (the fourth chain is idle then)

// The exponential of eight floats R = x·scale in five steps, so that the
// main loop can interleave four chains (R, K, P), step by step: EXPT sets
// R = t = x·scale - m, K = z and P = k; EXPR reduces R to r and starts the
// polynomial; EXPP1 and EXPP2 run it; EXPQ leaves exp(t) in P (R, K and
// TT clobbered).
#define EXPT(R, K, P) \
	VSUBPS      SHIFT, R, R;             \
	VMOVUPS     rowExpS<>+288(SB), K;    \
	VFMADD231PS rowExpS<>+256(SB), R, K; \
	VSUBPS      rowExpS<>+288(SB), K, P

#define EXPR(R, P) \
	VFNMADD231PS rowExpS<>+0(SB), P, R;  \
	VFNMADD231PS rowExpS<>+32(SB), P, R; \
	VMOVUPS      rowExpS<>+64(SB), P

#define EXPP1(R, P) \
	VFMADD213PS rowExpS<>+96(SB), R, P; \
	VFMADD213PS rowExpS<>+128(SB), R, P

#define EXPP2(R, P) \
	VFMADD213PS rowExpS<>+160(SB), R, P; \
	VFMADD213PS rowExpS<>+192(SB), R, P; \
	VFMADD213PS rowExpS<>+224(SB), R, P

#define EXPQ(R, K, P) \
	VMULPS      R, R, TT;                       \
	VFMADD213PS R, TT, P;                       \
	VCMPPS      $1, rowExpS<>+320(SB), K, TT;   \
	VPSLLD      $23, K, K;                      \
	VFMADD213PS K, K, P;                        \
	VANDNPS     P, TT, P

// EXPS(R, K, P): P = exp(R - m) for one vector R = x·scale.
#define EXPS(R, K, P) \
	EXPT(R, K, P); \
	EXPR(R, P);    \
	EXPP1(R, P);   \
	EXPP2(R, P);   \
	EXPQ(R, K, P)

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

exps32: // four chains, (Y0, Y1, Y2) to (Y9, Y10, Y11)
	CMPQ   N, $32
	JB     exps8
	VMULPS (PX), SCALE, Y0
	VMULPS 32(PX), SCALE, Y3
	VMULPS 64(PX), SCALE, Y6
	VMULPS 96(PX), SCALE, Y9
	EXPT(Y0, Y1, Y2)
	EXPT(Y3, Y4, Y5)
	EXPT(Y6, Y7, Y8)
	EXPT(Y9, Y10, Y11)
	EXPR(Y0, Y2)
	EXPR(Y3, Y5)
	EXPR(Y6, Y8)
	EXPR(Y9, Y11)
	EXPP1(Y0, Y2)
	EXPP1(Y3, Y5)
	EXPP1(Y6, Y8)
	EXPP1(Y9, Y11)
	EXPP2(Y0, Y2)
	EXPP2(Y3, Y5)
	EXPP2(Y6, Y8)
	EXPP2(Y9, Y11)
	EXPQ(Y0, Y1, Y2)
	EXPQ(Y3, Y4, Y5)
	EXPQ(Y6, Y7, Y8)
	EXPQ(Y9, Y10, Y11)
	VMOVUPS Y2, (PY)
	VMOVUPS Y5, 32(PY)
	VMOVUPS Y8, 64(PY)
	VMOVUPS Y11, 96(PY)
	VADDPS  Y5, Y2, Y2        // the four vectors' weights, pairwise
	VADDPS  Y11, Y8, Y8
	VADDPS  Y8, Y2, Y2
	SUMS(Y2, X2, Y0, X0)
	ADDQ    $128, PX
	ADDQ    $128, PY
	SUBQ    $32, N
	JMP     exps32

exps8:
	CMPQ   N, $8
	JB     expsTail
	VMULPS (PX), SCALE, Y0
	EXPS(Y0, Y1, Y2)
	VMOVUPS Y2, (PY)
	SUMS(Y2, X2, Y0, X0)
	ADDQ    $32, PX
	ADDQ    $32, PY
	SUBQ    $8, N
	JMP     exps8

expsTail:
	TESTQ        N, N
	JZ           expsFold
	LEAQ         ·rowTailMask+32(SB), TMP
	MOVQ         N, NEG
	NEGQ         NEG
	VMOVDQU      (TMP)(NEG*4), MASK
	VMASKMOVPS   (PX), MASK, Y0
	VMULPS       SCALE, Y0, Y0
	EXPS(Y0, Y1, Y2)
	VANDPS       MASK, Y2, Y2 // lanes past n stay out of the sum
	VMASKMOVPS   Y2, MASK, (PY)
	SUMS(Y2, X2, Y0, X0)

expsFold:
	VEXTRACTF128 $1, SUM, X1
	VADDPD       X1, X13, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+32(FP)
	RET
