//go:build amd64 && !purego

#include "textflag.h"
#include "minmax_amd64.h"

// Reduction primitives, AVX2. See reduce_amd64.go for each contract.
// Tails shorter than a vector use masked loads (VMASKMOVPS reads nothing
// from masked-off lanes, so it never faults past the end of a slice) and
// masked stores (nothing is written past the end).

#define PX  SI // x
#define PA  DI // acc
#define N   CX // elements left
#define TMP AX
#define NEG BX

// TAILMASK sets M to all-ones in lanes 0..N-1 and zeros above (1 <= N <= 7):
// the eight dwords at rowTailMask+32-4N.
#define TAILMASK(M) \
	LEAQ    ·rowTailMask+32(SB), TMP; \
	MOVQ    N, NEG;                   \
	NEGQ    NEG;                      \
	VMOVDQU (TMP)(NEG*4), M

// ---------------------------------------------------------------------
// func sumF32AVX2(x *float32, n int) float64
// ---------------------------------------------------------------------
TEXT ·sumF32AVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), PX
	MOVQ   n+8(FP), N
	VXORPD Y0, Y0, Y0 // four float64 accumulators of four lanes
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sum16:
	CMPQ      N, $16
	JB        sum4
	VCVTPS2PD (PX), Y4   // x[0:4] widened
	VCVTPS2PD 16(PX), Y5
	VCVTPS2PD 32(PX), Y6
	VCVTPS2PD 48(PX), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, PX
	SUBQ      $16, N
	JMP       sum16

sum4:
	CMPQ      N, $4
	JB        sumFold
	VCVTPS2PD (PX), Y4
	VADDPD    Y4, Y0, Y0
	ADDQ      $16, PX
	SUBQ      $4, N
	JMP       sum4

sumFold:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1 // lane 1 into lane 0
	VADDSD       X1, X0, X0

sum1: // the last 0-3 elements, one at a time
	TESTQ     N, N
	JZ        sumDone
	VCVTSS2SD (PX), X2, X2
	VADDSD    X2, X0, X0
	ADDQ      $4, PX
	DECQ      N
	JMP       sum1

sumDone:
	VZEROUPPER
	MOVSD X0, ret+16(FP)
	RET

// ---------------------------------------------------------------------
// func sumSqDevF32AVX2(x *float32, n int, c float64) float64
// ---------------------------------------------------------------------
#define C Y8 // c in every lane

TEXT ·sumSqDevF32AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), PX
	MOVQ         n+8(FP), N
	VBROADCASTSD c+16(FP), C
	VXORPD       Y0, Y0, Y0
	VXORPD       Y1, Y1, Y1
	VXORPD       Y2, Y2, Y2
	VXORPD       Y3, Y3, Y3

sq16:
	CMPQ        N, $16
	JB          sq4
	VCVTPS2PD   (PX), Y4
	VCVTPS2PD   16(PX), Y5
	VCVTPS2PD   32(PX), Y6
	VCVTPS2PD   48(PX), Y7
	VSUBPD      C, Y4, Y4  // d = x - c
	VSUBPD      C, Y5, Y5
	VSUBPD      C, Y6, Y6
	VSUBPD      C, Y7, Y7
	VFMADD231PD Y4, Y4, Y0 // acc += d·d
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ        $64, PX
	SUBQ        $16, N
	JMP         sq16

sq4:
	CMPQ        N, $4
	JB          sqFold
	VCVTPS2PD   (PX), Y4
	VSUBPD      C, Y4, Y4
	VFMADD231PD Y4, Y4, Y0
	ADDQ        $16, PX
	SUBQ        $4, N
	JMP         sq4

sqFold:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0

sq1:
	TESTQ       N, N
	JZ          sqDone
	VCVTSS2SD   (PX), X2, X2
	VSUBSD      X8, X2, X2
	VFMADD231SD X2, X2, X0
	ADDQ        $4, PX
	DECQ        N
	JMP         sq1

sqDone:
	VZEROUPPER
	MOVSD X0, ret+24(FP)
	RET

#undef C

// ---------------------------------------------------------------------
// EXTREME(C, NAN4, NAN1, bits, labels...) is the body of maxF32AVX2 /
// minF32AVX2 / maxNumF32AVX2: four accumulators of eight lanes (starting
// at bits, the identity) fold 32 elements per step with C (MAXC or MINC:
// Go's max and min on numbers, -0 below +0; MAXN: one VMAXPS, which
// passes NaN over); NAN4 and NAN1 (NANS4 and NANS1, or NONE4 and NONE1)
// collect in NAN the lanes that saw a NaN (an unordered self-compare),
// which make the result NaN.
// ---------------------------------------------------------------------
#define IDENT Y13 // the identity (∓Inf) in every lane
#define NAN   Y4  // all-ones in lanes that met a NaN
#define MASK  Y14

// MAXC and MINC fold X into A (T scratch): VMAXPS/VMINPS return their
// second source on a tie, so they run both ways round and the results
// are ANDed (max(-0, +0) = +0) or ORed (min(-0, +0) = -0). A NaN
// operand leaves A undefined; EXTREME's NAN mask overrides it.
#define MAXC(X, A, T) VMAXPS X, A, T; VMAXPS A, X, A; VANDPS T, A, A
#define MINC(X, A, T) VMINPS X, A, T; VMINPS A, X, A; VORPS T, A, A

// MAXN folds X into A with one VMAXPS, A its second source: a NaN in X
// leaves A, so A never becomes NaN; a tie of -0 and +0 keeps A.
#define MAXN(X, A, T) VMAXPS A, X, A

#define NANS4(A, B, C, D) \
	VCMPPS $3, A, A, Y9;  \
	VCMPPS $3, B, B, Y10; \
	VCMPPS $3, C, C, Y11; \
	VCMPPS $3, D, D, Y12; \
	VORPS  Y9, Y10, Y10;  \
	VORPS  Y11, Y12, Y12; \
	VORPS  Y10, NAN, NAN; \
	VORPS  Y12, NAN, NAN
#define NANS1(A) \
	VCMPPS $3, A, A, Y9; \
	VORPS  Y9, NAN, NAN
#define NONE4(A, B, C, D)
#define NONE1(A)

#define EXTREME(C, NAN4, NAN1, bits, L32, L8, LTAIL, LFOLD, LDONE) \
	MOVL         $bits, TMP;             \
	VMOVD        TMP, X13;               \
	VBROADCASTSS X13, IDENT;             \
	VMOVAPS      IDENT, Y0;              \
	VMOVAPS      IDENT, Y1;              \
	VMOVAPS      IDENT, Y2;              \
	VMOVAPS      IDENT, Y3;              \
	VXORPS       NAN, NAN, NAN;          \
L32:                                     \
	CMPQ         N, $32;                 \
	JB           L8;                     \
	VMOVUPS      (PX), Y5;               \
	VMOVUPS      32(PX), Y6;             \
	VMOVUPS      64(PX), Y7;             \
	VMOVUPS      96(PX), Y8;             \
	C(Y5, Y0, Y9);                       \
	C(Y6, Y1, Y10);                      \
	C(Y7, Y2, Y11);                      \
	C(Y8, Y3, Y12);                      \
	NAN4(Y5, Y6, Y7, Y8);                \
	ADDQ         $128, PX;               \
	SUBQ         $32, N;                 \
	JMP          L32;                    \
L8:                                      \
	CMPQ         N, $8;                  \
	JB           LTAIL;                  \
	VMOVUPS      (PX), Y5;               \
	C(Y5, Y0, Y9);                       \
	NAN1(Y5);                            \
	ADDQ         $32, PX;                \
	SUBQ         $8, N;                  \
	JMP          L8;                     \
LTAIL:                                   \
	TESTQ        N, N;                   \
	JZ           LFOLD;                  \
	TAILMASK(MASK);                      \
	VMASKMOVPS   (PX), MASK, Y5;         \
	VBLENDVPS    MASK, Y5, IDENT, Y5;    \
	C(Y5, Y0, Y9);                       \
	NAN1(Y5);                            \
LFOLD:                                   \
	C(Y1, Y0, Y9);                       \
	C(Y3, Y2, Y9);                       \
	C(Y2, Y0, Y9);                       \
	VEXTRACTF128 $1, Y0, X1;             \
	C(X1, X0, X9);                       \
	VPERMILPS    $0x4e, X0, X1;          \
	C(X1, X0, X9);                       \
	VPERMILPS    $0xb1, X0, X1;          \
	C(X1, X0, X9);                       \
	VMOVMSKPS    NAN, TMP;               \
	TESTL        TMP, TMP;               \
	JZ           LDONE;                  \
	MOVL         $0x7fc00000, TMP;       \
	VMOVD        TMP, X0;                \
LDONE:                                   \
	VZEROUPPER

// func maxF32AVX2(x *float32, n int) float32
TEXT ·maxF32AVX2(SB), NOSPLIT, $0-20
	MOVQ  x+0(FP), PX
	MOVQ  n+8(FP), N
	EXTREME(MAXC, NANS4, NANS1, 0xff800000, max32, max8, maxTail, maxFold, maxDone)
	MOVSS X0, ret+16(FP)
	RET

// func maxNumF32AVX2(x *float32, n int) float32
TEXT ·maxNumF32AVX2(SB), NOSPLIT, $0-20
	MOVQ  x+0(FP), PX
	MOVQ  n+8(FP), N
	EXTREME(MAXN, NONE4, NONE1, 0xff800000, maxn32, maxn8, maxnTail, maxnFold, maxnDone)
	MOVSS X0, ret+16(FP)
	RET

// func minF32AVX2(x *float32, n int) float32
TEXT ·minF32AVX2(SB), NOSPLIT, $0-20
	MOVQ  x+0(FP), PX
	MOVQ  n+8(FP), N
	EXTREME(MINC, NANS4, NANS1, 0x7f800000, min32, min8, minTail, minFold, minDone)
	MOVSS X0, ret+16(FP)
	RET

// ---------------------------------------------------------------------
// func accAddF64AVX2(acc *float64, x *float32, n int)
// ---------------------------------------------------------------------
TEXT ·accAddF64AVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), PA
	MOVQ x+8(FP), PX
	MOVQ n+16(FP), N

add8:
	CMPQ      N, $8
	JB        add4
	VCVTPS2PD (PX), Y0
	VCVTPS2PD 16(PX), Y1
	VADDPD    (PA), Y0, Y0
	VADDPD    32(PA), Y1, Y1
	VMOVUPD   Y0, (PA)
	VMOVUPD   Y1, 32(PA)
	ADDQ      $32, PX
	ADDQ      $64, PA
	SUBQ      $8, N
	JMP       add8

add4:
	CMPQ      N, $4
	JB        add1
	VCVTPS2PD (PX), Y0
	VADDPD    (PA), Y0, Y0
	VMOVUPD   Y0, (PA)
	ADDQ      $16, PX
	ADDQ      $32, PA
	SUBQ      $4, N

add1:
	TESTQ     N, N
	JZ        addDone
	VCVTSS2SD (PX), X0, X0
	VADDSD    (PA), X0, X0
	VMOVSD    X0, (PA)
	ADDQ      $4, PX
	ADDQ      $8, PA
	DECQ      N
	JMP       add1

addDone:
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// ACC(OP, ...) is the body of accMaxF32AVX2 / accMinF32AVX2: acc =
// OP(acc, x) with OP_MAX or OP_MIN (minmax_amd64.h), Go's max and min:
// -0 orders below +0, and a NaN in either operand gives a NaN.
// ---------------------------------------------------------------------
#define ACC(OP, L8, LTAIL, LDONE) \
L8:                               \
	CMPQ       N, $8;             \
	JB         LTAIL;             \
	VMOVUPS    (PX), Y1;          \
	VMOVUPS    (PA), Y0;          \
	OP(Y1, Y0, Y2, Y3, Y4);       \
	VMOVUPS    Y2, (PA);          \
	ADDQ       $32, PX;           \
	ADDQ       $32, PA;           \
	SUBQ       $8, N;             \
	JMP        L8;                \
LTAIL:                            \
	TESTQ      N, N;              \
	JZ         LDONE;             \
	TAILMASK(MASK);               \
	VMASKMOVPS (PX), MASK, Y1;    \
	VMASKMOVPS (PA), MASK, Y0;    \
	OP(Y1, Y0, Y2, Y3, Y4);       \
	VMASKMOVPS Y2, MASK, (PA);    \
LDONE:                            \
	VZEROUPPER

// func accMaxF32AVX2(acc, x *float32, n int)
TEXT ·accMaxF32AVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), PA
	MOVQ x+8(FP), PX
	MOVQ n+16(FP), N
	ACC(OP_MAX, amax8, amaxTail, amaxDone)
	RET

// func accMinF32AVX2(acc, x *float32, n int)
TEXT ·accMinF32AVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), PA
	MOVQ x+8(FP), PX
	MOVQ n+16(FP), N
	ACC(OP_MIN, amin8, aminTail, aminDone)
	RET
