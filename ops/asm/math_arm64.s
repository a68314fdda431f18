//go:build !purego

#include "textflag.h"

// NEON float32 math kernels: dst[i] = f(x[i]) for n a multiple of 4
// (checked in Go), 4 lanes per step. Each follows its Go twin in
// math_scalar*.go step for step, in the same order and with the same
// roundings, so the results are identical: plain FMUL/FADD where the twin
// writes a float32 operation, FMLA/FMLS only for the exact error terms of
// two-product splits and division residuals, and both sides of a branch
// computed and then merged with BIT. Every vector is loaded before its
// result is stored, so dst may be x. Stores are plain (no counterpart of
// the x86 kernels' non-temporal stream stores). The vector floating-point
// instructions Go's assembler lacks are WORDs with the GNU form in the
// comment (neon_words_test.go checks each against the disassembly).

// The constant table ·ewcNEON (ew_arm64.go): 16 bytes (4 copies) per
// constant. The first 12 live in V20..V31 for a whole kernel: V20 the sign
// bit, V21..V25 the exp polynomial C4..C0, V26 ln2Lo, V27 ln2Hi, V28
// log2(e), V29 and V30 the exp clamp (max, min), V31 1.0 (whose bits are
// also 127<<23, the exponent bias in place). The others are loaded from
// C_*(R3) where used.
#define C_HALF 192
#define C_QUARTER 208
#define C_MHALF 224
#define C_FOUR 240
#define C_PINF 256
#define C_NINF 272
#define C_QNAN 288
#define C_LOGTINY 304
#define C_LOGPRE 320
#define C_M23 336
#define C_SQRTHALF 352
#define C_LOGC0 368
#define C_LOGC1 384
#define C_LOGC2 400
#define C_LOGC3 416
#define C_LOGC4 432
#define C_LOGC5 448
#define C_LOGC6 464
#define C_LOGC7 480
#define C_TANHSMALL 496
#define C_TANHC0 512
#define C_TANHC1 528
#define C_TANHC2 544
#define C_TANHC3 560
#define C_TANHC4 576
#define C_SILUMIN 592
#define C_GTMIN 608
#define C_GTMAX 624
#define C_GTK 640
#define C_GTKLO 656
#define C_GT2C 672
#define C_GT2CLO 688
#define C_ERFSMALL 704
#define C_ERFMAX 720
#define C_ERFT0 736
#define C_ERFC0M1 752
#define C_ERFC1 768
#define C_ERFC2 784
#define C_ERFC3 800
#define C_ERFC4 816
#define C_ERFC5 832
#define C_ERFK0 848
#define C_ERFK1 864
#define C_ERFK2 880
#define C_ERFK3 896
#define C_ERFK4 912
#define C_ERFK5 928
#define C_ERFK6 944
#define C_GELUSMALL 960
#define C_GELUMAX 976
#define C_GELUT0 992
#define C_GELUP0 1008
#define C_GELUP1 1024
#define C_GELUP2 1040
#define C_GELUP3 1056
#define C_GELUP4 1072
#define C_GELUG0 1088
#define C_GELUG1 1104
#define C_GELUG2 1120
#define C_GELUG3 1136
#define C_GELUG4 1152
#define C_GELUG5 1168
#define C_GELUG6 1184
#define C_GELUG7 1200
#define C_GELUG8 1216

// Loop frame of the kernels: R0 = dst, R1 = x, R2 = vectors left, R3 =
// the table; each body reads x into V8 and leaves its result in V7, which
// NEXT stores.
#define BEGIN \
	MOVD   dst+0(FP), R0                             \
	MOVD   x+8(FP), R1                               \
	MOVD   n+16(FP), R2                              \
	LSR    $2, R2                                    \
	CBZ    R2, done                                  \
	MOVD   $·ewcNEON(SB), R3                         \
	MOVD   R3, R4                                    \
	VLD1.P 64(R4), [V20.S4, V21.S4, V22.S4, V23.S4] \
	VLD1.P 64(R4), [V24.S4, V25.S4, V26.S4, V27.S4] \
	VLD1   (R4), [V28.S4, V29.S4, V30.S4, V31.S4]

#define NEXT \
	VST1.P [V7.S4], 16(R0) \
	SUB    $1, R2          \
	CBNZ   R2, loop        \
done:                      \
	RET

// NINFNANINIT loads V17 = -Inf and V18 = NaN for the x·gate(x)
// activations, which end with x == -Inf ? NaN : result
// (ewNaNAtMinusInf: -Inf·0 is NaN, where their clamped cores give -0).
#define NINFNANINIT \
	FMOVQ C_NINF(R3), F17 \
	FMOVQ C_QNAN(R3), F18

// ewexp4<> is ewExpCore and the factors of ewScale on 4 lanes: in V0 = h,
// V1 = l; out V2 = p, V3 = 2^k1 and V4 = 2^k2 with k1 + k2 = n, so that
// ewScale(v, n) is (v·V3)·V4. Clobbers V0, V1, V5, V6. The kernels that
// call it get a frame from the assembler, which saves the link register.
TEXT ewexp4<>(SB), NOSPLIT|NOFRAME, $0-0
	// h = min(max(h, -120), 89), NaN kept; n = round(h·log2e)
	WORD $0x4e3ef400 // fmax v0.4s, v0.4s, v30.4s
	WORD $0x4ebdf400 // fmin v0.4s, v0.4s, v29.4s
	WORD $0x6e3cdc05 // fmul v5.4s, v0.4s, v28.4s
	WORD $0x4e2188a5 // frintn v5.4s, v5.4s
	// r = ((h - n·ln2Hi) - n·ln2Lo) + l, the second step fused (ewFMA)
	WORD $0x6e3bdca6 // fmul v6.4s, v5.4s, v27.4s
	WORD $0x4ea6d400 // fsub v0.4s, v0.4s, v6.4s
	WORD $0x4ebacca0 // fmls v0.4s, v5.4s, v26.4s
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	// q = c0 + c1·r + ... + c4·r⁴ (Horner, each step a copy of the
	// constant and one fused FMLA); p = fma(r·r, q, r) + 1
	WORD $0x4eb61ec1 // mov v1.16b, v22.16b
	WORD $0x4e20cea1 // fmla v1.4s, v21.4s, v0.4s
	WORD $0x4eb71ee6 // mov v6.16b, v23.16b
	WORD $0x4e20cc26 // fmla v6.4s, v1.4s, v0.4s
	WORD $0x4eb81f01 // mov v1.16b, v24.16b
	WORD $0x4e20ccc1 // fmla v1.4s, v6.4s, v0.4s
	WORD $0x4eb91f26 // mov v6.16b, v25.16b
	WORD $0x4e20cc26 // fmla v6.4s, v1.4s, v0.4s
	WORD $0x6e20dc02 // fmul v2.4s, v0.4s, v0.4s
	WORD $0x4ea01c01 // mov v1.16b, v0.16b
	WORD $0x4e26cc41 // fmla v1.4s, v2.4s, v6.4s
	WORD $0x4e3fd422 // fadd v2.4s, v1.4s, v31.4s
	// k = int(n), k1 = k>>1, k2 = k - k1; 2^k = (k + 127)<<23
	WORD $0x4ea1b8a5 // fcvtzs v5.4s, v5.4s
	WORD $0x4f3f04a6 // sshr v6.4s, v5.4s, #1
	VSUB V6.S4, V5.S4, V5.S4
	VSHL $23, V6.S4, V3.S4
	VADD V31.S4, V3.S4, V3.S4
	VSHL $23, V5.S4, V4.S4
	VADD V31.S4, V4.S4, V4.S4
	RET

// func ewExpNEON(dst, x *float32, n int, stream bool): ewExp.
TEXT ·ewExpNEON(SB), NOSPLIT, $0-25
	BEGIN
loop:
	VLD1.P 16(R1), [V0.S4]
	VEOR   V1.B16, V1.B16, V1.B16
	BL     ewexp4<>(SB)
	WORD $0x6e23dc47 // fmul v7.4s, v2.4s, v3.4s
	WORD $0x6e24dce7 // fmul v7.4s, v7.4s, v4.4s
	NEXT

// func ewLogNEON(dst, x *float32, n int, stream bool): ewLog. The main
// path runs on every lane; zero, negative, infinite and NaN lanes are
// replaced at the end.
TEXT ·ewLogNEON(SB), NOSPLIT, $0-25
	BEGIN
loop:
	VLD1.P 16(R1), [V8.S4]
	// Subnormals (x < 2^-126): x' = x·2^23 and adj = -23 on the exponent.
	FMOVQ  C_LOGTINY(R3), F9
	WORD $0x6ea8e529 // fcmgt v9.4s, v9.4s, v8.4s
	FMOVQ  C_LOGPRE(R3), F10
	WORD $0x6e2add0a // fmul v10.4s, v8.4s, v10.4s
	VMOV   V8.B16, V11.B16
	VBIT   V9.B16, V10.B16, V11.B16
	FMOVQ  C_M23(R3), F10
	VAND   V10.B16, V9.B16, V9.B16
	// k = (bits - bits(√½)) >> 23, m = x'/2^k in [√½, √2), e = k + adj
	FMOVQ  C_SQRTHALF(R3), F10
	VSUB   V10.S4, V11.S4, V12.S4
	WORD $0x4f29058c // sshr v12.4s, v12.4s, #23
	VSHL   $23, V12.S4, V13.S4
	VSUB   V13.S4, V11.S4, V13.S4
	WORD $0x4e21d98c // scvtf v12.4s, v12.4s
	WORD $0x4e29d58c // fadd v12.4s, v12.4s, v9.4s
	// f = m - 1; q = P(f)·f - 1/2 (Horner)
	WORD $0x4ebfd5ad // fsub v13.4s, v13.4s, v31.4s
	FMOVQ  C_LOGC7(R3), F14
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_LOGC6(R3), F15
	WORD $0x4e2fd5ce // fadd v14.4s, v14.4s, v15.4s
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_LOGC5(R3), F15
	WORD $0x4e2fd5ce // fadd v14.4s, v14.4s, v15.4s
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_LOGC4(R3), F15
	WORD $0x4e2fd5ce // fadd v14.4s, v14.4s, v15.4s
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_LOGC3(R3), F15
	WORD $0x4e2fd5ce // fadd v14.4s, v14.4s, v15.4s
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_LOGC2(R3), F15
	WORD $0x4e2fd5ce // fadd v14.4s, v14.4s, v15.4s
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_LOGC1(R3), F15
	WORD $0x4e2fd5ce // fadd v14.4s, v14.4s, v15.4s
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_LOGC0(R3), F15
	WORD $0x4e2fd5ce // fadd v14.4s, v14.4s, v15.4s
	WORD $0x6e2dddce // fmul v14.4s, v14.4s, v13.4s
	FMOVQ  C_HALF(R3), F15
	WORD $0x4eafd5ce // fsub v14.4s, v14.4s, v15.4s
	// e·ln2Hi + ((f²·q + e·ln2Lo) + f)
	WORD $0x6e2dddaf // fmul v15.4s, v13.4s, v13.4s
	WORD $0x6e2eddef // fmul v15.4s, v15.4s, v14.4s
	WORD $0x6e3add90 // fmul v16.4s, v12.4s, v26.4s
	WORD $0x4e30d5ef // fadd v15.4s, v15.4s, v16.4s
	WORD $0x4e2dd5ef // fadd v15.4s, v15.4s, v13.4s
	WORD $0x6e3bdd90 // fmul v16.4s, v12.4s, v27.4s
	WORD $0x4e2fd60f // fadd v15.4s, v16.4s, v15.4s
	// Special lanes: ok = 0 < x < +Inf; else x < 0 → NaN, x = 0 → -Inf,
	// +Inf and NaN → x.
	WORD $0x4ea0c909 // fcmgt v9.4s, v8.4s, #0
	FMOVQ  C_PINF(R3), F10
	WORD $0x6ea8e54a // fcmgt v10.4s, v10.4s, v8.4s
	VAND   V10.B16, V9.B16, V9.B16
	VMOV   V8.B16, V7.B16
	WORD $0x4ea0e90a // fcmlt v10.4s, v8.4s, #0
	FMOVQ  C_QNAN(R3), F11
	VBIT   V10.B16, V11.B16, V7.B16
	WORD $0x4ea0d90a // fcmeq v10.4s, v8.4s, #0
	FMOVQ  C_NINF(R3), F11
	VBIT   V10.B16, V11.B16, V7.B16
	VBIT   V9.B16, V15.B16, V7.B16
	NEXT

// func ewTanhNEON(dst, x *float32, n int, stream bool): ewTanh.
TEXT ·ewTanhNEON(SB), NOSPLIT, $0-25
	BEGIN
loop:
	VLD1.P 16(R1), [V8.S4]
	WORD $0x4ea0f909 // fabs v9.4s, v8.4s
	// |x| >= 0.625: (1-e)/(1+e), e = exp(-2|x|)
	WORD $0x4e29d520 // fadd v0.4s, v9.4s, v9.4s
	WORD $0x6ea0f800 // fneg v0.4s, v0.4s
	VEOR   V1.B16, V1.B16, V1.B16
	BL     ewexp4<>(SB)
	WORD $0x6e23dc4a // fmul v10.4s, v2.4s, v3.4s
	WORD $0x6e24dd4a // fmul v10.4s, v10.4s, v4.4s
	WORD $0x4eaad7eb // fsub v11.4s, v31.4s, v10.4s
	WORD $0x4e3fd54a // fadd v10.4s, v10.4s, v31.4s
	WORD $0x6e2afd67 // fdiv v7.4s, v11.4s, v10.4s
	// |x| < 0.625: x + (x·s)·P(s), s = x²
	WORD $0x6e28dd0a // fmul v10.4s, v8.4s, v8.4s
	FMOVQ  C_TANHC4(R3), F11
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_TANHC3(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_TANHC2(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_TANHC1(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_TANHC0(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add0a // fmul v10.4s, v8.4s, v10.4s
	WORD $0x6e2bdd4a // fmul v10.4s, v10.4s, v11.4s
	WORD $0x4e2ad50a // fadd v10.4s, v8.4s, v10.4s
	FMOVQ  C_TANHSMALL(R3), F11
	WORD $0x6ea9e56b // fcmgt v11.4s, v11.4s, v9.4s
	VBIT   V11.B16, V10.B16, V7.B16
	// x's sign (keeps tanh(-0) = -0)
	VAND   V20.B16, V8.B16, V11.B16
	VORR   V11.B16, V7.B16, V7.B16
	NEXT

// func ewSigmoidNEON(dst, x *float32, n int, stream bool): ewSigmoid,
// that is ewGated with multipliers 1 and no low part.
TEXT ·ewSigmoidNEON(SB), NOSPLIT, $0-25
	BEGIN
loop:
	VLD1.P 16(R1), [V8.S4]
	// a = -|x|; e = e^a; x < 0 ? e/(1+e) : 1/(1+e)
	VORR   V20.B16, V8.B16, V0.B16
	VEOR   V1.B16, V1.B16, V1.B16
	BL     ewexp4<>(SB)
	WORD $0x6e23dc49 // fmul v9.4s, v2.4s, v3.4s
	WORD $0x6e24dd29 // fmul v9.4s, v9.4s, v4.4s
	WORD $0x4e3fd52a // fadd v10.4s, v9.4s, v31.4s
	WORD $0x4ea0e90b // fcmlt v11.4s, v8.4s, #0
	VMOV   V31.B16, V12.B16
	VBIT   V11.B16, V9.B16, V12.B16
	WORD $0x6e2afd87 // fdiv v7.4s, v12.4s, v10.4s
	NEXT

// func ewSiluNEON(dst, x *float32, n int, stream bool): ewSilu.
TEXT ·ewSiluNEON(SB), NOSPLIT, $0-25
	BEGIN
	NINFNANINIT
loop:
	VLD1.P 16(R1), [V8.S4]
	WORD $0x4e31e50d // fcmeq v13.4s, v8.4s, v17.4s
	// x = max(x, -120), NaN kept; a = -|x|
	FMOVQ  C_SILUMIN(R3), F9
	WORD $0x4e29f508 // fmax v8.4s, v8.4s, v9.4s
	VORR   V20.B16, V8.B16, V0.B16
	VEOR   V1.B16, V1.B16, V1.B16
	BL     ewexp4<>(SB)
	// x < 0 ? (x·p)·2^n/(1+e) : x/(1+e)
	WORD $0x6e23dc49 // fmul v9.4s, v2.4s, v3.4s
	WORD $0x6e24dd29 // fmul v9.4s, v9.4s, v4.4s
	WORD $0x4e3fd529 // fadd v9.4s, v9.4s, v31.4s
	WORD $0x6e22dd0a // fmul v10.4s, v8.4s, v2.4s
	WORD $0x6e23dd4a // fmul v10.4s, v10.4s, v3.4s
	WORD $0x6e24dd4a // fmul v10.4s, v10.4s, v4.4s
	WORD $0x4ea0e90b // fcmlt v11.4s, v8.4s, #0
	VBIF   V11.B16, V8.B16, V10.B16
	WORD $0x6e29fd47 // fdiv v7.4s, v10.4s, v9.4s
	// NaN where x was -Inf (-Inf·0)
	VBIT   V13.B16, V18.B16, V7.B16
	NEXT

// func ewGeluTanhNEON(dst, x *float32, n int, stream bool): ewGeluTanh.
TEXT ·ewGeluTanhNEON(SB), NOSPLIT, $0-25
	BEGIN
	NINFNANINIT
loop:
	VLD1.P 16(R1), [V8.S4]
	FMOVQ  C_GTMIN(R3), F9
	WORD $0x4e29f509 // fmax v9.4s, v8.4s, v9.4s
	FMOVQ  C_GTMAX(R3), F10
	WORD $0x4eaaf529 // fmin v9.4s, v9.4s, v10.4s
	// x³ = x3h + x3l (v12 + v13) from xc = v9
	WORD $0x6e29dd2a // fmul v10.4s, v9.4s, v9.4s
	WORD $0x6ea0f94b // fneg v11.4s, v10.4s
	VFMLA  V9.S4, V9.S4, V11.S4
	WORD $0x6e29dd4c // fmul v12.4s, v10.4s, v9.4s
	WORD $0x6ea0f98d // fneg v13.4s, v12.4s
	VFMLA  V9.S4, V10.S4, V13.S4
	WORD $0x6e29dd6b // fmul v11.4s, v11.4s, v9.4s
	WORD $0x4e2bd5ad // fadd v13.4s, v13.4s, v11.4s
	// k·x³ = kh + kl (v15 + v16)
	FMOVQ  C_GTK(R3), F14
	WORD $0x6e2cddcf // fmul v15.4s, v14.4s, v12.4s
	WORD $0x6ea0f9f0 // fneg v16.4s, v15.4s
	VFMLA  V12.S4, V14.S4, V16.S4
	WORD $0x6e2dddcd // fmul v13.4s, v14.4s, v13.4s
	FMOVQ  C_GTKLO(R3), F14
	WORD $0x6e2cddcc // fmul v12.4s, v14.4s, v12.4s
	WORD $0x4e2cd5ad // fadd v13.4s, v13.4s, v12.4s
	WORD $0x4e2dd610 // fadd v16.4s, v16.4s, v13.4s
	// w = xc + k·x³ = wh + wl (v10 + v12), two-sum
	WORD $0x4e2fd52a // fadd v10.4s, v9.4s, v15.4s
	WORD $0x4ea9d54b // fsub v11.4s, v10.4s, v9.4s
	WORD $0x4eabd54c // fsub v12.4s, v10.4s, v11.4s
	WORD $0x4eacd52c // fsub v12.4s, v9.4s, v12.4s
	WORD $0x4eabd5ed // fsub v13.4s, v15.4s, v11.4s
	WORD $0x4e2dd58c // fadd v12.4s, v12.4s, v13.4s
	WORD $0x4e30d58c // fadd v12.4s, v12.4s, v16.4s
	// v = 2√(2/π)·w = vh + vl (v13 + v15)
	FMOVQ  C_GT2C(R3), F14
	WORD $0x6e2addcd // fmul v13.4s, v14.4s, v10.4s
	WORD $0x6ea0f9af // fneg v15.4s, v13.4s
	VFMLA  V10.S4, V14.S4, V15.S4
	WORD $0x6e2cddcc // fmul v12.4s, v14.4s, v12.4s
	FMOVQ  C_GT2CLO(R3), F14
	WORD $0x6e2addca // fmul v10.4s, v14.4s, v10.4s
	WORD $0x4e2ad58c // fadd v12.4s, v12.4s, v10.4s
	WORD $0x4e2cd5ef // fadd v15.4s, v15.4s, v12.4s
	// a = -|v|: ah = vh | sign, al = vl with its sign flipped where vh >= 0
	VORR   V20.B16, V13.B16, V0.B16
	VAND   V20.B16, V13.B16, V1.B16
	VEOR   V20.B16, V1.B16, V1.B16
	VEOR   V15.B16, V1.B16, V1.B16
	BL     ewexp4<>(SB)
	// vh < 0 ? (xc·p)·2^n/(1+e) : x/(1+e)
	WORD $0x6e23dc4a // fmul v10.4s, v2.4s, v3.4s
	WORD $0x6e24dd4a // fmul v10.4s, v10.4s, v4.4s
	WORD $0x4e3fd54a // fadd v10.4s, v10.4s, v31.4s
	WORD $0x6e22dd2b // fmul v11.4s, v9.4s, v2.4s
	WORD $0x6e23dd6b // fmul v11.4s, v11.4s, v3.4s
	WORD $0x6e24dd6b // fmul v11.4s, v11.4s, v4.4s
	WORD $0x4ea0e9ac // fcmlt v12.4s, v13.4s, #0
	VBIF   V12.B16, V8.B16, V11.B16
	WORD $0x6e2afd67 // fdiv v7.4s, v11.4s, v10.4s
	// NaN where x is -Inf (-Inf·0)
	WORD $0x4e31e50c // fcmeq v12.4s, v8.4s, v17.4s
	VBIT   V12.B16, V18.B16, V7.B16
	NEXT

// func ewErfNEON(dst, x *float32, n int, stream bool): ewErf.
TEXT ·ewErfNEON(SB), NOSPLIT, $0-25
	BEGIN
loop:
	VLD1.P 16(R1), [V8.S4]
	WORD $0x4ea0f909 // fabs v9.4s, v8.4s
	// |x| >= 0.875: ±(1 - e^(-z²)·t·K(t - t0)), z = min(|x|, 4),
	// t = 1/(1 + z/2), z² = sh + sl
	FMOVQ  C_ERFMAX(R3), F10
	WORD $0x4eaaf52a // fmin v10.4s, v9.4s, v10.4s
	WORD $0x6e2add4b // fmul v11.4s, v10.4s, v10.4s
	WORD $0x6ea0f96c // fneg v12.4s, v11.4s
	VFMLA  V10.S4, V10.S4, V12.S4
	WORD $0x6ea0f960 // fneg v0.4s, v11.4s
	WORD $0x6ea0f981 // fneg v1.4s, v12.4s
	BL     ewexp4<>(SB)
	FMOVQ  C_HALF(R3), F11
	WORD $0x6e2bdd4b // fmul v11.4s, v10.4s, v11.4s
	WORD $0x4e3fd56b // fadd v11.4s, v11.4s, v31.4s
	WORD $0x6e2bffeb // fdiv v11.4s, v31.4s, v11.4s
	FMOVQ  C_ERFT0(R3), F12
	WORD $0x4eacd56c // fsub v12.4s, v11.4s, v12.4s
	FMOVQ  C_ERFK6(R3), F13
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_ERFK5(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_ERFK4(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_ERFK3(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_ERFK2(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_ERFK1(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_ERFK0(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2ddd6d // fmul v13.4s, v11.4s, v13.4s
	WORD $0x6e2ddc4d // fmul v13.4s, v2.4s, v13.4s
	WORD $0x6e23ddad // fmul v13.4s, v13.4s, v3.4s
	WORD $0x6e24ddad // fmul v13.4s, v13.4s, v4.4s
	WORD $0x4eadd7e7 // fsub v7.4s, v31.4s, v13.4s
	VAND   V20.B16, V8.B16, V14.B16
	VORR   V14.B16, V7.B16, V7.B16
	// |x| < 0.875: x + x·(P(s) - 1), s = x²
	WORD $0x6e28dd0a // fmul v10.4s, v8.4s, v8.4s
	FMOVQ  C_ERFC5(R3), F11
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_ERFC4(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_ERFC3(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_ERFC2(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_ERFC1(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_ERFC0M1(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2bdd0b // fmul v11.4s, v8.4s, v11.4s
	WORD $0x4e2bd50b // fadd v11.4s, v8.4s, v11.4s
	FMOVQ  C_ERFSMALL(R3), F12
	WORD $0x6ea9e58c // fcmgt v12.4s, v12.4s, v9.4s
	VBIT   V12.B16, V11.B16, V7.B16
	NEXT

// func ewGeluNEON(dst, x *float32, n int, stream bool): ewGelu.
TEXT ·ewGeluNEON(SB), NOSPLIT, $0-25
	BEGIN
	NINFNANINIT
loop:
	VLD1.P 16(R1), [V8.S4]
	WORD $0x4ea0f909 // fabs v9.4s, v8.4s
	// |x| >= 0.75: T = e^(-z²/2)·G(t - t0), z = min(|x|, 15), z² = sh + sl
	FMOVQ  C_GELUMAX(R3), F10
	WORD $0x4eaaf52a // fmin v10.4s, v9.4s, v10.4s
	WORD $0x6e2add4b // fmul v11.4s, v10.4s, v10.4s
	WORD $0x6ea0f96c // fneg v12.4s, v11.4s
	VFMLA  V10.S4, V10.S4, V12.S4
	FMOVQ  C_MHALF(R3), F13
	WORD $0x6e2bdda0 // fmul v0.4s, v13.4s, v11.4s
	WORD $0x6e2cdda1 // fmul v1.4s, v13.4s, v12.4s
	BL     ewexp4<>(SB)
	// t = 4/(4+z) = th + tl: dh + dl = max(z, 4) + min(z, 4) (Fast2Sum),
	// th = 4/dh, rho = 4 - th·dh (exact), tl = (rho - th·dl)·(th/4)
	FMOVQ  C_FOUR(R3), F11
	WORD $0x4e2bf54c // fmax v12.4s, v10.4s, v11.4s
	WORD $0x4eabf54d // fmin v13.4s, v10.4s, v11.4s
	WORD $0x4e2dd58e // fadd v14.4s, v12.4s, v13.4s
	WORD $0x4eaed58f // fsub v15.4s, v12.4s, v14.4s
	WORD $0x4e2dd5ef // fadd v15.4s, v15.4s, v13.4s
	WORD $0x6e2efd6c // fdiv v12.4s, v11.4s, v14.4s
	VFMLS  V12.S4, V14.S4, V11.S4
	WORD $0x6e2fdd8f // fmul v15.4s, v12.4s, v15.4s
	WORD $0x4eafd56b // fsub v11.4s, v11.4s, v15.4s
	FMOVQ  C_QUARTER(R3), F13
	WORD $0x6e2ddd8d // fmul v13.4s, v12.4s, v13.4s
	WORD $0x6e2ddd6b // fmul v11.4s, v11.4s, v13.4s
	// u = (th - t0) + tl; G(u) (Horner)
	FMOVQ  C_GELUT0(R3), F13
	WORD $0x4eadd58c // fsub v12.4s, v12.4s, v13.4s
	WORD $0x4e2bd58c // fadd v12.4s, v12.4s, v11.4s
	FMOVQ  C_GELUG8(R3), F13
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG7(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG6(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG5(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG4(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG3(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG2(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG1(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	WORD $0x6e2cddad // fmul v13.4s, v13.4s, v12.4s
	FMOVQ  C_GELUG0(R3), F14
	WORD $0x4e2ed5ad // fadd v13.4s, v13.4s, v14.4s
	// T = (p·G)·2^n; x > 0 ? x - T : -T
	WORD $0x6e2ddc4d // fmul v13.4s, v2.4s, v13.4s
	WORD $0x6e23ddad // fmul v13.4s, v13.4s, v3.4s
	WORD $0x6e24ddad // fmul v13.4s, v13.4s, v4.4s
	WORD $0x4eadd50e // fsub v14.4s, v8.4s, v13.4s
	WORD $0x6ea0f9a7 // fneg v7.4s, v13.4s
	WORD $0x4ea0c90f // fcmgt v15.4s, v8.4s, #0
	VBIT   V15.B16, V14.B16, V7.B16
	// |x| < 0.75: x·(x·P(s) + 1/2), s = x²
	WORD $0x6e28dd0a // fmul v10.4s, v8.4s, v8.4s
	FMOVQ  C_GELUP4(R3), F11
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_GELUP3(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_GELUP2(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_GELUP1(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2add6b // fmul v11.4s, v11.4s, v10.4s
	FMOVQ  C_GELUP0(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2bdd0b // fmul v11.4s, v8.4s, v11.4s
	FMOVQ  C_HALF(R3), F12
	WORD $0x4e2cd56b // fadd v11.4s, v11.4s, v12.4s
	WORD $0x6e2bdd0b // fmul v11.4s, v8.4s, v11.4s
	FMOVQ  C_GELUSMALL(R3), F12
	WORD $0x6ea9e58c // fcmgt v12.4s, v12.4s, v9.4s
	VBIT   V12.B16, V11.B16, V7.B16
	// NaN where x is -Inf (-Inf·0)
	WORD $0x4e31e50c // fcmeq v12.4s, v8.4s, v17.4s
	VBIT   V12.B16, V18.B16, V7.B16
	NEXT
