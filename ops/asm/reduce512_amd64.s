//go:build amd64 && !purego

#include "textflag.h"

// Reduction primitives, AVX-512 (F/DQ/VL). See row512_amd64.go for each
// contract. Tails shorter than a vector run under an opmask: masked-off
// lanes of a masked load are not read (no fault past the end of a slice)
// and of a masked store not written.

#define PX  SI // x
#define PA  DI // acc
#define N   CX // elements left
#define TMP AX

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
// func sumF32AVX512(x *float32, n int) float64
// ---------------------------------------------------------------------
TEXT ·sumF32AVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), PX
	MOVQ   n+8(FP), N
	VXORPD Z0, Z0, Z0 // eight accumulators of eight float64 lanes
	VXORPD Z1, Z1, Z1
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3
	VXORPD Z4, Z4, Z4
	VXORPD Z5, Z5, Z5
	VXORPD Z6, Z6, Z6
	VXORPD Z7, Z7, Z7

sum64:
	CMPQ      N, $64
	JB        sum8
	VCVTPS2PD (PX), Z8     // x[0:8] widened
	VCVTPS2PD 32(PX), Z9
	VCVTPS2PD 64(PX), Z10
	VCVTPS2PD 96(PX), Z11
	VCVTPS2PD 128(PX), Z12
	VCVTPS2PD 160(PX), Z13
	VCVTPS2PD 192(PX), Z14
	VCVTPS2PD 224(PX), Z15
	VADDPD    Z8, Z0, Z0
	VADDPD    Z9, Z1, Z1
	VADDPD    Z10, Z2, Z2
	VADDPD    Z11, Z3, Z3
	VADDPD    Z12, Z4, Z4
	VADDPD    Z13, Z5, Z5
	VADDPD    Z14, Z6, Z6
	VADDPD    Z15, Z7, Z7
	ADDQ      $256, PX
	SUBQ      $64, N
	JMP       sum64

sum8:
	CMPQ      N, $8
	JB        sumTail
	VCVTPS2PD (PX), Z8
	VADDPD    Z8, Z0, Z0
	ADDQ      $32, PX
	SUBQ      $8, N
	JMP       sum8

sumTail: // the last 0-7 elements, masked (zeros above)
	TESTQ     N, N
	JZ        sumFold
	TAILK(K1)
	VMOVUPS.Z (PX), K1, Y8
	VCVTPS2PD Y8, Z8
	VADDPD    Z8, Z1, Z1

sumFold:
	VADDPD Z1, Z0, Z0
	VADDPD Z3, Z2, Z2
	VADDPD Z5, Z4, Z4
	VADDPD Z7, Z6, Z6
	VADDPD Z2, Z0, Z0
	VADDPD Z6, Z4, Z4
	VADDPD Z4, Z0, Z0
	FOLDPD
	VZEROUPPER
	MOVSD  X0, ret+16(FP)
	RET

// ---------------------------------------------------------------------
// func sumSqDevF32AVX512(x *float32, n int, c float64) float64
// ---------------------------------------------------------------------
#define C Z16 // c in every lane

TEXT ·sumSqDevF32AVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), PX
	MOVQ         n+8(FP), N
	VBROADCASTSD c+16(FP), C
	VXORPD       Z0, Z0, Z0
	VXORPD       Z1, Z1, Z1
	VXORPD       Z2, Z2, Z2
	VXORPD       Z3, Z3, Z3
	VXORPD       Z4, Z4, Z4
	VXORPD       Z5, Z5, Z5
	VXORPD       Z6, Z6, Z6
	VXORPD       Z7, Z7, Z7

sq64:
	CMPQ        N, $64
	JB          sq8
	VCVTPS2PD   (PX), Z8
	VCVTPS2PD   32(PX), Z9
	VCVTPS2PD   64(PX), Z10
	VCVTPS2PD   96(PX), Z11
	VCVTPS2PD   128(PX), Z12
	VCVTPS2PD   160(PX), Z13
	VCVTPS2PD   192(PX), Z14
	VCVTPS2PD   224(PX), Z15
	VSUBPD      C, Z8, Z8      // d = x - c
	VSUBPD      C, Z9, Z9
	VSUBPD      C, Z10, Z10
	VSUBPD      C, Z11, Z11
	VSUBPD      C, Z12, Z12
	VSUBPD      C, Z13, Z13
	VSUBPD      C, Z14, Z14
	VSUBPD      C, Z15, Z15
	VFMADD231PD Z8, Z8, Z0     // acc += d·d
	VFMADD231PD Z9, Z9, Z1
	VFMADD231PD Z10, Z10, Z2
	VFMADD231PD Z11, Z11, Z3
	VFMADD231PD Z12, Z12, Z4
	VFMADD231PD Z13, Z13, Z5
	VFMADD231PD Z14, Z14, Z6
	VFMADD231PD Z15, Z15, Z7
	ADDQ        $256, PX
	SUBQ        $64, N
	JMP         sq64

sq8:
	CMPQ        N, $8
	JB          sqTail
	VCVTPS2PD   (PX), Z8
	VSUBPD      C, Z8, Z8
	VFMADD231PD Z8, Z8, Z0
	ADDQ        $32, PX
	SUBQ        $8, N
	JMP         sq8

sqTail:
	TESTQ       N, N
	JZ          sqFold
	TAILK(K1)
	VMOVUPS.Z   (PX), K1, Y8
	VCVTPS2PD   Y8, Z8
	VSUBPD.Z    C, Z8, K1, Z8 // lanes past n: d = 0
	VFMADD231PD Z8, Z8, Z1

sqFold:
	VADDPD Z1, Z0, Z0
	VADDPD Z3, Z2, Z2
	VADDPD Z5, Z4, Z4
	VADDPD Z7, Z6, Z6
	VADDPD Z2, Z0, Z0
	VADDPD Z6, Z4, Z4
	VADDPD Z4, Z0, Z0
	FOLDPD
	VZEROUPPER
	MOVSD  X0, ret+24(FP)
	RET

#undef C

// ---------------------------------------------------------------------
// EXTREME(OP, TRACK, bits, labels...) is the body of maxF32AVX512 /
// minF32AVX512 / maxNumF32AVX512: four accumulators of sixteen lanes
// (starting at bits, the identity) fold 64 elements per step with OP,
// then fold into X0. OP(X, A) sets A = op(A, X):
//   - RMAX, RMIN: VRANGEPS with imm8 5 (4): the larger (smaller) operand
//     with its own sign, -0 below +0. On numbers that is Go's max (min);
//     but a quiet NaN operand loses to the other (IEEE maxNum), so
//   - NANS (TRACK) keeps in Z9-Z12 the unsigned max of the elements'
//     bits shifted left by one (the sign dropped): above 0xff000000 (an
//     infinity's) only where a NaN was seen, which makes the result NaN.
//     Two integer operations with a one-cycle chain: an ordered compare
//     into an opmask written under itself (one instruction) measured
//     20-30% slower on Zen 5, its chain running through the opmask;
//   - NMAX: one VMAXPS with the accumulator as its second source, which
//     VMAXPS returns when either operand is NaN: NaNs are passed over
//     (NONE: no tracking).
// The tail loads under a merge mask (K5) into a copy of the identity, so
// lanes past n hold the identity.
// ---------------------------------------------------------------------
#define IDENT Z13 // the identity (∓Inf) in every lane

#define RMAX(X, A) VRANGEPS $5, X, A, A
#define RMIN(X, A) VRANGEPS $4, X, A, A
#define NMAX(X, A) VMAXPS A, X, A

#define NANS(X, T, M) VPSLLD $1, X, T; VPMAXUD T, M, M
#define NONE(X, T, M)

#define EXTREME(OP, TRACK, bits, L64, L16, LTAIL, LFOLD, LDONE) \
	MOVL          $bits, TMP;       \
	VPBROADCASTD  TMP, IDENT;       \
	VMOVAPS       IDENT, Z0;        \
	VMOVAPS       IDENT, Z1;        \
	VMOVAPS       IDENT, Z2;        \
	VMOVAPS       IDENT, Z3;        \
	VPXORD        Z9, Z9, Z9;       \
	VPXORD        Z10, Z10, Z10;    \
	VPXORD        Z11, Z11, Z11;    \
	VPXORD        Z12, Z12, Z12;    \
L64:                                \
	CMPQ          N, $64;           \
	JB            L16;              \
	VMOVUPS       (PX), Z5;         \
	VMOVUPS       64(PX), Z6;       \
	VMOVUPS       128(PX), Z7;      \
	VMOVUPS       192(PX), Z8;      \
	OP(Z5, Z0);                     \
	OP(Z6, Z1);                     \
	OP(Z7, Z2);                     \
	OP(Z8, Z3);                     \
	TRACK(Z5, Z14, Z9);             \
	TRACK(Z6, Z15, Z10);            \
	TRACK(Z7, Z16, Z11);            \
	TRACK(Z8, Z17, Z12);            \
	ADDQ          $256, PX;         \
	SUBQ          $64, N;           \
	JMP           L64;              \
L16:                                \
	CMPQ          N, $16;           \
	JB            LTAIL;            \
	VMOVUPS       (PX), Z5;         \
	OP(Z5, Z0);                     \
	TRACK(Z5, Z14, Z9);             \
	ADDQ          $64, PX;          \
	SUBQ          $16, N;           \
	JMP           L16;              \
LTAIL:                              \
	TESTQ         N, N;             \
	JZ            LFOLD;            \
	TAILK(K5);                      \
	VMOVAPS       IDENT, Z5;        \
	VMOVUPS       (PX), K5, Z5;     \
	OP(Z5, Z1);                     \
	TRACK(Z5, Z14, Z10);            \
LFOLD:                              \
	OP(Z1, Z0);                     \
	OP(Z3, Z2);                     \
	OP(Z2, Z0);                     \
	VEXTRACTF32X8 $1, Z0, Y1;       \
	OP(Y1, Y0);                     \
	VEXTRACTF128  $1, Y0, X1;       \
	OP(X1, X0);                     \
	VPERMILPS     $0x4e, X0, X1;    \
	OP(X1, X0);                     \
	VPERMILPS     $0xb1, X0, X1;    \
	OP(X1, X0);                     \
	VPMAXUD       Z10, Z9, Z9;      \
	VPMAXUD       Z12, Z11, Z11;    \
	VPMAXUD       Z11, Z9, Z9;      \
	MOVL          $0xff000000, TMP; \
	VPBROADCASTD  TMP, Z10;         \
	VPCMPUD       $6, Z10, Z9, K1;  \
	KORTESTW      K1, K1;           \
	JEQ           LDONE;            \
	MOVL          $0x7fc00000, TMP; \
	VMOVD         TMP, X0;          \
LDONE:                              \
	VZEROUPPER

// func maxF32AVX512(x *float32, n int) float32
TEXT ·maxF32AVX512(SB), NOSPLIT, $0-20
	MOVQ  x+0(FP), PX
	MOVQ  n+8(FP), N
	EXTREME(RMAX, NANS, 0xff800000, max64, max16, maxTail, maxFold, maxDone)
	MOVSS X0, ret+16(FP)
	RET

// func maxNumF32AVX512(x *float32, n int) float32
TEXT ·maxNumF32AVX512(SB), NOSPLIT, $0-20
	MOVQ  x+0(FP), PX
	MOVQ  n+8(FP), N
	EXTREME(NMAX, NONE, 0xff800000, maxn64, maxn16, maxnTail, maxnFold, maxnDone)
	MOVSS X0, ret+16(FP)
	RET

// func minF32AVX512(x *float32, n int) float32
TEXT ·minF32AVX512(SB), NOSPLIT, $0-20
	MOVQ  x+0(FP), PX
	MOVQ  n+8(FP), N
	EXTREME(RMIN, NANS, 0x7f800000, min64, min16, minTail, minFold, minDone)
	MOVSS X0, ret+16(FP)
	RET

// ---------------------------------------------------------------------
// func accAddF64AVX512(acc *float64, x *float32, n int)
// ---------------------------------------------------------------------
TEXT ·accAddF64AVX512(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), PA
	MOVQ x+8(FP), PX
	MOVQ n+16(FP), N

add16:
	CMPQ      N, $16
	JB        add8
	VCVTPS2PD (PX), Z0
	VCVTPS2PD 32(PX), Z1
	VADDPD    (PA), Z0, Z0
	VADDPD    64(PA), Z1, Z1
	VMOVUPD   Z0, (PA)
	VMOVUPD   Z1, 64(PA)
	ADDQ      $64, PX
	ADDQ      $128, PA
	SUBQ      $16, N
	JMP       add16

add8:
	CMPQ      N, $8
	JB        addTail
	VCVTPS2PD (PX), Z0
	VADDPD    (PA), Z0, Z0
	VMOVUPD   Z0, (PA)
	ADDQ      $32, PX
	ADDQ      $64, PA
	SUBQ      $8, N

addTail:
	TESTQ     N, N
	JZ        addDone
	TAILK(K1)
	VMOVUPS.Z (PX), K1, Y0
	VCVTPS2PD Y0, Z0
	VMOVUPD.Z (PA), K1, Z1
	VADDPD    Z1, Z0, Z0
	VMOVUPD   Z0, K1, (PA)

addDone:
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// ACC(OP, ...) is the body of accMaxF32AVX512 / accMinF32AVX512: acc =
// op(acc, x) with VRANGEPS $IMM (5: max, 4: min; Go's max and min on
// numbers, see EXTREME);
// FIXNAN then sets the lanes where either operand is NaN to acc + x, a
// NaN, as Go's max and min return.
// ---------------------------------------------------------------------
#define FIXNAN(X, A, R, K) \
	VCMPPS $3, X, A, K; \
	VADDPS X, A, K, R

#define ACC(IMM, L32, L16, LTAIL, LDONE) \
L32:                                \
	CMPQ      N, $32;               \
	JB        L16;                  \
	VMOVUPS   (PA), Z0;             \
	VMOVUPS   64(PA), Z1;           \
	VMOVUPS   (PX), Z2;             \
	VMOVUPS   64(PX), Z3;           \
	VRANGEPS  $IMM, Z2, Z0, Z4;     \
	VRANGEPS  $IMM, Z3, Z1, Z5;     \
	FIXNAN(Z2, Z0, Z4, K2);         \
	FIXNAN(Z3, Z1, Z5, K3);         \
	VMOVUPS   Z4, (PA);             \
	VMOVUPS   Z5, 64(PA);           \
	ADDQ      $128, PX;             \
	ADDQ      $128, PA;             \
	SUBQ      $32, N;               \
	JMP       L32;                  \
L16:                                \
	CMPQ      N, $16;               \
	JB        LTAIL;                \
	VMOVUPS   (PA), Z0;             \
	VMOVUPS   (PX), Z2;             \
	VRANGEPS  $IMM, Z2, Z0, Z4;     \
	FIXNAN(Z2, Z0, Z4, K2);         \
	VMOVUPS   Z4, (PA);             \
	ADDQ      $64, PX;              \
	ADDQ      $64, PA;              \
	SUBQ      $16, N;               \
LTAIL:                              \
	TESTQ     N, N;                 \
	JZ        LDONE;                \
	TAILK(K1);                      \
	VMOVUPS.Z (PA), K1, Z0;         \
	VMOVUPS.Z (PX), K1, Z2;         \
	VRANGEPS  $IMM, Z2, Z0, Z4;     \
	FIXNAN(Z2, Z0, Z4, K2);         \
	VMOVUPS   Z4, K1, (PA);         \
LDONE:                              \
	VZEROUPPER

// func accMaxF32AVX512(acc, x *float32, n int)
TEXT ·accMaxF32AVX512(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), PA
	MOVQ x+8(FP), PX
	MOVQ n+16(FP), N
	ACC(5, amax32, amax16, amaxTail, amaxDone)
	RET

// func accMinF32AVX512(acc, x *float32, n int)
TEXT ·accMinF32AVX512(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), PA
	MOVQ x+8(FP), PX
	MOVQ n+16(FP), N
	ACC(4, amin32, amin16, aminTail, aminDone)
	RET
