//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 float32 math kernels: dst[i] = f(x[i]) for n a multiple of 16
// (checked in Go), 16 lanes per step. Each follows its Go twin in
// math_scalar*.go, and the AVX2 kernel in math_amd64.s, step for step, in
// the same order and with the same roundings, so the results are
// identical: plain VMULPS/VADDPS where the twin writes a float32
// operation, fused operations only where the twin's result is exact
// (error terms of two-product splits, division residuals, a product that
// is exact before its sum), and both sides of a branch computed and then
// selected under an opmask. Every vector is loaded before its result is
// stored, so dst may be x.
//
// AVX-512 where it keeps the bits: 2^n scaling is VSCALEFPS (the twin's
// ewScale rounds v·2^n once, its first power-of-two product being exact
// wherever it is used); log's x = 2^e·m comes from VGETEXPPS and
// VGETMANTPS (exact, subnormals included, so no prescaling) and its
// special inputs (0, negative, +Inf, NaN) from one VFIXUPIMMPS, as the
// NaN of the x·gate(x) activations at -Inf; a sign
// copied or flipped under a mask is one VPTERNLOGD; constants are
// broadcast from single words (embedded broadcast, .BCST) or, where
// VMAXPS/VMINPS need them as the first source (so that a NaN x is the
// value returned), held in zmm26-31 across the loop.

// The constant table: 4 bytes per constant, offsets C_*, in the order of
// ewConstSlots (math_consts_amd64_test.go), then the AVX-512 ones; a
// test checks it against the Go constants.
#define C_ONE 0
#define C_HALF 4
#define C_SIGN 8
#define C_ABS 12
#define C_EXPMIN 16
#define C_EXPMAX 20
#define C_LOG2E 24
#define C_LN2HI 28
#define C_LN2LO 32
#define C_EXPC0 36
#define C_EXPC1 40
#define C_EXPC2 44
#define C_EXPC3 48
#define C_EXPC4 52
#define C_B127 56
#define C_LOGTINY 60
#define C_LOGPRE 64
#define C_M23 68
#define C_SQRTHALF 72
#define C_LOGC0 76
#define C_LOGC1 80
#define C_LOGC2 84
#define C_LOGC3 88
#define C_LOGC4 92
#define C_LOGC5 96
#define C_LOGC6 100
#define C_LOGC7 104
#define C_NINF 108
#define C_QNAN 112
#define C_TANHSMALL 116
#define C_TANHC0 120
#define C_TANHC1 124
#define C_TANHC2 128
#define C_TANHC3 132
#define C_TANHC4 136
#define C_SILUMIN 140
#define C_GTMAX 144
#define C_GTMIN 148
#define C_GTK 152
#define C_GTKLO 156
#define C_GT2C 160
#define C_GT2CLO 164
#define C_ERFSMALL 168
#define C_ERFMAX 172
#define C_ERFT0 176
#define C_ERFC0M1 180
#define C_ERFC1 184
#define C_ERFC2 188
#define C_ERFC3 192
#define C_ERFC4 196
#define C_ERFC5 200
#define C_ERFK0 204
#define C_ERFK1 208
#define C_ERFK2 212
#define C_ERFK3 216
#define C_ERFK4 220
#define C_ERFK5 224
#define C_ERFK6 228
#define C_GELUSMALL 232
#define C_GELUMAX 236
#define C_GELUT0 240
#define C_GELUP0 244
#define C_GELUP1 248
#define C_GELUP2 252
#define C_GELUP3 256
#define C_GELUP4 260
#define C_GELUG0 264
#define C_GELUG1 268
#define C_GELUG2 272
#define C_GELUG3 276
#define C_GELUG4 280
#define C_GELUG5 284
#define C_GELUG6 288
#define C_GELUG7 292
#define C_GELUG8 296
#define C_QUARTER 300
#define C_MHALF 304
#define C_PINF 308
#define C_FOUR 312
#define C_LOGFIX 316 // VFIXUPIMMPS table of log (see ewLogAVX512)
#define C_LOGM2 320  // 2·float32(√½): VGETMANTPS's m in [1, 2) at or above it is halved
#define C_NINFNAN 324 // VFIXUPIMMPS table: NaN for -Inf, the result for the rest

DATA ewc512<>+C_ONE(SB)/4, $0x3f800000
DATA ewc512<>+C_HALF(SB)/4, $0x3f000000
DATA ewc512<>+C_SIGN(SB)/4, $0x80000000
DATA ewc512<>+C_ABS(SB)/4, $0x7fffffff
DATA ewc512<>+C_EXPMIN(SB)/4, $0xc2f00000
DATA ewc512<>+C_EXPMAX(SB)/4, $0x42b20000
DATA ewc512<>+C_LOG2E(SB)/4, $0x3fb8aa3b
DATA ewc512<>+C_LN2HI(SB)/4, $0x3f317200
DATA ewc512<>+C_LN2LO(SB)/4, $0x35bfbe8e
DATA ewc512<>+C_EXPC0(SB)/4, $0x3efffffe
DATA ewc512<>+C_EXPC1(SB)/4, $0x3e2aaa49
DATA ewc512<>+C_EXPC2(SB)/4, $0x3d2aac79
DATA ewc512<>+C_EXPC3(SB)/4, $0x3c091d05
DATA ewc512<>+C_EXPC4(SB)/4, $0x3ab511f9
DATA ewc512<>+C_B127(SB)/4, $0x0000007f
DATA ewc512<>+C_LOGTINY(SB)/4, $0x00800000
DATA ewc512<>+C_LOGPRE(SB)/4, $0x4b000000
DATA ewc512<>+C_M23(SB)/4, $0xc1b80000
DATA ewc512<>+C_SQRTHALF(SB)/4, $0x3f3504f3
DATA ewc512<>+C_LOGC0(SB)/4, $0x3eaaaaaa
DATA ewc512<>+C_LOGC1(SB)/4, $0xbe800113
DATA ewc512<>+C_LOGC2(SB)/4, $0x3e4cd004
DATA ewc512<>+C_LOGC3(SB)/4, $0xbe2a3922
DATA ewc512<>+C_LOGC4(SB)/4, $0x3e116d0d
DATA ewc512<>+C_LOGC5(SB)/4, $0xbe06c2a3
DATA ewc512<>+C_LOGC6(SB)/4, $0x3e02adc2
DATA ewc512<>+C_LOGC7(SB)/4, $0xbd9c5ad5
DATA ewc512<>+C_NINF(SB)/4, $0xff800000
DATA ewc512<>+C_QNAN(SB)/4, $0x7fc00000
DATA ewc512<>+C_TANHSMALL(SB)/4, $0x3f200000
DATA ewc512<>+C_TANHC0(SB)/4, $0xbeaaaa99
DATA ewc512<>+C_TANHC1(SB)/4, $0x3e088393
DATA ewc512<>+C_TANHC2(SB)/4, $0xbd5c1e2d
DATA ewc512<>+C_TANHC3(SB)/4, $0x3ca9134e
DATA ewc512<>+C_TANHC4(SB)/4, $0xbbbaf0e7
DATA ewc512<>+C_SILUMIN(SB)/4, $0xc2f00000
DATA ewc512<>+C_GTMAX(SB)/4, $0x41a00000
DATA ewc512<>+C_GTMIN(SB)/4, $0xc1a00000
DATA ewc512<>+C_GTK(SB)/4, $0x3d372713
DATA ewc512<>+C_GTKLO(SB)/4, $0x30d4801f
DATA ewc512<>+C_GT2C(SB)/4, $0x3fcc422a
DATA ewc512<>+C_GT2CLO(SB)/4, $0xb342bc9b
DATA ewc512<>+C_ERFSMALL(SB)/4, $0x3f600000
DATA ewc512<>+C_ERFMAX(SB)/4, $0x40800000
DATA ewc512<>+C_ERFT0(SB)/4, $0x3f03b5cc
DATA ewc512<>+C_ERFC0M1(SB)/4, $0x3e0375d3
DATA ewc512<>+C_ERFC1(SB)/4, $0xbec09386
DATA ewc512<>+C_ERFC2(SB)/4, $0x3de7108f
DATA ewc512<>+C_ERFC3(SB)/4, $0xbcdb79c5
DATA ewc512<>+C_ERFC4(SB)/4, $0x3ba4e4ff
DATA ewc512<>+C_ERFC5(SB)/4, $0xba229d57
DATA ewc512<>+C_ERFK0(SB)/4, $0x3f05579c
DATA ewc512<>+C_ERFK1(SB)/4, $0x3f34156c
DATA ewc512<>+C_ERFK2(SB)/4, $0x3f10a7cb
DATA ewc512<>+C_ERFK3(SB)/4, $0x3e0acb6a
DATA ewc512<>+C_ERFK4(SB)/4, $0xbe3763dd
DATA ewc512<>+C_ERFK5(SB)/4, $0xbdbd2c97
DATA ewc512<>+C_ERFK6(SB)/4, $0x3dc6486f
DATA ewc512<>+C_GELUSMALL(SB)/4, $0x3f400000
DATA ewc512<>+C_GELUMAX(SB)/4, $0x41700000
DATA ewc512<>+C_GELUT0(SB)/4, $0x3f06bca2
DATA ewc512<>+C_GELUP0(SB)/4, $0x3ecc422a
DATA ewc512<>+C_GELUP1(SB)/4, $0xbd882c10
DATA ewc512<>+C_GELUP2(SB)/4, $0x3c236310
DATA ewc512<>+C_GELUP3(SB)/4, $0xba9ad559
DATA ewc512<>+C_GELUP4(SB)/4, $0x38d7e1cd
DATA ewc512<>+C_GELUG0(SB)/4, $0x3ebf33ed
DATA ewc512<>+C_GELUG1(SB)/4, $0xbe308185
DATA ewc512<>+C_GELUG2(SB)/4, $0xbf025c24
DATA ewc512<>+C_GELUG3(SB)/4, $0xbf6a271a
DATA ewc512<>+C_GELUG4(SB)/4, $0xbf8fde2f
DATA ewc512<>+C_GELUG5(SB)/4, $0xbf6638b0
DATA ewc512<>+C_GELUG6(SB)/4, $0xbea5affe
DATA ewc512<>+C_GELUG7(SB)/4, $0x3e285eaf
DATA ewc512<>+C_GELUG8(SB)/4, $0x3e4a0009
DATA ewc512<>+C_QUARTER(SB)/4, $0x3e800000
DATA ewc512<>+C_MHALF(SB)/4, $0xbf000000
DATA ewc512<>+C_PINF(SB)/4, $0x7f800000
DATA ewc512<>+C_FOUR(SB)/4, $0x40800000
DATA ewc512<>+C_LOGFIX(SB)/4, $0x03130411
DATA ewc512<>+C_LOGM2(SB)/4, $0x3fb504f3
DATA ewc512<>+C_NINFNAN(SB)/4, $0x00030000
GLOBL ewc512<>(SB), RODATA|NOPTR, $328

// K(c) is the constant c as a broadcast memory operand (with .BCST).
#define K(c) ewc512<>+c(SB)

// The loop frame's registers.
#define DST    DI // output
#define XP     SI // input
#define NB     CX // 16-float blocks left
#define STREAM R8 // non-zero: non-temporal stores

// Constants held in registers across a loop (each kernel loads those it
// uses before its loop).
#define EXPMIN Z31 // ewExpMin
#define EXPMAX Z30 // ewExpMax
#define ONE    Z29 // 1
#define ZERO   Z28 // +0
#define CLO    Z27 // the kernel's own lower clamp (or upper, for erf/GELU's z)
#define CHI    Z26 // the kernel's own upper clamp (or 4 for GELU)

// INITEXP loads the registers the exponential core uses.
#define INITEXP \
	VBROADCASTSS K(C_EXPMIN), EXPMIN \
	VBROADCASTSS K(C_EXPMAX), EXPMAX \
	VBROADCASTSS K(C_ONE), ONE       \
	VPXORD       ZERO, ZERO, ZERO

// EXPRED: range reduction of ewExpCore. R = H clamped to [EXPMIN,
// EXPMAX] (VMAXPS/VMINPS return their second source, H, when it is NaN),
// N = round(R·log2e) and R = (R - N·ln2Hi) - N·ln2Lo, each step one
// FNMADD: N·ln2Hi and the difference are exact (see ewExpCore), and the
// second rounds once, as the twin's ewFMA. H is clobbered; S is not
// used (kept for the callers' symmetry with the AVX2 macros).
#define EXPRED(H, N, R, S) \
	VMAXPS          H, EXPMIN, H         \ // max(h, EXPMIN)
	VMINPS          H, EXPMAX, R         \ // h = min(.., EXPMAX)
	VMULPS.BCST     K(C_LOG2E), R, N     \ // h·log2e
	VRNDSCALEPS     $0, N, N             \ // n: nearest, ties to even (as VROUNDPS $0)
	VFNMADD231PS.BCST K(C_LN2HI), N, R   \ // r = h - n·ln2Hi (exact)
	VFNMADD231PS.BCST K(C_LN2LO), N, R   // r -= n·ln2Lo, rounded once

// EXPREDNEG is EXPRED for an H that is never positive (-|x|, -z²/2): the
// upper clamp would leave it unchanged, so it is skipped (and H is kept).
#define EXPREDNEG(H, N, R, S) \
	VMAXPS          H, EXPMIN, R         \ // h = max(h, EXPMIN)
	VMULPS.BCST     K(C_LOG2E), R, N     \ // h·log2e
	VRNDSCALEPS     $0, N, N             \ // n: nearest, ties to even (as VROUNDPS $0)
	VFNMADD231PS.BCST K(C_LN2HI), N, R   \ // r = h - n·ln2Hi (exact)
	VFNMADD231PS.BCST K(C_LN2LO), N, R   // r -= n·ln2Lo, rounded once

// EXPPOLY: P = ((R·R)·Q + R) + 1 with Q = c0 + c1·R + ... + c4·R⁴ in
// Horner form, every multiply-add fused (rounded once, as ewFMA). R is
// kept; Q and S are scratch.
#define EXPPOLY(R, P, Q, S) \
	VBROADCASTSS     K(C_EXPC4), Q    \ // c4
	VFMADD213PS.BCST K(C_EXPC3), R, Q \ // c4·r + c3
	VFMADD213PS.BCST K(C_EXPC2), R, Q \
	VFMADD213PS.BCST K(C_EXPC1), R, Q \
	VFMADD213PS.BCST K(C_EXPC0), R, Q \ // q
	VMULPS           R, R, S          \ // s = r²
	VFMADD213PS      R, S, Q          \ // s·q + r
	VADDPS           ONE, Q, P        // + 1

// SCALE: D = V·2^N for the integral N of EXPRED, rounded once: as the
// twin's ewScale, whose first factor 2^(k>>1) leaves V·2^(k>>1) exact
// (normal) for every V and N the kernels pass.
#define SCALE(V, N, D) VSCALEFPS N, V, D

// NINFNAN: R = NaN where X is -Inf, R elsewhere (ewNaNAtMinusInf): the
// x·gate(x) activations are -Inf·0 = NaN there, where their clamped cores
// give -0. One VFIXUPIMMPS classifies X: its table answers 3 (QNaN) for
// the -Inf token and 0 (keep R) for every other. Silu and GELU-tanh apply
// it to x as loaded (every later step keeps a NaN), GELU to its result.
// The kernels pay for it: a masked VSCALEFPS or VADDPS merges where a
// separate move did, and the exponential skips its upper clamp
// (EXPREDNEG).
#define NINFNAN(X, R) VFIXUPIMMPS.BCST $0, K(C_NINFNAN), X, R

// BEGIN loads the frame: DST, XP, NB = n/16 blocks, STREAM; it returns
// at once for n = 0.
#define BEGIN \
	MOVQ    dst+0(FP), DST        \
	MOVQ    x+8(FP), XP           \
	MOVQ    n+16(FP), NB          \
	MOVBLZX stream+24(FP), STREAM \
	SHRQ    $4, NB                \
	JZ      done

// NEXT stores the result RES (non-temporally when streaming), advances
// to the next block and loops; after the last it fences the
// non-temporal stores, so that they are visible before the kernel
// returns.
#define NEXT(RES) \
	TESTQ    STREAM, STREAM \
	JNZ      nt             \
	VMOVUPS  RES, (DST)     \
	JMP      adv            \
nt:                         \
	VMOVNTPS RES, (DST)     \
adv:                        \
	ADDQ     $64, XP        \
	ADDQ     $64, DST       \
	DECQ     NB             \
	JNZ      loop           \
	TESTQ    STREAM, STREAM \
	JZ       done           \
	SFENCE                  \
done:                       \
	VZEROUPPER              \
	RET

// func ewExpAVX512(dst, x *float32, n int, stream bool): ewExp.
TEXT ·ewExpAVX512(SB), NOSPLIT, $0-25
	BEGIN
	INITEXP
loop:
	VMOVUPS (XP), Z0          // x
	EXPRED(Z0, Z1, Z2, Z3)    // n = Z1, r = Z2
	EXPPOLY(Z2, Z4, Z5, Z3)   // p = Z4
	SCALE(Z4, Z1, Z0)         // p·2^n
	NEXT(Z0)

// func ewLogAVX512(dst, x *float32, n int, stream bool): ewLog. The main
// path runs on every lane; VFIXUPIMMPS then replaces the result by
// classifying x: by token (VFIXUPIMMPS's order) QNaN → x, SNaN → x,
// ±0 → -Inf, 1 → the result (+0), -Inf → NaN, +Inf → x, negative → NaN,
// positive → the result: the table 0x03130411, one nibble per token.
TEXT ·ewLogAVX512(SB), NOSPLIT, $0-25
	BEGIN
	VBROADCASTSS K(C_ONE), ONE
loop:
	VMOVUPS     (XP), Z0                      // x
	// x = 2^e·m, m in [√½, √2): VGETMANTPS gives m in [1, 2) and
	// VGETEXPPS e = floor(log2 x), both exact (subnormals too: the
	// twin's prescaling by 2^23 and its -23 give the same m and e);
	// where m >= 2·float32(√½), the twin's bit test puts m/2 and e+1.
	VGETMANTPS  $0, Z0, Z1                    // m in [1, 2), x's sign
	VGETEXPPS   Z0, Z2                        // e
	VCMPPS.BCST $13, K(C_LOGM2), Z1, K1       // m >= 2·√½ (GE_OS)
	VMULPS.BCST K(C_HALF), Z1, K1, Z1         // m/2 there (exact)
	VADDPS      ONE, Z2, K1, Z2               // e+1 there
	VSUBPS      ONE, Z1, Z4                   // f = m - 1 (exact)
	// q = P(f)·f - 1/2
	VMULPS.BCST K(C_LOGC7), Z4, Z5
	VADDPS.BCST K(C_LOGC6), Z5, Z5
	VMULPS      Z4, Z5, Z5
	VADDPS.BCST K(C_LOGC5), Z5, Z5
	VMULPS      Z4, Z5, Z5
	VADDPS.BCST K(C_LOGC4), Z5, Z5
	VMULPS      Z4, Z5, Z5
	VADDPS.BCST K(C_LOGC3), Z5, Z5
	VMULPS      Z4, Z5, Z5
	VADDPS.BCST K(C_LOGC2), Z5, Z5
	VMULPS      Z4, Z5, Z5
	VADDPS.BCST K(C_LOGC1), Z5, Z5
	VMULPS      Z4, Z5, Z5
	VADDPS.BCST K(C_LOGC0), Z5, Z5
	VMULPS      Z4, Z5, Z5
	VSUBPS.BCST K(C_HALF), Z5, Z5             // q
	// e·ln2Hi + ((f²·q + e·ln2Lo) + f); e·ln2Hi is exact, so its sum
	// is one FMA.
	VMULPS      Z4, Z4, Z6                    // f²
	VMULPS      Z5, Z6, Z6                    // lo = f²·q
	VMULPS.BCST K(C_LN2LO), Z2, Z7            // e·ln2Lo
	VADDPS      Z7, Z6, Z6                    // lo + e·ln2Lo
	VADDPS      Z4, Z6, Z6                    // + f
	VFMADD231PS.BCST K(C_LN2HI), Z2, Z6       // + e·ln2Hi
	// Special lanes, by x's class.
	VFIXUPIMMPS.BCST $0, K(C_LOGFIX), Z0, Z6
	NEXT(Z6)

// func ewTanhAVX512(dst, x *float32, n int, stream bool): ewTanh.
TEXT ·ewTanhAVX512(SB), NOSPLIT, $0-25
	BEGIN
	INITEXP
loop:
	VMOVUPS     (XP), Z0                      // x
	VPANDD.BCST K(C_ABS), Z0, Z1              // ax
	// |x| < 0.625: x + (x·s)·P(s), s = x²
	VMULPS      Z0, Z0, Z2                    // s
	VMULPS.BCST K(C_TANHC4), Z2, Z3
	VADDPS.BCST K(C_TANHC3), Z3, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS.BCST K(C_TANHC2), Z3, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS.BCST K(C_TANHC1), Z3, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS.BCST K(C_TANHC0), Z3, Z3           // q
	VMULPS      Z2, Z0, Z4                    // x·s
	VMULPS      Z3, Z4, Z4                    // ·q
	VADDPS      Z0, Z4, Z4                    // small result
	// else (1-e)/(1+e), e = exp(-2|x|)
	VADDPS      Z1, Z1, Z5
	VPXORD.BCST K(C_SIGN), Z5, Z5             // -2|x|
	EXPRED(Z5, Z6, Z7, Z8)                    // n = Z6, r = Z7
	EXPPOLY(Z7, Z9, Z10, Z8)                  // p = Z9
	SCALE(Z9, Z6, Z9)                         // e
	VSUBPS      Z9, ONE, Z11                  // 1 - e
	VADDPS      ONE, Z9, Z12                  // 1 + e
	VDIVPS      Z12, Z11, Z11                 // large result
	VCMPPS.BCST $1, K(C_TANHSMALL), Z1, K1    // ax < 0.625
	VMOVAPS     Z4, K1, Z11                   // the small result there
	// t | (x & sign): x's sign (keeps tanh(-0) = -0)
	VPTERNLOGD.BCST $0xf8, K(C_SIGN), Z0, Z11
	NEXT(Z11)

// func ewSigmoidAVX512(dst, x *float32, n int, stream bool): ewSigmoid,
// that is ewGated with multipliers 1 and no low part.
TEXT ·ewSigmoidAVX512(SB), NOSPLIT, $0-25
	BEGIN
	INITEXP
loop:
	VMOVUPS     (XP), Z0                      // x
	VPORD.BCST  K(C_SIGN), Z0, Z1             // a = -|x|
	EXPRED(Z1, Z2, Z3, Z4)                    // n = Z2, r = Z3
	EXPPOLY(Z3, Z5, Z6, Z4)                   // p = Z5
	SCALE(Z5, Z2, Z7)                         // e = p·2^n (the x < 0 numerator)
	VADDPS      ONE, Z7, Z10                  // 1 + e
	VCMPPS      $1, ZERO, Z0, K1              // x < 0
	VBLENDMPS   Z7, ONE, K1, Z11              // numerator: e there, else 1
	VDIVPS      Z10, Z11, Z0
	NEXT(Z0)

// func ewSiluAVX512(dst, x *float32, n int, stream bool): ewSilu.
TEXT ·ewSiluAVX512(SB), NOSPLIT, $0-25
	BEGIN
	INITEXP
	VBROADCASTSS K(C_SILUMIN), CLO
loop:
	VMOVUPS     (XP), Z0                      // x
	NINFNAN(Z0, Z0)                           // NaN for -Inf, which every step keeps
	VMAXPS      Z0, CLO, Z0                   // x = max(x, -120), NaN kept
	VPORD.BCST  K(C_SIGN), Z0, Z1             // a = -|x|
	EXPREDNEG(Z1, Z2, Z3, Z4)                 // n = Z2, r = Z3
	EXPPOLY(Z3, Z5, Z6, Z4)                   // p = Z5
	SCALE(Z5, Z2, Z7)                         // e
	VADDPS      ONE, Z7, Z7                   // 1 + e
	VMULPS      Z5, Z0, Z6                    // x·p
	VCMPPS      $1, ZERO, Z0, K1              // x < 0
	VSCALEFPS   Z2, Z6, K1, Z0                // numerator: x·p·2^n there, else x
	VDIVPS      Z7, Z0, Z0
	NEXT(Z0)

// func ewGeluTanhAVX512(dst, x *float32, n int, stream bool): ewGeluTanh.
TEXT ·ewGeluTanhAVX512(SB), NOSPLIT, $0-25
	BEGIN
	INITEXP
	VBROADCASTSS K(C_GTMIN), CLO
	VBROADCASTSS K(C_GTMAX), CHI
loop:
	VMOVUPS     (XP), Z0                      // x
	NINFNAN(Z0, Z0)                           // NaN for -Inf, which every step keeps
	VMAXPS      Z0, CLO, Z1
	VMINPS      Z1, CHI, Z1                   // xc = min(max(x, -20), 20)
	// x³ = x3h + x3l
	VMULPS      Z1, Z1, Z2                    // x2h
	VMOVAPS     Z2, Z3
	VFMSUB231PS Z1, Z1, Z3                    // x2l = xc·xc - x2h
	VMULPS      Z1, Z2, Z4                    // x3h
	VMOVAPS     Z4, Z5
	VFMSUB231PS Z1, Z2, Z5                    // x2h·xc - x3h
	VMULPS      Z1, Z3, Z6                    // x2l·xc
	VADDPS      Z6, Z5, Z5                    // x3l
	// k·x³ = kh + kl
	VMULPS.BCST K(C_GTK), Z4, Z6              // kh
	VMOVAPS     Z6, Z7
	VFMSUB231PS.BCST K(C_GTK), Z4, Z7         // x3h·k - kh
	VMULPS.BCST K(C_GTK), Z5, Z8              // k·x3l
	VMULPS.BCST K(C_GTKLO), Z4, Z9            // kLo·x3h
	VADDPS      Z9, Z8, Z8
	VADDPS      Z8, Z7, Z7                    // kl
	// w = xc + kh (two-sum) + kl
	VADDPS      Z6, Z1, Z2                    // wh
	VSUBPS      Z1, Z2, Z3                    // bb = wh - xc
	VSUBPS      Z3, Z2, Z4                    // wh - bb
	VSUBPS      Z4, Z1, Z4                    // xc - (wh - bb)
	VSUBPS      Z3, Z6, Z5                    // kh - bb
	VADDPS      Z5, Z4, Z4
	VADDPS      Z7, Z4, Z4                    // wl
	// v = 2√(2/π)·w = vh + vl
	VMULPS.BCST K(C_GT2C), Z2, Z3             // vh
	VMOVAPS     Z3, Z5
	VFMSUB231PS.BCST K(C_GT2C), Z2, Z5        // wh·c - vh
	VMULPS.BCST K(C_GT2C), Z4, Z6             // c·wl
	VMULPS.BCST K(C_GT2CLO), Z2, Z7           // cLo·wh
	VADDPS      Z7, Z6, Z6
	VADDPS      Z6, Z5, Z5                    // vl
	// a = -|v|: ah = vh | sign; al = vl ^ (^vh & sign), vl with its
	// sign flipped where vh's is clear (VPTERNLOGD: A ^ (^B & C)).
	VPORD.BCST  K(C_SIGN), Z3, Z2             // ah
	VPTERNLOGD.BCST $0xd2, K(C_SIGN), Z3, Z5  // al
	EXPREDNEG(Z2, Z4, Z6, Z7)                 // n = Z4, r = Z6
	VADDPS      Z5, Z6, Z6                    // r += al
	EXPPOLY(Z6, Z8, Z9, Z7)                   // p = Z8
	SCALE(Z8, Z4, Z9)                         // e
	VADDPS      ONE, Z9, Z9                   // 1 + e
	VMULPS      Z8, Z1, Z10                   // xc·p
	VCMPPS      $1, ZERO, Z3, K1              // vh < 0
	VSCALEFPS   Z4, Z10, K1, Z0               // numerator: xc·p·2^n there, else x
	VDIVPS      Z9, Z0, Z0
	NEXT(Z0)

// func ewErfAVX512(dst, x *float32, n int, stream bool): ewErf.
TEXT ·ewErfAVX512(SB), NOSPLIT, $0-25
	BEGIN
	INITEXP
	VBROADCASTSS K(C_ERFMAX), CLO
loop:
	VMOVUPS     (XP), Z0                      // x
	VPANDD.BCST K(C_ABS), Z0, Z1              // ax
	// |x| < 0.875: x + x·(P(s) - 1)
	VMULPS      Z0, Z0, Z2                    // s
	VMULPS.BCST K(C_ERFC5), Z2, Z3
	VADDPS.BCST K(C_ERFC4), Z3, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS.BCST K(C_ERFC3), Z3, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS.BCST K(C_ERFC2), Z3, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS.BCST K(C_ERFC1), Z3, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS.BCST K(C_ERFC0M1), Z3, Z3          // q
	VMULPS      Z3, Z0, Z3                    // x·q
	VADDPS      Z3, Z0, Z3                    // small result
	// else ±(1 - e^(-z²)·t·K(t - t0)), z = min(|x|, 4), t = 1/(1 + z/2)
	VMINPS      Z1, CLO, Z4                   // z
	VMULPS      Z4, Z4, Z5                    // sh
	VMOVAPS     Z5, Z6
	VFMSUB231PS Z4, Z4, Z6                    // sl = z·z - sh
	VPXORD.BCST K(C_SIGN), Z5, Z5             // -sh
	VPXORD.BCST K(C_SIGN), Z6, Z6             // -sl
	EXPRED(Z5, Z7, Z8, Z9)                    // n = Z7, r = Z8
	VADDPS      Z6, Z8, Z8                    // r += -sl
	EXPPOLY(Z8, Z10, Z11, Z9)                 // p = Z10
	VMULPS.BCST K(C_HALF), Z4, Z6             // z·0.5
	VADDPS      ONE, Z6, Z6                   // + 1
	VDIVPS      Z6, ONE, Z6                   // t
	VSUBPS.BCST K(C_ERFT0), Z6, Z8            // u = t - t0
	VMULPS.BCST K(C_ERFK6), Z8, Z11
	VADDPS.BCST K(C_ERFK5), Z11, Z11
	VMULPS      Z8, Z11, Z11
	VADDPS.BCST K(C_ERFK4), Z11, Z11
	VMULPS      Z8, Z11, Z11
	VADDPS.BCST K(C_ERFK3), Z11, Z11
	VMULPS      Z8, Z11, Z11
	VADDPS.BCST K(C_ERFK2), Z11, Z11
	VMULPS      Z8, Z11, Z11
	VADDPS.BCST K(C_ERFK1), Z11, Z11
	VMULPS      Z8, Z11, Z11
	VADDPS.BCST K(C_ERFK0), Z11, Z11          // K
	VMULPS      Z11, Z6, Z11                  // t·K
	VMULPS      Z11, Z10, Z11                 // p·t·K
	SCALE(Z11, Z7, Z11)                       // erfc
	VSUBPS      Z11, ONE, Z11                 // 1 - erfc
	VPTERNLOGD.BCST $0xf8, K(C_SIGN), Z0, Z11 // | x's sign
	VCMPPS.BCST $1, K(C_ERFSMALL), Z1, K1     // ax < 0.875
	VMOVAPS     Z3, K1, Z11                   // the small result there
	NEXT(Z11)

// ewGeluAVX512 runs two vectors, A and B, per step: one vector's ~90
// operations form a single dependent chain (two Horner polynomials, a
// division), and a second chain in flight keeps more of the FP pipes
// busy. The macros below are its phases, each run on A's registers and
// then on B's; between phases a vector's state is Z (z, then u), N and P
// (e^r = P·2^N), G, and the opmask KS (|x| < 0.75); x is reloaded for the
// last phase, which also computes the small branch.

// GELUEXP: X = |x| (x at MEM), KS = |x| < 0.75, Z = z = min(|x|, 15),
// then N, P = ewExpCore(-sh/2, -sl/2) for z² = sh + sl (sl by FMSUB,
// exact). X, T1..T3 scratch.
#define GELUEXP(MEM, X, Z, N, P, T1, T2, T3, KS) \
	VMOVUPS     MEM, X                       \ // x
	VPANDD.BCST K(C_ABS), X, X               \ // ax
	VCMPPS.BCST $1, K(C_GELUSMALL), X, KS    \ // ax < 0.75
	VMINPS      X, CLO, Z                    \ // z = min(ax, 15)
	VMULPS      Z, Z, T1                     \ // sh
	VMOVAPS     T1, T2                       \
	VFMSUB231PS Z, Z, T2                     \ // sl = z·z - sh
	VMULPS.BCST K(C_MHALF), T1, T1           \ // -sh/2
	VMULPS.BCST K(C_MHALF), T2, T2           \ // -sl/2
	EXPREDNEG(T1, N, T3, X)                  \ // n, r
	VADDPS      T2, T3, T3                   \ // r += -sl/2
	EXPPOLY(T3, P, T1, T2)                   // p

// GELUU: Z = u = (th - t0) + tl for t = 4/(4+z) = th + tl: big, small =
// max(z, 4), min(z, 4), dh = big + small, dl = (big - dh) + small,
// th = 4/dh, rho = 4 - th·dh (FNMADD, exact), tl = (rho - th·dl)·(th/4).
// T1..T4 scratch.
#define GELUU(Z, T1, T2, T3, T4) \
	VMAXPS       Z, CHI, T1              \ // big
	VMINPS       Z, CHI, T2              \ // small
	VADDPS       T2, T1, T3              \ // dh
	VSUBPS       T3, T1, T1              \ // big - dh
	VADDPS       T2, T1, T1              \ // dl
	VDIVPS       T3, CHI, T2             \ // th
	VMOVAPS      CHI, T4                 \
	VFNMADD231PS T2, T3, T4              \ // rho = 4 - th·dh
	VMULPS       T1, T2, T1              \ // th·dl
	VSUBPS       T1, T4, T4              \ // rho - th·dl
	VMULPS.BCST  K(C_QUARTER), T2, T1    \ // th/4
	VMULPS       T1, T4, T4              \ // tl
	VSUBPS.BCST  K(C_GELUT0), T2, T2     \ // th - t0
	VADDPS       T4, T2, Z               // u

// GELUG: G = G(U), Horner.
#define GELUG(U, G) \
	VMULPS.BCST K(C_GELUG8), U, G \
	VADDPS.BCST K(C_GELUG7), G, G \
	VMULPS      U, G, G           \
	VADDPS.BCST K(C_GELUG6), G, G \
	VMULPS      U, G, G           \
	VADDPS.BCST K(C_GELUG5), G, G \
	VMULPS      U, G, G           \
	VADDPS.BCST K(C_GELUG4), G, G \
	VMULPS      U, G, G           \
	VADDPS.BCST K(C_GELUG3), G, G \
	VMULPS      U, G, G           \
	VADDPS.BCST K(C_GELUG2), G, G \
	VMULPS      U, G, G           \
	VADDPS.BCST K(C_GELUG1), G, G \
	VMULPS      U, G, G           \
	VADDPS.BCST K(C_GELUG0), G, G

// GELUFIN: G = the result: T = (P·G)·2^N, x - T where x > 0 and -T
// elsewhere, x·(x·P(s) + 1/2) where KS (x reloaded from MEM into X), NaN
// where x is -Inf. T1, T2 scratch, KP an opmask.
#define GELUFIN(MEM, X, N, P, G, T1, T2, KS, KP) \
	VMULPS      G, P, G                      \ // p·g
	SCALE(G, N, G)                           \ // T
	VMOVUPS     MEM, X                       \ // x
	VPXORD.BCST K(C_SIGN), G, G              \ // -T
	VCMPPS      $1, X, ZERO, KP              \ // 0 < x
	VADDPS      X, G, KP, G                  \ // x + (-T) = x - T there
	VMULPS      X, X, T1                     \ // s
	VMULPS.BCST K(C_GELUP4), T1, T2          \
	VADDPS.BCST K(C_GELUP3), T2, T2          \
	VMULPS      T1, T2, T2                   \
	VADDPS.BCST K(C_GELUP2), T2, T2          \
	VMULPS      T1, T2, T2                   \
	VADDPS.BCST K(C_GELUP1), T2, T2          \
	VMULPS      T1, T2, T2                   \
	VADDPS.BCST K(C_GELUP0), T2, T2          \ // q
	VMULPS      T2, X, T2                    \ // x·q
	VADDPS.BCST K(C_HALF), T2, T2            \ // + 1/2
	VMULPS      T2, X, T2                    \ // small result
	VMOVAPS     T2, KS, G                    \ // there
	NINFNAN(X, G)

// A's registers, and B's: X x (and |x|), Z z then u, E the exponent n,
// P p, T1..T4 scratch (T1 ends as G, the result).
#define XA  Z0
#define ZA  Z1
#define EA  Z2
#define PA  Z3
#define T1A Z4
#define T2A Z5
#define T3A Z6
#define T4A Z7
#define XB  Z8
#define ZB  Z9
#define EB  Z10
#define PB  Z11
#define T1B Z12
#define T2B Z13
#define T3B Z14
#define T4B Z15
#define OFFB R9 // B's offset from A: 64, or 0 for an odd last block

// func ewGeluAVX512(dst, x *float32, n int, stream bool): ewGelu. A is the
// block at XP, B the one at XP+OFFB; for an odd last block OFFB = 0 and B
// computes A's block again (same bits, same dst). Both load x before
// either stores, so dst may be x.
TEXT ·ewGeluAVX512(SB), NOSPLIT, $0-25
	BEGIN
	INITEXP
	VBROADCASTSS K(C_GELUMAX), CLO
	VBROADCASTSS K(C_FOUR), CHI
pair:
	MOVQ    $64, OFFB
	CMPQ    NB, $1
	JNE     both
	XORQ    OFFB, OFFB                 // one block left
both:
	GELUEXP((XP), XA, ZA, EA, PA, T1A, T2A, T3A, K2)
	GELUEXP((XP)(OFFB*1), XB, ZB, EB, PB, T1B, T2B, T3B, K3)
	GELUU(ZA, T1A, T2A, T3A, T4A)
	GELUU(ZB, T1B, T2B, T3B, T4B)
	GELUG(ZA, T1A)                     // g = T1A
	GELUG(ZB, T1B)
	GELUFIN((XP), XA, EA, PA, T1A, T2A, T3A, K2, K4)
	GELUFIN((XP)(OFFB*1), XB, EB, PB, T1B, T2B, T3B, K3, K5)
	TESTQ    STREAM, STREAM
	JNZ      pairnt
	VMOVUPS  T1A, (DST)
	VMOVUPS  T1B, (DST)(OFFB*1)
	JMP      pairadv
pairnt:
	VMOVNTPS T1A, (DST)
	VMOVNTPS T1B, (DST)(OFFB*1)
pairadv:
	ADDQ     $128, XP
	ADDQ     $128, DST
	SUBQ     $2, NB
	JG       pair
	TESTQ    STREAM, STREAM
	JZ       done
	SFENCE
done:
	VZEROUPPER
	RET

// func ewConstTable512() []uint32
TEXT ·ewConstTable512(SB), NOSPLIT, $0-24
	LEAQ ewc512<>(SB), AX
	MOVQ AX, ret_base+0(FP)
	MOVQ $82, AX
	MOVQ AX, ret_len+8(FP)
	MOVQ AX, ret_cap+16(FP)
	RET
