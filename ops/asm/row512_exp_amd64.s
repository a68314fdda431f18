//go:build amd64 && !purego

#include "textflag.h"

// The softmax exponentials, AVX-512: expShiftF32AVX512 and
// expScaleF32AVX512 (contracts in row512_amd64.go). Each runs the AVX2
// kernel's steps (row_amd64.s, row_expscale_amd64.s) on sixteen lanes, so
// every weight has the AVX2 kernel's bits; the constants are broadcast
// once into Z16-Z31 (32 registers leave room for them and four chains).
// Flushed lanes are cleared by zero-masking the last step with an opmask
// instead of an AND with a compare result.

// exp512 holds the constants, one float each (expDiff in row_go.go and
// expScaled in row_expscale.go).
DATA exp512<>+0(SB)/4, $0x3f318000  // ln2 hi
DATA exp512<>+4(SB)/4, $0xb95e8083  // ln2 lo
DATA exp512<>+8(SB)/4, $0x39506967  // P0
DATA exp512<>+12(SB)/4, $0x3ab743ce // P1
DATA exp512<>+16(SB)/4, $0x3c088908 // P2
DATA exp512<>+20(SB)/4, $0x3d2aa9c1 // P3
DATA exp512<>+24(SB)/4, $0x3e2aaaaa // P4
DATA exp512<>+28(SB)/4, $0x3f000000 // P5
DATA exp512<>+32(SB)/4, $0x3fb8aa3b // log2 e
DATA exp512<>+36(SB)/4, $0x3f800000 // 1
DATA exp512<>+40(SB)/4, $0x0000007f // 127, the exponent bias (int32)
DATA exp512<>+44(SB)/4, $0xc2aeac4f // expLo = -87.33654
DATA exp512<>+48(SB)/4, $0x4b40007f // 1.5·2^23 + 127 (expShifter)
DATA exp512<>+52(SB)/4, $0x4b400001 // 1.5·2^23 + 1: z below it is k < -126
GLOBL exp512<>(SB), RODATA|NOPTR, $56

#define PY  DI // y
#define PX  SI // x
#define N   CX // elements left
#define TMP AX

#define LN2HI Z16
#define LN2LO Z17
#define P0    Z18
#define P1    Z19
#define P2    Z20
#define P3    Z21
#define P4    Z22
#define P5    Z23
#define LOG2E Z24

// CONSTS broadcasts the constants both kernels use.
#define CONSTS \
	VBROADCASTSS exp512<>+0(SB), LN2HI;  \
	VBROADCASTSS exp512<>+4(SB), LN2LO;  \
	VBROADCASTSS exp512<>+8(SB), P0;     \
	VBROADCASTSS exp512<>+12(SB), P1;    \
	VBROADCASTSS exp512<>+16(SB), P2;    \
	VBROADCASTSS exp512<>+20(SB), P3;    \
	VBROADCASTSS exp512<>+24(SB), P4;    \
	VBROADCASTSS exp512<>+28(SB), P5;    \
	VBROADCASTSS exp512<>+32(SB), LOG2E

// TAILK sets opmask K to lanes 0..N-1 (1 <= N <= 15): (1<<N) - 1.
#define TAILK(K) \
	MOVL  $1, TMP; \
	SHLL  CX, TMP; \
	DECL  TMP;     \
	KMOVW TMP, K

// FOLDPD sums the eight float64 lanes of Z0 into X0 (Z1 scratch).
#define FOLDPD \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPD        Y1, Y0, Y0; \
	VEXTRACTF128  $1, Y0, X1; \
	VADDPD        X1, X0, X0; \
	VUNPCKHPD     X0, X0, X1; \
	VADDSD        X1, X0, X0

// ---------------------------------------------------------------------
// func expShiftF32AVX512(y, x *float32, n int, m float32) float64
// ---------------------------------------------------------------------
#define ONE   Z25
#define BIAS  Z26 // 127 in every int32 lane
#define LO    Z27
#define SHIFT Z28 // m in every lane
#define SUMA  Z29 // float64 sums of the results
#define SUMB  Z30

// EXP16 computes P = exp(X - m) in sixteen lanes (X is clobbered; E and R
// are scratch, KM an opmask), EXP8's steps in row_amd64.s:
//   - R = s = X - m rounded, X = e, its rounding error (TwoSum);
//   - KM marks the lanes not below expLo (NaN included): the others end 0;
//   - k = round(s·log2 e); R = r = s - k·ln2 (hi and lo, fused) + e;
//   - P = 1 + r + r²·poly(r), times 2^k built as (k+127)<<23.
#define EXP16(X, P, E, R, KM) \
	VSUBPS       SHIFT, X, R;  \
	VSUBPS       X, R, E;      \
	VSUBPS       E, R, P;      \
	VSUBPS       P, X, P;      \
	VADDPS       SHIFT, E, E;  \
	VSUBPS       E, P, X;      \
	VCMPPS       $5, LO, R, KM; \
	VMULPS       LOG2E, R, E;  \
	VRNDSCALEPS  $0, E, E;     \
	VFNMADD231PS LN2HI, E, R;  \
	VFNMADD231PS LN2LO, E, R;  \
	VADDPS       X, R, R;      \
	VMOVAPS      P0, P;        \
	VFMADD213PS  P1, R, P;     \
	VFMADD213PS  P2, R, P;     \
	VFMADD213PS  P3, R, P;     \
	VFMADD213PS  P4, R, P;     \
	VFMADD213PS  P5, R, P;     \
	VMULPS       R, R, X;      \
	VFMADD213PS  R, X, P;      \
	VADDPS       ONE, P, P;    \
	VCVTPS2DQ    E, E;         \
	VPADDD       BIAS, E, E;   \
	VPSLLD       $23, E, E;    \
	VMULPS.Z     E, P, KM, P

// SUM16 adds the sixteen floats of P, widened, to SUMA and SUMB (A, B
// scratch).
#define SUM16(P, YP, A, B, YB) \
	VCVTPS2PD     YP, A;         \
	VEXTRACTF32X8 $1, P, YB;     \
	VCVTPS2PD     YB, B;         \
	VADDPD        A, SUMA, SUMA; \
	VADDPD        B, SUMB, SUMB

TEXT ·expShiftF32AVX512(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS m+24(FP), SHIFT
	CONSTS
	VBROADCASTSS exp512<>+36(SB), ONE
	VPBROADCASTD exp512<>+40(SB), BIAS
	VBROADCASTSS exp512<>+44(SB), LO
	VXORPD       SUMA, SUMA, SUMA
	VXORPD       SUMB, SUMB, SUMB

exp32: // two independent chains of sixteen
	CMPQ    N, $32
	JB      exp16
	VMOVUPS (PX), Z0
	VMOVUPS 64(PX), Z5
	EXP16(Z0, Z1, Z2, Z3, K2)
	EXP16(Z5, Z6, Z7, Z8, K3)
	TESTQ   PY, PY
	JZ      exp32Sum
	VMOVUPS Z1, (PY)
	VMOVUPS Z6, 64(PY)
	ADDQ    $128, PY

exp32Sum:
	SUM16(Z1, Y1, Z2, Z3, Y3)
	SUM16(Z6, Y6, Z7, Z8, Y8)
	ADDQ $128, PX
	SUBQ $32, N
	JMP  exp32

exp16:
	CMPQ    N, $16
	JB      expTail
	VMOVUPS (PX), Z0
	EXP16(Z0, Z1, Z2, Z3, K2)
	TESTQ   PY, PY
	JZ      exp16Sum
	VMOVUPS Z1, (PY)
	ADDQ    $64, PY

exp16Sum:
	SUM16(Z1, Y1, Z2, Z3, Y3)
	ADDQ $64, PX
	SUBQ $16, N

expTail:
	TESTQ     N, N
	JZ        expFold
	TAILK(K1)
	VMOVUPS.Z (PX), K1, Z0
	EXP16(Z0, Z1, Z2, Z3, K2)
	VMOVAPS.Z Z1, K1, Z1   // lanes past n stay out of the sum
	TESTQ     PY, PY
	JZ        expTailSum
	VMOVUPS   Z1, K1, (PY)

expTailSum:
	SUM16(Z1, Y1, Z2, Z3, Y3)

expFold:
	VADDPD SUMB, SUMA, Z0
	FOLDPD
	VZEROUPPER
	MOVSD  X0, ret+32(FP)
	RET

#undef ONE
#undef BIAS
#undef LO
#undef SHIFT

// ---------------------------------------------------------------------
// func expScaleF32AVX512(y, x *float32, n int, s, m float32) float64
//
// expScaleF32AVX2's steps (see row_expscale_amd64.s):
//   - t = round(x·scale) - m;
//   - z = t·log2 e + (1.5·2^23 + 127) in one FMA (k + 127 in z's low
//     mantissa bits), k = z - (1.5·2^23 + 127) as a float;
//   - r = t - k·ln2 (hi and lo, fused), q = r + r²·poly(r), and the
//     result fma(q, 2^k, 2^k) with 2^k = z << 23, zero-masked where
//     k < -126 (a NaN compares unordered and stays).
// The main loop interleaves four chains of sixteen step by step.
// ---------------------------------------------------------------------
#define SHIFTER Z25
#define KMIN    Z26
#define SCALE   Z27
#define SHIFT   Z28 // m
#define SUM     Z29 // float64 sums

#define EXPT(R, E, P) \
	VSUBPS      SHIFT, R, R; \
	VMOVAPS     SHIFTER, E;  \
	VFMADD231PS LOG2E, R, E; \
	VSUBPS      SHIFTER, E, P

#define EXPR(R, P) \
	VFNMADD231PS LN2HI, P, R; \
	VFNMADD231PS LN2LO, P, R; \
	VMOVAPS      P0, P

#define EXPP1(R, P) \
	VFMADD213PS P1, R, P; \
	VFMADD213PS P2, R, P

#define EXPP2(R, P) \
	VFMADD213PS P3, R, P; \
	VFMADD213PS P4, R, P; \
	VFMADD213PS P5, R, P

#define EXPQ(R, E, P, T, KM) \
	VMULPS        R, R, T;        \
	VFMADD213PS   R, T, P;        \
	VCMPPS        $5, KMIN, E, KM; \
	VPSLLD        $23, E, E;      \
	VFMADD213PS.Z E, E, KM, P

// EXPS(R, E, P, T, KM): P = exp(R - m) for one vector R = x·scale.
#define EXPS(R, E, P, T, KM) \
	EXPT(R, E, P);  \
	EXPR(R, P);     \
	EXPP1(R, P);    \
	EXPP2(R, P);    \
	EXPQ(R, E, P, T, KM)

// SUMS adds the sixteen floats of P to SUM: the two halves are added in
// float32 first, then widened.
#define SUMS(P, YP, A, YA) \
	VEXTRACTF32X8 $1, P, YA;  \
	VADDPS        YA, YP, YA; \
	VCVTPS2PD     YA, A;      \
	VADDPD        A, SUM, SUM

TEXT ·expScaleF32AVX512(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS s+24(FP), SCALE
	VBROADCASTSS m+28(FP), SHIFT
	CONSTS
	VBROADCASTSS exp512<>+48(SB), SHIFTER
	VBROADCASTSS exp512<>+52(SB), KMIN
	VXORPD       SUM, SUM, SUM

exps64: // four chains, (Z0, Z1, Z2) to (Z9, Z10, Z11)
	CMPQ    N, $64
	JB      exps16
	VMULPS  (PX), SCALE, Z0
	VMULPS  64(PX), SCALE, Z3
	VMULPS  128(PX), SCALE, Z6
	VMULPS  192(PX), SCALE, Z9
	EXPT(Z0, Z1, Z2)
	EXPT(Z3, Z4, Z5)
	EXPT(Z6, Z7, Z8)
	EXPT(Z9, Z10, Z11)
	EXPR(Z0, Z2)
	EXPR(Z3, Z5)
	EXPR(Z6, Z8)
	EXPR(Z9, Z11)
	EXPP1(Z0, Z2)
	EXPP1(Z3, Z5)
	EXPP1(Z6, Z8)
	EXPP1(Z9, Z11)
	EXPP2(Z0, Z2)
	EXPP2(Z3, Z5)
	EXPP2(Z6, Z8)
	EXPP2(Z9, Z11)
	EXPQ(Z0, Z1, Z2, Z12, K2)
	EXPQ(Z3, Z4, Z5, Z13, K3)
	EXPQ(Z6, Z7, Z8, Z14, K4)
	EXPQ(Z9, Z10, Z11, Z15, K5)
	VMOVUPS Z2, (PY)
	VMOVUPS Z5, 64(PY)
	VMOVUPS Z8, 128(PY)
	VMOVUPS Z11, 192(PY)
	VADDPS  Z5, Z2, Z2      // the four vectors' weights, pairwise
	VADDPS  Z11, Z8, Z8
	VADDPS  Z8, Z2, Z2
	SUMS(Z2, Y2, Z0, Y0)    // then the two halves: 8 weights per float
	ADDQ    $256, PX
	ADDQ    $256, PY
	SUBQ    $64, N
	JMP     exps64

exps16:
	CMPQ    N, $16
	JB      expsTail
	VMULPS  (PX), SCALE, Z0
	EXPS(Z0, Z1, Z2, Z12, K2)
	VMOVUPS Z2, (PY)
	SUMS(Z2, Y2, Z0, Y0)
	ADDQ    $64, PX
	ADDQ    $64, PY
	SUBQ    $16, N
	JMP     exps16

expsTail:
	TESTQ     N, N
	JZ        expsFold
	TAILK(K1)
	VMOVUPS.Z (PX), K1, Z0
	VMULPS    SCALE, Z0, Z0
	EXPS(Z0, Z1, Z2, Z12, K2)
	VMOVAPS.Z Z2, K1, Z2    // lanes past n stay out of the sum
	VMOVUPS   Z2, K1, (PY)
	SUMS(Z2, Y2, Z0, Y0)

expsFold:
	VMOVAPD SUM, Z0
	FOLDPD
	VZEROUPPER
	MOVSD   X0, ret+32(FP)
	RET
