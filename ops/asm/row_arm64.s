//go:build !purego

#include "textflag.h"

// Row primitives, NEON. See row_arm64.go for each contract. Vector
// floating point has no mnemonics in Go's assembler: those instructions
// are WORDs with their GNU form in a comment (neon_words_test.go checks
// them against the disassembly). Tails shorter than a vector run one
// element at a time in scalar registers (expShift: through the vector
// code, a lane at a time), so nothing outside x[0:n] is read and nothing
// outside y[0:n] is written.

#define PY R0 // y
#define PX R1 // x
#define N  R2 // elements left
#define T  R3 // scratch

// ---------------------------------------------------------------------
// func expShiftF32NEON(y, x *float32, n int, m float32) float64
// Constants in V16-V28 (every lane), float64 sums in V29 and V30, -Inf
// in V31. Per four lanes, with x in V0 (expDiff in row_go.go, step by
// step, each operation rounded as there):
//   - t = x - m (V1) and e, its rounding error (V3; Knuth's TwoSum);
//   - V4 marks t < expLo (and -Inf): those lanes end as +0;
//   - k = round(t·log2 e) (V2), r = t - k·ln2hi - k·ln2lo + e (V1);
//   - p = 1 + r + r²·P(r) (V5), times 2^k built as (k+127)<<23.
// A NaN gives a NaN p: the scale is garbage but NaN times it is NaN.
// ---------------------------------------------------------------------
TEXT ·expShiftF32NEON(SB), NOSPLIT, $0-40
	MOVD  y+0(FP), PY
	MOVD  x+8(FP), PX
	MOVD  n+16(FP), N
	MOVWU m+24(FP), T
	VDUP  T, V16.S4
	MOVW  $0xc2aeac4f, T // expLo = -87.33654
	VDUP  T, V17.S4
	MOVW  $0x3fb8aa3b, T // log2 e
	VDUP  T, V18.S4
	MOVW  $0x3f318000, T // ln2 hi
	VDUP  T, V19.S4
	MOVW  $0xb95e8083, T // ln2 lo
	VDUP  T, V20.S4
	MOVW  $0x39506967, T // P0
	VDUP  T, V21.S4
	MOVW  $0x3ab743ce, T // P1
	VDUP  T, V22.S4
	MOVW  $0x3c088908, T // P2
	VDUP  T, V23.S4
	MOVW  $0x3d2aa9c1, T // P3
	VDUP  T, V24.S4
	MOVW  $0x3e2aaaaa, T // P4
	VDUP  T, V25.S4
	MOVW  $0x3f000000, T // P5
	VDUP  T, V26.S4
	MOVW  $0x3f800000, T // 1
	VDUP  T, V27.S4
	MOVW  $127, T        // exponent bias
	VDUP  T, V28.S4
	MOVW  $0xff800000, T // -Inf
	VDUP  T, V31.S4
	VEOR  V29.B16, V29.B16, V29.B16
	VEOR  V30.B16, V30.B16, V30.B16
	CBZ   N, expFold

exp4:
	CMP    $4, N
	BLT    expPart
	VLD1.P 16(PX), [V0.S4]
	B      expBody

expPart: // 1-3 left; the other lanes hold -Inf
	VMOV  V31.B16, V0.B16
	MOVWU (PX), T
	VMOV  T, V0.S[0]
	CMP   $2, N
	BLT   expBody
	MOVWU 4(PX), T
	VMOV  T, V0.S[1]
	CMP   $3, N
	BLT   expBody
	MOVWU 8(PX), T
	VMOV  T, V0.S[2]

expBody:
	WORD   $0x4eb0d401 // fsub v1.4s, v0.4s, v16.4s
	WORD   $0x4ea0d422 // fsub v2.4s, v1.4s, v0.4s
	WORD   $0x4ea2d423 // fsub v3.4s, v1.4s, v2.4s
	WORD   $0x4ea3d403 // fsub v3.4s, v0.4s, v3.4s
	WORD   $0x4e22d602 // fadd v2.4s, v16.4s, v2.4s
	WORD   $0x4ea2d463 // fsub v3.4s, v3.4s, v2.4s
	WORD   $0x6ea1e624 // fcmgt v4.4s, v17.4s, v1.4s
	WORD   $0x6e32dc22 // fmul v2.4s, v1.4s, v18.4s
	WORD   $0x4e218842 // frintn v2.4s, v2.4s
	WORD   $0x6e33dc45 // fmul v5.4s, v2.4s, v19.4s
	WORD   $0x4ea5d421 // fsub v1.4s, v1.4s, v5.4s
	WORD   $0x6e34dc45 // fmul v5.4s, v2.4s, v20.4s
	WORD   $0x4ea5d421 // fsub v1.4s, v1.4s, v5.4s
	WORD   $0x4e23d421 // fadd v1.4s, v1.4s, v3.4s
	WORD   $0x6e21dea5 // fmul v5.4s, v21.4s, v1.4s
	WORD   $0x4e36d4a5 // fadd v5.4s, v5.4s, v22.4s
	WORD   $0x6e21dca5 // fmul v5.4s, v5.4s, v1.4s
	WORD   $0x4e37d4a5 // fadd v5.4s, v5.4s, v23.4s
	WORD   $0x6e21dca5 // fmul v5.4s, v5.4s, v1.4s
	WORD   $0x4e38d4a5 // fadd v5.4s, v5.4s, v24.4s
	WORD   $0x6e21dca5 // fmul v5.4s, v5.4s, v1.4s
	WORD   $0x4e39d4a5 // fadd v5.4s, v5.4s, v25.4s
	WORD   $0x6e21dca5 // fmul v5.4s, v5.4s, v1.4s
	WORD   $0x4e3ad4a5 // fadd v5.4s, v5.4s, v26.4s
	WORD   $0x6e21dc23 // fmul v3.4s, v1.4s, v1.4s
	WORD   $0x6e23dca5 // fmul v5.4s, v5.4s, v3.4s
	WORD   $0x4e21d4a5 // fadd v5.4s, v5.4s, v1.4s
	WORD   $0x4e3bd4a5 // fadd v5.4s, v5.4s, v27.4s
	WORD   $0x4ea1b842 // fcvtzs v2.4s, v2.4s
	VADD   V28.S4, V2.S4, V2.S4
	VSHL   $23, V2.S4, V2.S4
	WORD   $0x6e22dca5 // fmul v5.4s, v5.4s, v2.4s
	WORD   $0x4e641ca5 // bic v5.16b, v5.16b, v4.16b
	CBZ    PY, expSum
	CMP    $4, N
	BLT    expPartStore
	VST1.P [V5.S4], 16(PY)
	B      expSum

expPartStore:
	FMOVS F5, (PY)
	CMP   $2, N
	BLT   expSum
	VMOV  V5.S[1], T
	MOVW  T, 4(PY)
	CMP   $3, N
	BLT   expSum
	VMOV  V5.S[2], T
	MOVW  T, 8(PY)

expSum:
	WORD $0x0e6178a6 // fcvtl v6.2d, v5.2s
	WORD $0x4e6178a7 // fcvtl2 v7.2d, v5.4s
	WORD $0x4e66d7bd // fadd v29.2d, v29.2d, v6.2d
	WORD $0x4e67d7de // fadd v30.2d, v30.2d, v7.2d
	SUBS $4, N
	BGT  exp4

expFold:
	WORD  $0x4e7ed7bd // fadd v29.2d, v29.2d, v30.2d
	WORD  $0x7e70dba0 // faddp d0, v29.2d
	FMOVD F0, ret+32(FP)
	RET

// ---------------------------------------------------------------------
// func scaleF32NEON(y *float32, n int, s float32)
// ---------------------------------------------------------------------
TEXT ·scaleF32NEON(SB), NOSPLIT, $0-20
	MOVD  y+0(FP), PY
	MOVD  n+8(FP), N
	MOVWU s+16(FP), T
	VDUP  T, V16.S4

scale16:
	CMP    $16, N
	BLT    scale4
	VLD1   (PY), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD   $0x6e30dc00 // fmul v0.4s, v0.4s, v16.4s
	WORD   $0x6e30dc21 // fmul v1.4s, v1.4s, v16.4s
	WORD   $0x6e30dc42 // fmul v2.4s, v2.4s, v16.4s
	WORD   $0x6e30dc63 // fmul v3.4s, v3.4s, v16.4s
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(PY)
	SUB    $16, N
	B      scale16

scale4:
	CMP    $4, N
	BLT    scale1
	VLD1   (PY), [V0.S4]
	WORD   $0x6e30dc00 // fmul v0.4s, v0.4s, v16.4s
	VST1.P [V0.S4], 16(PY)
	SUB    $4, N
	B      scale4

scale1:
	CBZ     N, scaleDone
	FMOVS   (PY), F0
	FMULS   F16, F0, F0
	FMOVS.P F0, 4(PY)
	SUB     $1, N
	B       scale1

scaleDone:
	RET

// ---------------------------------------------------------------------
// func normF32NEON(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32)
// ---------------------------------------------------------------------
#define PS R4 // scale
#define PB R5 // bias
#define SS R6 // bytes to advance scale per four elements (0 or 16), then per one
#define BS R7 // same for bias

TEXT ·normF32NEON(SB), NOSPLIT, $0-68
	MOVD  y+0(FP), PY
	MOVD  x+8(FP), PX
	MOVD  scale+16(FP), PS
	MOVD  bias+24(FP), PB
	MOVD  n+32(FP), N
	MOVD  sstep+40(FP), SS
	MOVD  bstep+48(FP), BS
	LSL   $4, SS
	LSL   $4, BS
	MOVWU mhi+56(FP), T
	VDUP  T, V16.S4
	MOVWU mlo+60(FP), T
	VDUP  T, V17.S4
	MOVWU r+64(FP), T
	VDUP  T, V18.S4

norm4:
	CMP    $4, N
	BLT    norm1
	VLD1.P 16(PX), [V0.S4]
	VLD1.P (PS)(SS), [V1.S4]
	VLD1.P (PB)(BS), [V2.S4]
	WORD   $0x4eb0d400 // fsub v0.4s, v0.4s, v16.4s
	WORD   $0x4eb1d400 // fsub v0.4s, v0.4s, v17.4s
	WORD   $0x6e32dc00 // fmul v0.4s, v0.4s, v18.4s
	WORD   $0x6e21dc00 // fmul v0.4s, v0.4s, v1.4s
	WORD   $0x4e22d400 // fadd v0.4s, v0.4s, v2.4s
	VST1.P [V0.S4], 16(PY)
	SUB    $4, N
	B      norm4

norm1:
	LSR $2, SS
	LSR $2, BS

normNext:
	CBZ     N, normDone
	FMOVS.P 4(PX), F0
	FMOVS   (PS), F1
	FMOVS   (PB), F2
	ADD     SS, PS
	ADD     BS, PB
	FSUBS   F16, F0, F0
	FSUBS   F17, F0, F0
	FMULS   F18, F0, F0
	FMULS   F1, F0, F0
	FADDS   F2, F0, F0
	FMOVS.P F0, 4(PY)
	SUB     $1, N
	B       normNext

normDone:
	RET

// ---------------------------------------------------------------------
// func axpyF32NEON(y, x *float32, n int, a float32)
// ---------------------------------------------------------------------
TEXT ·axpyF32NEON(SB), NOSPLIT, $0-28
	MOVD  y+0(FP), PY
	MOVD  x+8(FP), PX
	MOVD  n+16(FP), N
	MOVWU a+24(FP), T
	VDUP  T, V16.S4

axpy16:
	CMP    $16, N
	BLT    axpy4
	VLD1.P 64(PX), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1   (PY), [V4.S4, V5.S4, V6.S4, V7.S4]
	VFMLA  V0.S4, V16.S4, V4.S4 // y += a·x
	VFMLA  V1.S4, V16.S4, V5.S4
	VFMLA  V2.S4, V16.S4, V6.S4
	VFMLA  V3.S4, V16.S4, V7.S4
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(PY)
	SUB    $16, N
	B      axpy16

axpy4:
	CMP    $4, N
	BLT    axpy1
	VLD1.P 16(PX), [V0.S4]
	VLD1   (PY), [V4.S4]
	VFMLA  V0.S4, V16.S4, V4.S4
	VST1.P [V4.S4], 16(PY)
	SUB    $4, N
	B      axpy4

axpy1:
	CBZ     N, axpyDone
	FMOVS.P 4(PX), F0
	FMOVS   (PY), F1
	FMADDS  F16, F1, F0, F1 // s1 += s0·a
	FMOVS.P F1, 4(PY)
	SUB     $1, N
	B       axpy1

axpyDone:
	RET
