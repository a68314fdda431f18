//go:build !purego

#include "textflag.h"
#include "minmax_amd64.h"

// AVX2 elementwise kernels without transcendental functions (those are in
// math_amd64.s): dst[i] = x[i] op y[i] (VV), x[i] op s (VS), s op y[i]
// (SV), and relu, neg, abs, for n a multiple of 8 (checked in Go). The
// loops take 4 vectors (32 floats) per step, then single vectors. Every
// vector is loaded before its result is stored, so dst may be x or y.
// With stream set (R8), dst is 32-byte aligned and the stores are
// non-temporal, fenced at the end.

// Each OP_* computes D = A op B, keeping A and B; T and U are scratch.
#define OP_ADD(B, A, D, T, U) VADDPS B, A, D
#define OP_SUB(B, A, D, T, U) VSUBPS B, A, D
#define OP_MUL(B, A, D, T, U) VMULPS B, A, D
#define OP_DIV(B, A, D, T, U) VDIVPS B, A, D

// OP_MAX and OP_MIN: minmax_amd64.h.

// STORE4 and STORE1 write Y8..Y11 (Y8) at DI, non-temporally if R8 != 0.
#define STORE4 \
	TESTQ    R8, R8      \
	JNZ      nt4         \
	VMOVUPS  Y8, (DI)    \
	VMOVUPS  Y9, 32(DI)  \
	VMOVUPS  Y10, 64(DI) \
	VMOVUPS  Y11, 96(DI) \
	JMP      adv4        \
nt4:                     \
	VMOVNTPS Y8, (DI)    \
	VMOVNTPS Y9, 32(DI)  \
	VMOVNTPS Y10, 64(DI) \
	VMOVNTPS Y11, 96(DI) \
adv4:

#define STORE1 \
	TESTQ    R8, R8   \
	JNZ      nt1      \
	VMOVUPS  Y8, (DI) \
	JMP      adv1     \
nt1:                  \
	VMOVNTPS Y8, (DI) \
adv1:

#define FINISH \
	TESTQ R8, R8 \
	JZ    ret    \
	SFENCE       \
ret:             \
	VZEROUPPER   \
	RET

// dst = DI, x = SI, y = DX; CX counts 8-float blocks.
#define VV(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ dst+0(FP), DI         \
	MOVQ x+8(FP), SI           \
	MOVQ y+16(FP), DX          \
	MOVQ n+24(FP), CX          \
	MOVBLZX stream+32(FP), R8  \
	SHRQ $3, CX                \
	MOVQ CX, BX                \
	SHRQ $2, BX                \
	ANDQ $3, CX                \
	TESTQ BX, BX               \
	JZ   tail                  \
loop4:                         \
	VMOVUPS (SI), Y0           \
	VMOVUPS 32(SI), Y1         \
	VMOVUPS 64(SI), Y2         \
	VMOVUPS 96(SI), Y3         \
	VMOVUPS (DX), Y4           \
	VMOVUPS 32(DX), Y5         \
	VMOVUPS 64(DX), Y6         \
	VMOVUPS 96(DX), Y7         \
	OP(Y4, Y0, Y8, Y12, Y13)   \
	OP(Y5, Y1, Y9, Y14, Y15)   \
	OP(Y6, Y2, Y10, Y12, Y13)  \
	OP(Y7, Y3, Y11, Y14, Y15)  \
	STORE4                     \
	ADDQ $128, SI              \
	ADDQ $128, DX              \
	ADDQ $128, DI              \
	DECQ BX                    \
	JNZ  loop4                 \
tail:                          \
	TESTQ CX, CX               \
	JZ   done                  \
loop1:                         \
	VMOVUPS (SI), Y0           \
	VMOVUPS (DX), Y4           \
	OP(Y4, Y0, Y8, Y12, Y13)   \
	STORE1                     \
	ADDQ $32, SI               \
	ADDQ $32, DX               \
	ADDQ $32, DI               \
	DECQ CX                    \
	JNZ  loop1                 \
done:                          \
	FINISH

// VS: the scalar s, broadcast into Y15, is the B operand.
#define VS(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ dst+0(FP), DI         \
	MOVQ x+8(FP), SI           \
	VBROADCASTSS s+16(FP), Y15 \
	MOVQ n+24(FP), CX          \
	MOVBLZX stream+32(FP), R8  \
	SHRQ $3, CX                \
	MOVQ CX, BX                \
	SHRQ $2, BX                \
	ANDQ $3, CX                \
	TESTQ BX, BX               \
	JZ   tail                  \
loop4:                         \
	VMOVUPS (SI), Y0           \
	VMOVUPS 32(SI), Y1         \
	VMOVUPS 64(SI), Y2         \
	VMOVUPS 96(SI), Y3         \
	OP(Y15, Y0, Y8, Y12, Y13)  \
	OP(Y15, Y1, Y9, Y4, Y5)    \
	OP(Y15, Y2, Y10, Y6, Y7)   \
	OP(Y15, Y3, Y11, Y12, Y13) \
	STORE4                     \
	ADDQ $128, SI              \
	ADDQ $128, DI              \
	DECQ BX                    \
	JNZ  loop4                 \
tail:                          \
	TESTQ CX, CX               \
	JZ   done                  \
loop1:                         \
	VMOVUPS (SI), Y0           \
	OP(Y15, Y0, Y8, Y12, Y13)  \
	STORE1                     \
	ADDQ $32, SI               \
	ADDQ $32, DI               \
	DECQ CX                    \
	JNZ  loop1                 \
done:                          \
	FINISH

// SV: the scalar s, broadcast into Y15, is the A operand.
#define SV(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ dst+0(FP), DI         \
	VBROADCASTSS s+8(FP), Y15  \
	MOVQ y+16(FP), SI          \
	MOVQ n+24(FP), CX          \
	MOVBLZX stream+32(FP), R8  \
	SHRQ $3, CX                \
	MOVQ CX, BX                \
	SHRQ $2, BX                \
	ANDQ $3, CX                \
	TESTQ BX, BX               \
	JZ   tail                  \
loop4:                         \
	VMOVUPS (SI), Y0           \
	VMOVUPS 32(SI), Y1         \
	VMOVUPS 64(SI), Y2         \
	VMOVUPS 96(SI), Y3         \
	OP(Y0, Y15, Y8, Y12, Y13)  \
	OP(Y1, Y15, Y9, Y4, Y5)    \
	OP(Y2, Y15, Y10, Y6, Y7)   \
	OP(Y3, Y15, Y11, Y12, Y13) \
	STORE4                     \
	ADDQ $128, SI              \
	ADDQ $128, DI              \
	DECQ BX                    \
	JNZ  loop4                 \
tail:                          \
	TESTQ CX, CX               \
	JZ   done                  \
loop1:                         \
	VMOVUPS (SI), Y0           \
	OP(Y0, Y15, Y8, Y12, Y13)  \
	STORE1                     \
	ADDQ $32, SI               \
	ADDQ $32, DI               \
	DECQ CX                    \
	JNZ  loop1                 \
done:                          \
	FINISH

// UN: dst = OP(x) for a one-operand OP(A, D, K) with K a constant
// register it loads with INIT.
#define UN(NAME, INIT, OP) \
TEXT NAME(SB), NOSPLIT, $0-25 \
	MOVQ dst+0(FP), DI         \
	MOVQ x+8(FP), SI           \
	MOVQ n+16(FP), CX          \
	MOVBLZX stream+24(FP), R8  \
	INIT                       \
	SHRQ $3, CX                \
	MOVQ CX, BX                \
	SHRQ $2, BX                \
	ANDQ $3, CX                \
	TESTQ BX, BX               \
	JZ   tail                  \
loop4:                         \
	VMOVUPS (SI), Y0           \
	VMOVUPS 32(SI), Y1         \
	VMOVUPS 64(SI), Y2         \
	VMOVUPS 96(SI), Y3         \
	OP(Y0, Y8, Y15, Y4)        \
	OP(Y1, Y9, Y15, Y5)        \
	OP(Y2, Y10, Y15, Y6)       \
	OP(Y3, Y11, Y15, Y7)       \
	STORE4                     \
	ADDQ $128, SI              \
	ADDQ $128, DI              \
	DECQ BX                    \
	JNZ  loop4                 \
tail:                          \
	TESTQ CX, CX               \
	JZ   done                  \
loop1:                         \
	VMOVUPS (SI), Y0           \
	OP(Y0, Y8, Y15, Y4)        \
	STORE1                     \
	ADDQ $32, SI               \
	ADDQ $32, DI               \
	DECQ CX                    \
	JNZ  loop1                 \
done:                          \
	FINISH

// relu: x < 0 ? 0 : x (K = 0; NaN and -0 compare false and pass).
#define INIT_ZERO VXORPS Y15, Y15, Y15
#define OP_RELU(A, D, K, T) \
	VCMPPS  $1, K, A, T \
	VANDNPS A, T, D

// neg and abs: the sign bit flipped or cleared (K the mask).
#define INIT_SIGN VBROADCASTSS signbit<>(SB), Y15
#define INIT_ABS VBROADCASTSS absmask<>(SB), Y15
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
