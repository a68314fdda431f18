//go:build !purego

#include "textflag.h"
#include "minmax_amd64.h"

// AVX2 elementwise kernels without transcendental functions (those are in
// math_amd64.s): dst[i] = x[i] op y[i] (VV), x[i] op s (VS), s op y[i]
// (SV), and relu, neg, abs, for n a multiple of 8 (checked in Go). The
// loops take 4 vectors (32 floats) per step, then single vectors. Every
// vector is loaded before its result is stored, so dst may be x or y.
// With stream set (STREAM), dst is 32-byte aligned and the stores are
// non-temporal, fenced at the end.

// Registers. The general ones have one role in every kernel:
#define DST    DI // dst, advanced as results are stored
#define SRC    SI // the vector operand streamed in: x (y for SV)
#define SRCY   DX // VV's second vector operand, y
#define STEPS4 BX // steps of four vectors (32 floats) left
#define STEPS1 CX // then steps of one vector (8 floats) left
#define STREAM R8 // nonzero: non-temporal stores (dst 32-byte aligned)

// The vector registers: IN0-IN3 the four vectors loaded from SRC,
// INY0-INY3 VV's four from SRCY (scratch in the other kernels), OUT0-OUT3
// the results STORE4 writes (OUT0 for STORE1), BCAST the scalar (VS, SV)
// or constant (UN) in every lane (scratch in VV). Y12-Y15 and the unused
// ones above are scratch for OP_MAX and OP_MIN, named as they are.
#define IN0   Y0
#define IN1   Y1
#define IN2   Y2
#define IN3   Y3
#define INY0  Y4
#define INY1  Y5
#define INY2  Y6
#define INY3  Y7
#define OUT0  Y8
#define OUT1  Y9
#define OUT2  Y10
#define OUT3  Y11
#define BCAST Y15

// Each OP_* computes D = A op B, keeping A and B; T and U are scratch.
#define OP_ADD(B, A, D, T, U) VADDPS B, A, D
#define OP_SUB(B, A, D, T, U) VSUBPS B, A, D
#define OP_MUL(B, A, D, T, U) VMULPS B, A, D
#define OP_DIV(B, A, D, T, U) VDIVPS B, A, D

// OP_MAX and OP_MIN: minmax_amd64.h.

// STORE4 and STORE1 write OUT0-OUT3 (OUT0) at DST, non-temporally if
// STREAM is set.
#define STORE4 \
	TESTQ    STREAM, STREAM  \
	JNZ      nt4             \
	VMOVUPS  OUT0, (DST)     \ // cached stores
	VMOVUPS  OUT1, 32(DST)   \
	VMOVUPS  OUT2, 64(DST)   \
	VMOVUPS  OUT3, 96(DST)   \
	JMP      adv4            \
nt4:                         \
	VMOVNTPS OUT0, (DST)     \ // around the cache
	VMOVNTPS OUT1, 32(DST)   \
	VMOVNTPS OUT2, 64(DST)   \
	VMOVNTPS OUT3, 96(DST)   \
adv4:

#define STORE1 \
	TESTQ    STREAM, STREAM \
	JNZ      nt1            \
	VMOVUPS  OUT0, (DST)    \
	JMP      adv1           \
nt1:                        \
	VMOVNTPS OUT0, (DST)    \
adv1:

// SPLIT turns STEPS1, the element count n (a multiple of 8), into
// STEPS4 four-vector steps and STEPS1 = 0-3 single vectors after them,
// and jumps to tail when there are no four-vector steps.
#define SPLIT \
	SHRQ  $3, STEPS1     \ // vectors of 8
	MOVQ  STEPS1, STEPS4 \
	SHRQ  $2, STEPS4     \ // steps of four vectors
	ANDQ  $3, STEPS1     \ // and the 0-3 left over
	TESTQ STEPS4, STEPS4 \
	JZ    tail

// FINISH fences non-temporal stores (they are weakly ordered) before
// returning.
#define FINISH \
	TESTQ STREAM, STREAM \
	JZ    ret            \
	SFENCE               \
ret:                     \
	VZEROUPPER           \
	RET

// VV: dst[i] = x[i] op y[i].
#define VV(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ    dst+0(FP), DST          \
	MOVQ    x+8(FP), SRC            \
	MOVQ    y+16(FP), SRCY          \
	MOVQ    n+24(FP), STEPS1        \
	MOVBLZX stream+32(FP), STREAM   \
	SPLIT                           \
loop4:                              \ // four vectors of x and of y a step
	VMOVUPS (SRC), IN0              \
	VMOVUPS 32(SRC), IN1            \
	VMOVUPS 64(SRC), IN2            \
	VMOVUPS 96(SRC), IN3            \
	VMOVUPS (SRCY), INY0            \
	VMOVUPS 32(SRCY), INY1          \
	VMOVUPS 64(SRCY), INY2          \
	VMOVUPS 96(SRCY), INY3          \
	OP(INY0, IN0, OUT0, Y12, Y13)   \
	OP(INY1, IN1, OUT1, Y14, Y15)   \
	OP(INY2, IN2, OUT2, Y12, Y13)   \
	OP(INY3, IN3, OUT3, Y14, Y15)   \
	STORE4                          \
	ADDQ    $128, SRC               \
	ADDQ    $128, SRCY              \
	ADDQ    $128, DST               \
	DECQ    STEPS4                  \
	JNZ     loop4                   \
tail:                               \ // then one vector a step
	TESTQ   STEPS1, STEPS1          \
	JZ      done                    \
loop1:                              \
	VMOVUPS (SRC), IN0              \
	VMOVUPS (SRCY), INY0            \
	OP(INY0, IN0, OUT0, Y12, Y13)   \
	STORE1                          \
	ADDQ    $32, SRC                \
	ADDQ    $32, SRCY               \
	ADDQ    $32, DST                \
	DECQ    STEPS1                  \
	JNZ     loop1                   \
done:                               \
	FINISH

// XS and SX apply OP to a vector V and the scalar in BCAST, V on the A
// side (x op s) or on the B side (s op y).
#define XS(OP, V, D, T, U) OP(BCAST, V, D, T, U)
#define SX(OP, V, D, T, U) OP(V, BCAST, D, T, U)

// SCALAR is VS's and SV's body once the arguments are in: the vector
// operand streams in through SRC, SIDE (XS or SX) places it.
#define SCALAR(OP, SIDE) \
	SPLIT                           \
loop4:                              \ // four vectors a step
	VMOVUPS (SRC), IN0              \
	VMOVUPS 32(SRC), IN1            \
	VMOVUPS 64(SRC), IN2            \
	VMOVUPS 96(SRC), IN3            \
	SIDE(OP, IN0, OUT0, Y12, Y13)   \
	SIDE(OP, IN1, OUT1, Y4, Y5)     \
	SIDE(OP, IN2, OUT2, Y6, Y7)     \
	SIDE(OP, IN3, OUT3, Y12, Y13)   \
	STORE4                          \
	ADDQ    $128, SRC               \
	ADDQ    $128, DST               \
	DECQ    STEPS4                  \
	JNZ     loop4                   \
tail:                               \ // then one vector a step
	TESTQ   STEPS1, STEPS1          \
	JZ      done                    \
loop1:                              \
	VMOVUPS (SRC), IN0              \
	SIDE(OP, IN0, OUT0, Y12, Y13)   \
	STORE1                          \
	ADDQ    $32, SRC                \
	ADDQ    $32, DST                \
	DECQ    STEPS1                  \
	JNZ     loop1                   \
done:                               \
	FINISH

// VS: dst[i] = x[i] op s.
#define VS(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ    dst+0(FP), DST          \
	MOVQ    x+8(FP), SRC            \
	VBROADCASTSS s+16(FP), BCAST    \
	MOVQ    n+24(FP), STEPS1        \
	MOVBLZX stream+32(FP), STREAM   \
	SCALAR(OP, XS)

// SV: dst[i] = s op y[i].
#define SV(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ    dst+0(FP), DST          \
	VBROADCASTSS s+8(FP), BCAST     \
	MOVQ    y+16(FP), SRC           \
	MOVQ    n+24(FP), STEPS1        \
	MOVBLZX stream+32(FP), STREAM   \
	SCALAR(OP, SX)

// UN: dst[i] = OP(x[i]) for a one-operand OP(A, D, K, T) with K the
// constant INIT loads into BCAST and T scratch.
#define UN(NAME, INIT, OP) \
TEXT NAME(SB), NOSPLIT, $0-25 \
	MOVQ    dst+0(FP), DST          \
	MOVQ    x+8(FP), SRC            \
	MOVQ    n+16(FP), STEPS1        \
	MOVBLZX stream+24(FP), STREAM   \
	INIT                            \
	SPLIT                           \
loop4:                              \ // four vectors of x a step
	VMOVUPS (SRC), IN0              \
	VMOVUPS 32(SRC), IN1            \
	VMOVUPS 64(SRC), IN2            \
	VMOVUPS 96(SRC), IN3            \
	OP(IN0, OUT0, BCAST, Y4)        \
	OP(IN1, OUT1, BCAST, Y5)        \
	OP(IN2, OUT2, BCAST, Y6)        \
	OP(IN3, OUT3, BCAST, Y7)        \
	STORE4                          \
	ADDQ    $128, SRC               \
	ADDQ    $128, DST               \
	DECQ    STEPS4                  \
	JNZ     loop4                   \
tail:                               \ // then one vector a step
	TESTQ   STEPS1, STEPS1          \
	JZ      done                    \
loop1:                              \
	VMOVUPS (SRC), IN0              \
	OP(IN0, OUT0, BCAST, Y4)        \
	STORE1                          \
	ADDQ    $32, SRC                \
	ADDQ    $32, DST                \
	DECQ    STEPS1                  \
	JNZ     loop1                   \
done:                               \
	FINISH

// relu: x < 0 ? 0 : x (K = 0; NaN and -0 compare false and pass).
#define INIT_ZERO VXORPS BCAST, BCAST, BCAST
#define OP_RELU(A, D, K, T) \
	VCMPPS  $1, K, A, T \
	VANDNPS A, T, D

// neg and abs: the sign bit flipped or cleared (K the mask).
#define INIT_SIGN VBROADCASTSS signbit<>(SB), BCAST
#define INIT_ABS VBROADCASTSS absmask<>(SB), BCAST
#define OP_XOR(A, D, K, T) VXORPS K, A, D
#define OP_AND(A, D, K, T) VANDPS K, A, D

DATA signbit<>+0(SB)/4, $0x80000000
GLOBL signbit<>(SB), RODATA|NOPTR, $4
DATA absmask<>+0(SB)/4, $0x7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $4

// func ewReluAVX2(dst, x *float32, n int, stream bool) and neg, abs.
UN(·ewReluAVX2, INIT_ZERO, OP_RELU)
UN(·ewNegAVX2, INIT_SIGN, OP_XOR)
UN(·ewAbsAVX2, INIT_ABS, OP_AND)

// func ewAddVVAVX2(dst, x, y *float32, n int, stream bool) and the rest (ew_amd64.go).
VV(·ewAddVVAVX2, OP_ADD)
VV(·ewSubVVAVX2, OP_SUB)
VV(·ewMulVVAVX2, OP_MUL)
VV(·ewDivVVAVX2, OP_DIV)
VV(·ewMaxVVAVX2, OP_MAX)
VV(·ewMinVVAVX2, OP_MIN)

// func ewAddVSAVX2(dst, x *float32, s float32, n int, stream bool) and the rest.
VS(·ewAddVSAVX2, OP_ADD)
VS(·ewSubVSAVX2, OP_SUB)
VS(·ewMulVSAVX2, OP_MUL)
VS(·ewDivVSAVX2, OP_DIV)
VS(·ewMaxVSAVX2, OP_MAX)
VS(·ewMinVSAVX2, OP_MIN)

// func ewAddSVAVX2(dst *float32, s float32, y *float32, n int, stream bool) and the rest.
SV(·ewAddSVAVX2, OP_ADD)
SV(·ewSubSVAVX2, OP_SUB)
SV(·ewMulSVAVX2, OP_MUL)
SV(·ewDivSVAVX2, OP_DIV)
SV(·ewMaxSVAVX2, OP_MAX)
SV(·ewMinSVAVX2, OP_MIN)

// func ewClampAVX2(dst, x *float32, lo, hi float32, n int, stream bool)
// dst[i] = min(max(x[i], lo), hi): OP_MAX with lo broadcast in Y14, then
// OP_MIN with hi in BCAST, one pass.
TEXT ·ewClampAVX2(SB), NOSPLIT, $0-33
	MOVQ         dst+0(FP), DST
	MOVQ         x+8(FP), SRC
	VBROADCASTSS lo+16(FP), Y14
	VBROADCASTSS hi+20(FP), BCAST
	MOVQ         n+24(FP), STEPS1
	MOVBLZX      stream+32(FP), STREAM
	SPLIT

loop4:
	VMOVUPS (SRC), IN0
	VMOVUPS 32(SRC), IN1
	VMOVUPS 64(SRC), IN2
	VMOVUPS 96(SRC), IN3
	OP_MAX(Y14, IN0, INY0, Y12, Y13)
	OP_MAX(Y14, IN1, INY1, Y12, Y13)
	OP_MAX(Y14, IN2, INY2, Y12, Y13)
	OP_MAX(Y14, IN3, INY3, Y12, Y13)
	OP_MIN(BCAST, INY0, OUT0, Y12, Y13)
	OP_MIN(BCAST, INY1, OUT1, Y12, Y13)
	OP_MIN(BCAST, INY2, OUT2, Y12, Y13)
	OP_MIN(BCAST, INY3, OUT3, Y12, Y13)
	STORE4
	ADDQ    $128, SRC
	ADDQ    $128, DST
	DECQ    STEPS4
	JNZ     loop4

tail:
	TESTQ STEPS1, STEPS1
	JZ    done

loop1:
	VMOVUPS (SRC), IN0
	OP_MAX(Y14, IN0, INY0, Y12, Y13)
	OP_MIN(BCAST, INY0, OUT0, Y12, Y13)
	STORE1
	ADDQ    $32, SRC
	ADDQ    $32, DST
	DECQ    STEPS1
	JNZ     loop1

done:
	FINISH
