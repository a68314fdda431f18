//go:build amd64 && !purego

#include "textflag.h"

// Row primitives, AVX2+FMA. See row_amd64.go for each contract. Tails
// shorter than a vector use masked loads and stores, so nothing outside
// x[0:n] is read and nothing outside y[0:n] is written.

// rowTailMask is eight all-ones dwords then eight zero dwords: the eight
// dwords at rowTailMask+32-4r enable lanes 0..r-1. The other row_,
// reduce_ and conv_ assembly files use it too.
DATA ·rowTailMask+0(SB)/4, $0xffffffff
DATA ·rowTailMask+4(SB)/4, $0xffffffff
DATA ·rowTailMask+8(SB)/4, $0xffffffff
DATA ·rowTailMask+12(SB)/4, $0xffffffff
DATA ·rowTailMask+16(SB)/4, $0xffffffff
DATA ·rowTailMask+20(SB)/4, $0xffffffff
DATA ·rowTailMask+24(SB)/4, $0xffffffff
DATA ·rowTailMask+28(SB)/4, $0xffffffff
DATA ·rowTailMask+32(SB)/4, $0x00000000
DATA ·rowTailMask+36(SB)/4, $0x00000000
DATA ·rowTailMask+40(SB)/4, $0x00000000
DATA ·rowTailMask+44(SB)/4, $0x00000000
DATA ·rowTailMask+48(SB)/4, $0x00000000
DATA ·rowTailMask+52(SB)/4, $0x00000000
DATA ·rowTailMask+56(SB)/4, $0x00000000
DATA ·rowTailMask+60(SB)/4, $0x00000000
GLOBL ·rowTailMask(SB), RODATA|NOPTR, $64

// rowExp holds the constants of the exponential (expDiff in row_go.go),
// each repeated in eight lanes so they can be memory operands.
// 0: ln2 hi
DATA rowExp<>+0(SB)/4, $0x3f318000
DATA rowExp<>+4(SB)/4, $0x3f318000
DATA rowExp<>+8(SB)/4, $0x3f318000
DATA rowExp<>+12(SB)/4, $0x3f318000
DATA rowExp<>+16(SB)/4, $0x3f318000
DATA rowExp<>+20(SB)/4, $0x3f318000
DATA rowExp<>+24(SB)/4, $0x3f318000
DATA rowExp<>+28(SB)/4, $0x3f318000
// 32: ln2 lo
DATA rowExp<>+32(SB)/4, $0xb95e8083
DATA rowExp<>+36(SB)/4, $0xb95e8083
DATA rowExp<>+40(SB)/4, $0xb95e8083
DATA rowExp<>+44(SB)/4, $0xb95e8083
DATA rowExp<>+48(SB)/4, $0xb95e8083
DATA rowExp<>+52(SB)/4, $0xb95e8083
DATA rowExp<>+56(SB)/4, $0xb95e8083
DATA rowExp<>+60(SB)/4, $0xb95e8083
// 64: P0
DATA rowExp<>+64(SB)/4, $0x39506967
DATA rowExp<>+68(SB)/4, $0x39506967
DATA rowExp<>+72(SB)/4, $0x39506967
DATA rowExp<>+76(SB)/4, $0x39506967
DATA rowExp<>+80(SB)/4, $0x39506967
DATA rowExp<>+84(SB)/4, $0x39506967
DATA rowExp<>+88(SB)/4, $0x39506967
DATA rowExp<>+92(SB)/4, $0x39506967
// 96: P1
DATA rowExp<>+96(SB)/4, $0x3ab743ce
DATA rowExp<>+100(SB)/4, $0x3ab743ce
DATA rowExp<>+104(SB)/4, $0x3ab743ce
DATA rowExp<>+108(SB)/4, $0x3ab743ce
DATA rowExp<>+112(SB)/4, $0x3ab743ce
DATA rowExp<>+116(SB)/4, $0x3ab743ce
DATA rowExp<>+120(SB)/4, $0x3ab743ce
DATA rowExp<>+124(SB)/4, $0x3ab743ce
// 128: P2
DATA rowExp<>+128(SB)/4, $0x3c088908
DATA rowExp<>+132(SB)/4, $0x3c088908
DATA rowExp<>+136(SB)/4, $0x3c088908
DATA rowExp<>+140(SB)/4, $0x3c088908
DATA rowExp<>+144(SB)/4, $0x3c088908
DATA rowExp<>+148(SB)/4, $0x3c088908
DATA rowExp<>+152(SB)/4, $0x3c088908
DATA rowExp<>+156(SB)/4, $0x3c088908
// 160: P3
DATA rowExp<>+160(SB)/4, $0x3d2aa9c1
DATA rowExp<>+164(SB)/4, $0x3d2aa9c1
DATA rowExp<>+168(SB)/4, $0x3d2aa9c1
DATA rowExp<>+172(SB)/4, $0x3d2aa9c1
DATA rowExp<>+176(SB)/4, $0x3d2aa9c1
DATA rowExp<>+180(SB)/4, $0x3d2aa9c1
DATA rowExp<>+184(SB)/4, $0x3d2aa9c1
DATA rowExp<>+188(SB)/4, $0x3d2aa9c1
// 192: P4
DATA rowExp<>+192(SB)/4, $0x3e2aaaaa
DATA rowExp<>+196(SB)/4, $0x3e2aaaaa
DATA rowExp<>+200(SB)/4, $0x3e2aaaaa
DATA rowExp<>+204(SB)/4, $0x3e2aaaaa
DATA rowExp<>+208(SB)/4, $0x3e2aaaaa
DATA rowExp<>+212(SB)/4, $0x3e2aaaaa
DATA rowExp<>+216(SB)/4, $0x3e2aaaaa
DATA rowExp<>+220(SB)/4, $0x3e2aaaaa
// 224: P5
DATA rowExp<>+224(SB)/4, $0x3f000000
DATA rowExp<>+228(SB)/4, $0x3f000000
DATA rowExp<>+232(SB)/4, $0x3f000000
DATA rowExp<>+236(SB)/4, $0x3f000000
DATA rowExp<>+240(SB)/4, $0x3f000000
DATA rowExp<>+244(SB)/4, $0x3f000000
DATA rowExp<>+248(SB)/4, $0x3f000000
DATA rowExp<>+252(SB)/4, $0x3f000000
// 256: 1.0
DATA rowExp<>+256(SB)/4, $0x3f800000
DATA rowExp<>+260(SB)/4, $0x3f800000
DATA rowExp<>+264(SB)/4, $0x3f800000
DATA rowExp<>+268(SB)/4, $0x3f800000
DATA rowExp<>+272(SB)/4, $0x3f800000
DATA rowExp<>+276(SB)/4, $0x3f800000
DATA rowExp<>+280(SB)/4, $0x3f800000
DATA rowExp<>+284(SB)/4, $0x3f800000
// 288: 127 (int32 exponent bias)
DATA rowExp<>+288(SB)/4, $0x0000007f
DATA rowExp<>+292(SB)/4, $0x0000007f
DATA rowExp<>+296(SB)/4, $0x0000007f
DATA rowExp<>+300(SB)/4, $0x0000007f
DATA rowExp<>+304(SB)/4, $0x0000007f
DATA rowExp<>+308(SB)/4, $0x0000007f
DATA rowExp<>+312(SB)/4, $0x0000007f
DATA rowExp<>+316(SB)/4, $0x0000007f
GLOBL rowExp<>(SB), RODATA|NOPTR, $320

#define PY  DI // y
#define PX  SI // x
#define N   CX // elements left
#define TMP AX
#define NEG BX

// TAILMASK sets M to all-ones in lanes 0..N-1 (1 <= N <= 7).
#define TAILMASK(M) \
	LEAQ    ·rowTailMask+32(SB), TMP; \
	MOVQ    N, NEG;                   \
	NEGQ    NEG;                      \
	VMOVDQU (TMP)(NEG*4), M

// ---------------------------------------------------------------------
// func expShiftF32AVX2(y, x *float32, n int, m float32) float64
// ---------------------------------------------------------------------
#define SHIFT Y15 // m in every lane
#define LO    Y14 // expLo: below it the result is flushed to 0
#define LOG2E Y13
#define SUMA  Y12 // float64 sums of the results
#define SUMB  Y11
#define MASK  Y10

// EXP8 computes P = exp(X - m) in eight lanes (X is clobbered; K, R, M
// are scratch):
//   - R = s = X - m rounded, and X = e, its rounding error (Knuth's
//     TwoSum), so that a large |X - m| costs no precision;
//   - M marks s < expLo (and -Inf): those lanes end as 0;
//   - k = round(s·log2 e); R = r = s - k·ln2 (hi and lo parts, fused) + e;
//   - P = 1 + r + r²·poly(r), scaled by 2^k built as (k+127)<<23.
// A NaN gives a NaN P: the scale is garbage but NaN times anything is NaN.
#define EXP8(X, P, K, R, M) \
	VSUBPS       SHIFT, X, R;            \
	VSUBPS       X, R, K;                \
	VSUBPS       K, R, P;                \
	VSUBPS       P, X, P;                \
	VADDPS       SHIFT, K, K;            \
	VSUBPS       K, P, X;                \
	VCMPPS       $1, LO, R, M;           \
	VMULPS       LOG2E, R, K;            \
	VROUNDPS     $0, K, K;               \
	VFNMADD231PS rowExp<>+0(SB), K, R;   \
	VFNMADD231PS rowExp<>+32(SB), K, R;  \
	VADDPS       X, R, R;                \
	VMOVUPS      rowExp<>+64(SB), P;     \
	VFMADD213PS  rowExp<>+96(SB), R, P;  \
	VFMADD213PS  rowExp<>+128(SB), R, P; \
	VFMADD213PS  rowExp<>+160(SB), R, P; \
	VFMADD213PS  rowExp<>+192(SB), R, P; \
	VFMADD213PS  rowExp<>+224(SB), R, P; \
	VMULPS       R, R, X;                \
	VFMADD213PS  R, X, P;                \
	VADDPS       rowExp<>+256(SB), P, P; \
	VCVTPS2DQ    K, K;                   \
	VPADDD       rowExp<>+288(SB), K, K; \
	VPSLLD       $23, K, K;              \
	VMULPS       K, P, P;                \
	VANDNPS      P, M, P

// SUM8 adds the eight floats of P, widened, to SUMA and SUMB (A, B
// scratch).
#define SUM8(P, XP, A, B, XB) \
	VCVTPS2PD    XP, A;     \
	VEXTRACTF128 $1, P, XB; \
	VCVTPS2PD    XB, B;     \
	VADDPD       A, SUMA, SUMA; \
	VADDPD       B, SUMB, SUMB

TEXT ·expShiftF32AVX2(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS m+24(FP), SHIFT
	// VMOVD, not MOVQ: a legacy-SSE write to an X register while the
	// upper halves are dirty costs about a microsecond on this Zen 5
	// (measured: 270 ns per call, more than a 256-float row's work).
	MOVL         $0xc2aeac4f, TMP // expLo = -87.33654
	VMOVD        TMP, X14
	VBROADCASTSS X14, LO
	MOVL         $0x3fb8aa3b, TMP // log2 e
	VMOVD        TMP, X13
	VBROADCASTSS X13, LOG2E
	VXORPD       SUMA, SUMA, SUMA
	VXORPD       SUMB, SUMB, SUMB

exp16: // two independent chains of eight
	CMPQ    N, $16
	JB      exp8
	VMOVUPS (PX), Y0
	VMOVUPS 32(PX), Y5
	EXP8(Y0, Y1, Y2, Y3, Y4)
	EXP8(Y5, Y6, Y7, Y8, Y9)
	TESTQ   PY, PY
	JZ      exp16Sum
	VMOVUPS Y1, (PY)
	VMOVUPS Y6, 32(PY)
	ADDQ    $64, PY

exp16Sum:
	SUM8(Y1, X1, Y2, Y3, X3)
	SUM8(Y6, X6, Y7, Y8, X8)
	ADDQ $64, PX
	SUBQ $16, N
	JMP  exp16

exp8:
	CMPQ    N, $8
	JB      expTail
	VMOVUPS (PX), Y0
	EXP8(Y0, Y1, Y2, Y3, Y4)
	TESTQ   PY, PY
	JZ      exp8Sum
	VMOVUPS Y1, (PY)
	ADDQ    $32, PY

exp8Sum:
	SUM8(Y1, X1, Y2, Y3, X3)
	ADDQ $32, PX
	SUBQ $8, N

expTail:
	TESTQ      N, N
	JZ         expFold
	TAILMASK(MASK)
	VMASKMOVPS (PX), MASK, Y0
	EXP8(Y0, Y1, Y2, Y3, Y4)
	VANDPS     MASK, Y1, Y1 // lanes past n stay out of the sum
	TESTQ      PY, PY
	JZ         expTailSum
	VMASKMOVPS Y1, MASK, (PY)

expTailSum:
	SUM8(Y1, X1, Y2, Y3, X3)

expFold:
	VADDPD       SUMB, SUMA, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+32(FP)
	RET

#undef MASK

// ---------------------------------------------------------------------
// func scaleF32AVX2(y *float32, n int, s float32)
// ---------------------------------------------------------------------
#define S    Y15
#define MASK Y14

TEXT ·scaleF32AVX2(SB), NOSPLIT, $0-20
	MOVQ         y+0(FP), PY
	MOVQ         n+8(FP), N
	VBROADCASTSS s+16(FP), S

scale32:
	CMPQ    N, $32
	JB      scale8
	VMULPS  (PY), S, Y0
	VMULPS  32(PY), S, Y1
	VMULPS  64(PY), S, Y2
	VMULPS  96(PY), S, Y3
	VMOVUPS Y0, (PY)
	VMOVUPS Y1, 32(PY)
	VMOVUPS Y2, 64(PY)
	VMOVUPS Y3, 96(PY)
	ADDQ    $128, PY
	SUBQ    $32, N
	JMP     scale32

scale8:
	CMPQ    N, $8
	JB      scaleTail
	VMULPS  (PY), S, Y0
	VMOVUPS Y0, (PY)
	ADDQ    $32, PY
	SUBQ    $8, N
	JMP     scale8

scaleTail:
	TESTQ      N, N
	JZ         scaleDone
	TAILMASK(MASK)
	VMASKMOVPS (PY), MASK, Y0
	VMULPS     Y0, S, Y0
	VMASKMOVPS Y0, MASK, (PY)

scaleDone:
	VZEROUPPER
	RET

#undef S
#undef MASK

// ---------------------------------------------------------------------
// func normF32AVX2(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32)
// ---------------------------------------------------------------------
#define PS   R8  // scale
#define PB   R9  // bias
#define SS   R10 // bytes to advance scale per eight elements (0 or 32)
#define BS   R11 // same for bias
#define MHI  Y13
#define MLO  Y14
#define RSTD Y15
#define MASK Y12

// NORM8(X, S) turns the eight x in X into y: ((x-mhi)-mlo)·r, then
// fma(·, scale, bias) with scale loaded into S.
#define NORM8(X, S, off) \
	VSUBPS      MHI, X, X;          \
	VSUBPS      MLO, X, X;          \
	VMULPS      RSTD, X, X;            \
	VMOVUPS     off(PS), S;         \
	VFMADD213PS off(PB), S, X

TEXT ·normF32AVX2(SB), NOSPLIT, $0-68
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         scale+16(FP), PS
	MOVQ         bias+24(FP), PB
	MOVQ         n+32(FP), N
	MOVQ         sstep+40(FP), SS
	MOVQ         bstep+48(FP), BS
	SHLQ         $5, SS
	SHLQ         $5, BS
	VBROADCASTSS mhi+56(FP), MHI
	VBROADCASTSS mlo+60(FP), MLO
	VBROADCASTSS r+64(FP), RSTD

norm16:
	CMPQ    N, $16
	JB      norm8
	VMOVUPS (PX), Y0
	VMOVUPS 32(PX), Y2
	NORM8(Y0, Y1, 0)
	ADDQ    SS, PS
	ADDQ    BS, PB
	NORM8(Y2, Y3, 0)
	ADDQ    SS, PS
	ADDQ    BS, PB
	VMOVUPS Y0, (PY)
	VMOVUPS Y2, 32(PY)
	ADDQ    $64, PX
	ADDQ    $64, PY
	SUBQ    $16, N
	JMP     norm16

norm8:
	CMPQ    N, $8
	JB      normTail
	VMOVUPS (PX), Y0
	NORM8(Y0, Y1, 0)
	VMOVUPS Y0, (PY)
	ADDQ    SS, PS
	ADDQ    BS, PB
	ADDQ    $32, PX
	ADDQ    $32, PY
	SUBQ    $8, N

normTail:
	TESTQ       N, N
	JZ          normDone
	TAILMASK(MASK)
	VMASKMOVPS  (PX), MASK, Y0
	VMASKMOVPS  (PS), MASK, Y1
	VMASKMOVPS  (PB), MASK, Y2
	VSUBPS      MHI, Y0, Y0
	VSUBPS      MLO, Y0, Y0
	VMULPS      RSTD, Y0, Y0
	VFMADD213PS Y2, Y1, Y0
	VMASKMOVPS  Y0, MASK, (PY)

normDone:
	VZEROUPPER
	RET
