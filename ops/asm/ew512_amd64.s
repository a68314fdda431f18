//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 elementwise kernels without transcendental functions (those are
// in math512_amd64.s): dst[i] = x[i] op y[i] (VV), x[i] op s (VS),
// s op y[i] (SV), and relu, neg, abs, for n a multiple of 16 (checked in
// Go). The loops take 4 vectors (64 floats) per step, then single
// vectors. Every vector is loaded before its result is stored, so dst may
// be x or y. With stream set, dst is 64-byte aligned and the stores are
// non-temporal, fenced at the end.

#define DST    DI  // output
#define XP     SI  // x (or y in SV, the one vector operand)
#define YP     DX  // y (VV)
#define NB     CX  // single 16-float blocks after the groups
#define NG     BX  // groups of four blocks
#define STREAM R8  // non-zero: non-temporal stores

#define A0  Z0  // first operands
#define A1  Z1
#define A2  Z2
#define A3  Z3
#define B0  Z4  // second operands
#define B1  Z5
#define B2  Z6
#define B3  Z7
#define D0  Z8  // results
#define D1  Z9
#define D2  Z10
#define D3  Z11
#define SC  Z31 // the broadcast scalar, or the unary kernels' constant

// Each OP_* computes D = A op B (B may be a memory operand).
#define OP_ADD(B, A, D) VADDPS B, A, D
#define OP_SUB(B, A, D) VSUBPS B, A, D
#define OP_MUL(B, A, D) VMULPS B, A, D
#define OP_DIV(B, A, D) VDIVPS B, A, D

// OP_MAX and OP_MIN are Go's max and min. VRANGEPS with imm[1:0] = 01
// (max) or 00 (min) and imm[3:2] = 01 (the sign of the selected value)
// orders -0 below +0 whichever operand each is (VMAXPS and VMINPS would
// return their second source), but like them returns the number where
// one operand is a NaN: lanes where the two are unordered then take
// A + B, a NaN, under the mask KN.
#define KN K1
#define OP_MAX(B, A, D) \
	VRANGEPS $5, B, A, D  \ // max, -0 < +0
	VCMPPS   $3, B, A, KN \ // unordered: a NaN operand
	VADDPS   B, A, KN, D  // a NaN there

#define OP_MIN(B, A, D) \
	VRANGEPS $4, B, A, D  \ // min, -0 < +0
	VCMPPS   $3, B, A, KN \
	VADDPS   B, A, KN, D

// SETUP loads the frame shared by all kernels: n (at NOFF) into NB as 16-float
// blocks, split into NG groups of four and NB single blocks.
#define SETUP(NOFF, SOFF) \
	MOVQ    NOFF(FP), NB      \ // n
	MOVBLZX SOFF(FP), STREAM  \ // stream flag
	SHRQ    $4, NB            \ // blocks of 16
	MOVQ    NB, NG            \
	SHRQ    $2, NG            \ // groups of four
	ANDQ    $3, NB            // blocks left after them

// STORE4 and STORE1 write D0..D3 (D0) at DST, non-temporally if STREAM != 0.
#define STORE4 \
	TESTQ    STREAM, STREAM \
	JNZ      nt4            \
	VMOVUPS  D0, (DST)      \
	VMOVUPS  D1, 64(DST)    \
	VMOVUPS  D2, 128(DST)   \
	VMOVUPS  D3, 192(DST)   \
	JMP      adv4           \
nt4:                        \
	VMOVNTPS D0, (DST)      \
	VMOVNTPS D1, 64(DST)    \
	VMOVNTPS D2, 128(DST)   \
	VMOVNTPS D3, 192(DST)   \
adv4:

#define STORE1 \
	TESTQ    STREAM, STREAM \
	JNZ      nt1            \
	VMOVUPS  D0, (DST)      \
	JMP      adv1           \
nt1:                        \
	VMOVNTPS D0, (DST)      \
adv1:

// FINISH fences non-temporal stores (so that they are visible before the
// kernel returns) and clears the upper halves of the ymm registers.
#define FINISH \
	TESTQ STREAM, STREAM \
	JZ    ret            \
	SFENCE               \
ret:                     \
	VZEROUPPER           \
	RET

// VV: x and y loaded, x the A operand.
#define VV(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ dst+0(FP), DST       \
	MOVQ x+8(FP), XP          \
	MOVQ y+16(FP), YP         \
	SETUP(n+24, stream+32)    \
	TESTQ NG, NG              \
	JZ   tail                 \
loop4:                        \ // four vectors per step
	VMOVUPS (XP), A0          \
	VMOVUPS 64(XP), A1        \
	VMOVUPS 128(XP), A2       \
	VMOVUPS 192(XP), A3       \
	VMOVUPS (YP), B0          \
	VMOVUPS 64(YP), B1        \
	VMOVUPS 128(YP), B2       \
	VMOVUPS 192(YP), B3       \
	OP(B0, A0, D0)            \
	OP(B1, A1, D1)            \
	OP(B2, A2, D2)            \
	OP(B3, A3, D3)            \
	STORE4                    \
	ADDQ $256, XP             \
	ADDQ $256, YP             \
	ADDQ $256, DST            \
	DECQ NG                   \
	JNZ  loop4                \
tail:                         \
	TESTQ NB, NB              \
	JZ   done                 \
loop1:                        \ // then single vectors
	VMOVUPS (XP), A0          \
	VMOVUPS (YP), B0          \
	OP(B0, A0, D0)            \
	STORE1                    \
	ADDQ $64, XP              \
	ADDQ $64, YP              \
	ADDQ $64, DST             \
	DECQ NB                   \
	JNZ  loop1                \
done:                         \
	FINISH

// VS: the scalar s, broadcast into SC, is the B operand.
#define VS(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ dst+0(FP), DST         \
	MOVQ x+8(FP), XP            \
	VBROADCASTSS s+16(FP), SC   \
	SETUP(n+24, stream+32)      \
	TESTQ NG, NG                \
	JZ   tail                   \
loop4:                          \
	VMOVUPS (XP), A0            \
	VMOVUPS 64(XP), A1          \
	VMOVUPS 128(XP), A2         \
	VMOVUPS 192(XP), A3         \
	OP(SC, A0, D0)              \
	OP(SC, A1, D1)              \
	OP(SC, A2, D2)              \
	OP(SC, A3, D3)              \
	STORE4                      \
	ADDQ $256, XP               \
	ADDQ $256, DST              \
	DECQ NG                     \
	JNZ  loop4                  \
tail:                           \
	TESTQ NB, NB                \
	JZ   done                   \
loop1:                          \
	VMOVUPS (XP), A0            \
	OP(SC, A0, D0)              \
	STORE1                      \
	ADDQ $64, XP                \
	ADDQ $64, DST               \
	DECQ NB                     \
	JNZ  loop1                  \
done:                           \
	FINISH

// SV: the scalar s, broadcast into SC, is the A operand; y (in XP) is
// the B operand, read straight from memory.
#define SV(NAME, OP) \
TEXT NAME(SB), NOSPLIT, $0-33 \
	MOVQ dst+0(FP), DST         \
	VBROADCASTSS s+8(FP), SC    \
	MOVQ y+16(FP), XP           \
	SETUP(n+24, stream+32)      \
	TESTQ NG, NG                \
	JZ   tail                   \
loop4:                          \
	OP((XP), SC, D0)            \
	OP(64(XP), SC, D1)          \
	OP(128(XP), SC, D2)         \
	OP(192(XP), SC, D3)         \
	STORE4                      \
	ADDQ $256, XP               \
	ADDQ $256, DST              \
	DECQ NG                     \
	JNZ  loop4                  \
tail:                           \
	TESTQ NB, NB                \
	JZ   done                   \
loop1:                          \
	OP((XP), SC, D0)            \
	STORE1                      \
	ADDQ $64, XP                \
	ADDQ $64, DST               \
	DECQ NB                     \
	JNZ  loop1                  \
done:                           \
	FINISH

// UN: D = OP(M) for a one-operand OP(M, D) reading x from memory, with
// SC a constant that INIT loads.
#define UN(NAME, INIT, OP) \
TEXT NAME(SB), NOSPLIT, $0-25 \
	MOVQ dst+0(FP), DST         \
	MOVQ x+8(FP), XP            \
	SETUP(n+16, stream+24)      \
	INIT                        \
	TESTQ NG, NG                \
	JZ   tail                   \
loop4:                          \
	OP((XP), D0)                \
	OP(64(XP), D1)              \
	OP(128(XP), D2)             \
	OP(192(XP), D3)             \
	STORE4                      \
	ADDQ $256, XP               \
	ADDQ $256, DST              \
	DECQ NG                     \
	JNZ  loop4                  \
tail:                           \
	TESTQ NB, NB                \
	JZ   done                   \
loop1:                          \
	OP((XP), D0)                \
	STORE1                      \
	ADDQ $64, XP                \
	ADDQ $64, DST               \
	DECQ NB                     \
	JNZ  loop1                  \
done:                           \
	FINISH

// relu: VMAXPS returns its second source, x, when x is NaN or the two
// are zeros of either sign, so max(0, x) keeps NaN and -0 as the twin.
#define INIT_ZERO VPXORD SC, SC, SC
#define OP_RELU(M, D) VMAXPS M, SC, D

// neg and abs: the sign bit flipped or cleared (SC the mask).
#define INIT_SIGN VPBROADCASTD signbit512<>(SB), SC
#define INIT_ABS VPBROADCASTD absmask512<>(SB), SC
#define OP_XOR(M, D) VPXORD M, SC, D
#define OP_AND(M, D) VPANDD M, SC, D

DATA signbit512<>+0(SB)/4, $0x80000000
GLOBL signbit512<>(SB), RODATA|NOPTR, $4
DATA absmask512<>+0(SB)/4, $0x7fffffff
GLOBL absmask512<>(SB), RODATA|NOPTR, $4

// func ewReluAVX512(dst, x *float32, n int, stream bool) and neg, abs.
UN(·ewReluAVX512, INIT_ZERO, OP_RELU)
UN(·ewNegAVX512, INIT_SIGN, OP_XOR)
UN(·ewAbsAVX512, INIT_ABS, OP_AND)

// func ewAddVVAVX512(dst, x, y *float32, n int, stream bool) and the rest (ew512_amd64.go).
VV(·ewAddVVAVX512, OP_ADD)
VV(·ewSubVVAVX512, OP_SUB)
VV(·ewMulVVAVX512, OP_MUL)
VV(·ewDivVVAVX512, OP_DIV)
VV(·ewMaxVVAVX512, OP_MAX)
VV(·ewMinVVAVX512, OP_MIN)

// func ewAddVSAVX512(dst, x *float32, s float32, n int, stream bool) and the rest.
VS(·ewAddVSAVX512, OP_ADD)
VS(·ewSubVSAVX512, OP_SUB)
VS(·ewMulVSAVX512, OP_MUL)
VS(·ewDivVSAVX512, OP_DIV)
VS(·ewMaxVSAVX512, OP_MAX)
VS(·ewMinVSAVX512, OP_MIN)

// func ewAddSVAVX512(dst *float32, s float32, y *float32, n int, stream bool) and the rest.
SV(·ewAddSVAVX512, OP_ADD)
SV(·ewSubSVAVX512, OP_SUB)
SV(·ewMulSVAVX512, OP_MUL)
SV(·ewDivSVAVX512, OP_DIV)
SV(·ewMaxSVAVX512, OP_MAX)
SV(·ewMinSVAVX512, OP_MIN)

// func ewClampAVX512(dst, x *float32, lo, hi float32, n int, stream bool)
// dst[i] = min(max(x[i], lo), hi): OP_MAX with lo broadcast in B0, then
// OP_MIN with hi in SC, one pass.
TEXT ·ewClampAVX512(SB), NOSPLIT, $0-33
	MOVQ         dst+0(FP), DST
	MOVQ         x+8(FP), XP
	VBROADCASTSS lo+16(FP), B0
	VBROADCASTSS hi+20(FP), SC
	SETUP(n+24, stream+32)
	TESTQ        NG, NG
	JZ           tail

loop4:
	VMOVUPS (XP), A0
	VMOVUPS 64(XP), A1
	VMOVUPS 128(XP), A2
	VMOVUPS 192(XP), A3
	OP_MAX(B0, A0, Z12) // not in place: OP_MAX reads A after writing D
	OP_MAX(B0, A1, Z13)
	OP_MAX(B0, A2, Z14)
	OP_MAX(B0, A3, Z15)
	OP_MIN(SC, Z12, D0)
	OP_MIN(SC, Z13, D1)
	OP_MIN(SC, Z14, D2)
	OP_MIN(SC, Z15, D3)
	STORE4
	ADDQ    $256, XP
	ADDQ    $256, DST
	DECQ    NG
	JNZ     loop4

tail:
	TESTQ NB, NB
	JZ    done

loop1:
	VMOVUPS (XP), A0
	OP_MAX(B0, A0, Z12)
	OP_MIN(SC, Z12, D0)
	STORE1
	ADDQ    $64, XP
	ADDQ    $64, DST
	DECQ    NB
	JNZ     loop1

done:
	FINISH
