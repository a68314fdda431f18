//go:build !purego

#include "textflag.h"

// Reduction primitives, NEON. See reduce_arm64.go for each contract.
// Go's assembler has no mnemonics for vector floating point, so those
// instructions are WORDs with their GNU form in a comment (checked
// against the disassembly by neon_words_test.go). Tails shorter than a
// vector run one element at a time in scalar registers, so nothing
// outside x[0:n] is read and nothing outside acc[0:n] is written.

#define PX R0 // x
#define PA R1 // acc
#define N  R2 // elements left

// ---------------------------------------------------------------------
// func sumF32NEON(x *float32, n int) float64
// ---------------------------------------------------------------------
TEXT ·sumF32NEON(SB), NOSPLIT, $0-24
	MOVD x+0(FP), PX
	MOVD n+8(FP), N
	VEOR V20.B16, V20.B16, V20.B16 // eight float64 accumulators of two lanes
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16

sum16:
	CMP    $16, N
	BLT    sum4
	VLD1.P 64(PX), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD   $0x0e617804 // fcvtl v4.2d, v0.2s
	WORD   $0x4e617805 // fcvtl2 v5.2d, v0.4s
	WORD   $0x0e617826 // fcvtl v6.2d, v1.2s
	WORD   $0x4e617827 // fcvtl2 v7.2d, v1.4s
	WORD   $0x0e617848 // fcvtl v8.2d, v2.2s
	WORD   $0x4e617849 // fcvtl2 v9.2d, v2.4s
	WORD   $0x0e61786a // fcvtl v10.2d, v3.2s
	WORD   $0x4e61786b // fcvtl2 v11.2d, v3.4s
	WORD   $0x4e64d694 // fadd v20.2d, v20.2d, v4.2d
	WORD   $0x4e65d6b5 // fadd v21.2d, v21.2d, v5.2d
	WORD   $0x4e66d6d6 // fadd v22.2d, v22.2d, v6.2d
	WORD   $0x4e67d6f7 // fadd v23.2d, v23.2d, v7.2d
	WORD   $0x4e68d718 // fadd v24.2d, v24.2d, v8.2d
	WORD   $0x4e69d739 // fadd v25.2d, v25.2d, v9.2d
	WORD   $0x4e6ad75a // fadd v26.2d, v26.2d, v10.2d
	WORD   $0x4e6bd77b // fadd v27.2d, v27.2d, v11.2d
	SUB    $16, N
	B      sum16

sum4:
	CMP    $4, N
	BLT    sumFold
	VLD1.P 16(PX), [V0.S4]
	WORD   $0x0e617804 // fcvtl v4.2d, v0.2s
	WORD   $0x4e617805 // fcvtl2 v5.2d, v0.4s
	WORD   $0x4e64d694 // fadd v20.2d, v20.2d, v4.2d
	WORD   $0x4e65d6b5 // fadd v21.2d, v21.2d, v5.2d
	SUB    $4, N
	B      sum4

sumFold:
	WORD $0x4e75d694 // fadd v20.2d, v20.2d, v21.2d
	WORD $0x4e77d6d6 // fadd v22.2d, v22.2d, v23.2d
	WORD $0x4e79d718 // fadd v24.2d, v24.2d, v25.2d
	WORD $0x4e7bd75a // fadd v26.2d, v26.2d, v27.2d
	WORD $0x4e76d694 // fadd v20.2d, v20.2d, v22.2d
	WORD $0x4e7ad718 // fadd v24.2d, v24.2d, v26.2d
	WORD $0x4e78d694 // fadd v20.2d, v20.2d, v24.2d
	WORD $0x7e70da80 // faddp d0, v20.2d

sum1: // the last 0-3 elements, one at a time
	CBZ     N, sumDone
	FMOVS.P 4(PX), F1
	FCVTSD  F1, F1
	FADDD   F1, F0, F0
	SUB     $1, N
	B       sum1

sumDone:
	FMOVD F0, ret+16(FP)
	RET

// ---------------------------------------------------------------------
// func sumSqDevF32NEON(x *float32, n int, c float64) float64
// ---------------------------------------------------------------------
TEXT ·sumSqDevF32NEON(SB), NOSPLIT, $0-32
	MOVD x+0(FP), PX
	MOVD n+8(FP), N
	MOVD c+16(FP), R3
	VDUP R3, V31.D2 // c in both lanes
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16

sq16:
	CMP    $16, N
	BLT    sq4
	VLD1.P 64(PX), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD   $0x0e617804 // fcvtl v4.2d, v0.2s
	WORD   $0x4e617805 // fcvtl2 v5.2d, v0.4s
	WORD   $0x0e617826 // fcvtl v6.2d, v1.2s
	WORD   $0x4e617827 // fcvtl2 v7.2d, v1.4s
	WORD   $0x0e617848 // fcvtl v8.2d, v2.2s
	WORD   $0x4e617849 // fcvtl2 v9.2d, v2.4s
	WORD   $0x0e61786a // fcvtl v10.2d, v3.2s
	WORD   $0x4e61786b // fcvtl2 v11.2d, v3.4s
	WORD   $0x4effd484 // fsub v4.2d, v4.2d, v31.2d
	WORD   $0x4effd4a5 // fsub v5.2d, v5.2d, v31.2d
	WORD   $0x4effd4c6 // fsub v6.2d, v6.2d, v31.2d
	WORD   $0x4effd4e7 // fsub v7.2d, v7.2d, v31.2d
	WORD   $0x4effd508 // fsub v8.2d, v8.2d, v31.2d
	WORD   $0x4effd529 // fsub v9.2d, v9.2d, v31.2d
	WORD   $0x4effd54a // fsub v10.2d, v10.2d, v31.2d
	WORD   $0x4effd56b // fsub v11.2d, v11.2d, v31.2d
	VFMLA  V4.D2, V4.D2, V20.D2 // acc += d·d
	VFMLA  V5.D2, V5.D2, V21.D2
	VFMLA  V6.D2, V6.D2, V22.D2
	VFMLA  V7.D2, V7.D2, V23.D2
	VFMLA  V8.D2, V8.D2, V24.D2
	VFMLA  V9.D2, V9.D2, V25.D2
	VFMLA  V10.D2, V10.D2, V26.D2
	VFMLA  V11.D2, V11.D2, V27.D2
	SUB    $16, N
	B      sq16

sq4:
	CMP    $4, N
	BLT    sqFold
	VLD1.P 16(PX), [V0.S4]
	WORD   $0x0e617804 // fcvtl v4.2d, v0.2s
	WORD   $0x4e617805 // fcvtl2 v5.2d, v0.4s
	WORD   $0x4effd484 // fsub v4.2d, v4.2d, v31.2d
	WORD   $0x4effd4a5 // fsub v5.2d, v5.2d, v31.2d
	VFMLA  V4.D2, V4.D2, V20.D2
	VFMLA  V5.D2, V5.D2, V21.D2
	SUB    $4, N
	B      sq4

sqFold:
	WORD $0x4e75d694 // fadd v20.2d, v20.2d, v21.2d
	WORD $0x4e77d6d6 // fadd v22.2d, v22.2d, v23.2d
	WORD $0x4e79d718 // fadd v24.2d, v24.2d, v25.2d
	WORD $0x4e7bd75a // fadd v26.2d, v26.2d, v27.2d
	WORD $0x4e76d694 // fadd v20.2d, v20.2d, v22.2d
	WORD $0x4e7ad718 // fadd v24.2d, v24.2d, v26.2d
	WORD $0x4e78d694 // fadd v20.2d, v20.2d, v24.2d
	WORD $0x7e70da80 // faddp d0, v20.2d

sq1:
	CBZ     N, sqDone
	FMOVS.P 4(PX), F1
	FCVTSD  F1, F1
	FSUBD   F31, F1, F1
	FMADDD  F1, F0, F1, F0 // d0 += d1·d1
	SUB     $1, N
	B       sq1

sqDone:
	FMOVD F0, ret+24(FP)
	RET

// ---------------------------------------------------------------------
// func maxF32NEON(x *float32, n int) float32
// Four accumulators of four lanes, starting at -Inf. FMAX returns NaN
// when either operand is NaN, so NaNs need no separate tracking.
// ---------------------------------------------------------------------
TEXT ·maxF32NEON(SB), NOSPLIT, $0-20
	MOVD x+0(FP), PX
	MOVD n+8(FP), N
	MOVW $0xff800000, R3
	VDUP R3, V4.S4
	VMOV V4.B16, V5.B16
	VMOV V4.B16, V6.B16
	VMOV V4.B16, V7.B16

max16:
	CMP    $16, N
	BLT    max4
	VLD1.P 64(PX), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD   $0x4e20f484 // fmax v4.4s, v4.4s, v0.4s
	WORD   $0x4e21f4a5 // fmax v5.4s, v5.4s, v1.4s
	WORD   $0x4e22f4c6 // fmax v6.4s, v6.4s, v2.4s
	WORD   $0x4e23f4e7 // fmax v7.4s, v7.4s, v3.4s
	SUB    $16, N
	B      max16

max4:
	CMP    $4, N
	BLT    maxFold
	VLD1.P 16(PX), [V0.S4]
	WORD   $0x4e20f484 // fmax v4.4s, v4.4s, v0.4s
	SUB    $4, N
	B      max4

maxFold:
	WORD $0x4e25f484 // fmax v4.4s, v4.4s, v5.4s
	WORD $0x4e27f4c6 // fmax v6.4s, v6.4s, v7.4s
	WORD $0x4e26f484 // fmax v4.4s, v4.4s, v6.4s
	WORD $0x6e30f880 // fmaxv s0, v4.4s

max1:
	CBZ     N, maxDone
	FMOVS.P 4(PX), F1
	FMAXS   F1, F0, F0
	SUB     $1, N
	B       max1

maxDone:
	FMOVS F0, ret+16(FP)
	RET

// ---------------------------------------------------------------------
// func minF32NEON(x *float32, n int) float32
// maxF32NEON with FMIN, starting at +Inf.
// ---------------------------------------------------------------------
TEXT ·minF32NEON(SB), NOSPLIT, $0-20
	MOVD x+0(FP), PX
	MOVD n+8(FP), N
	MOVW $0x7f800000, R3
	VDUP R3, V4.S4
	VMOV V4.B16, V5.B16
	VMOV V4.B16, V6.B16
	VMOV V4.B16, V7.B16

min16:
	CMP    $16, N
	BLT    min4
	VLD1.P 64(PX), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD   $0x4ea0f484 // fmin v4.4s, v4.4s, v0.4s
	WORD   $0x4ea1f4a5 // fmin v5.4s, v5.4s, v1.4s
	WORD   $0x4ea2f4c6 // fmin v6.4s, v6.4s, v2.4s
	WORD   $0x4ea3f4e7 // fmin v7.4s, v7.4s, v3.4s
	SUB    $16, N
	B      min16

min4:
	CMP    $4, N
	BLT    minFold
	VLD1.P 16(PX), [V0.S4]
	WORD   $0x4ea0f484 // fmin v4.4s, v4.4s, v0.4s
	SUB    $4, N
	B      min4

minFold:
	WORD $0x4ea5f484 // fmin v4.4s, v4.4s, v5.4s
	WORD $0x4ea7f4c6 // fmin v6.4s, v6.4s, v7.4s
	WORD $0x4ea6f484 // fmin v4.4s, v4.4s, v6.4s
	WORD $0x6eb0f880 // fminv s0, v4.4s

min1:
	CBZ     N, minDone
	FMOVS.P 4(PX), F1
	FMINS   F1, F0, F0
	SUB     $1, N
	B       min1

minDone:
	FMOVS F0, ret+16(FP)
	RET

// ---------------------------------------------------------------------
// func accAddF64NEON(acc *float64, x *float32, n int)
// ---------------------------------------------------------------------
TEXT ·accAddF64NEON(SB), NOSPLIT, $0-24
	MOVD acc+0(FP), PA
	MOVD x+8(FP), PX
	MOVD n+16(FP), N

add4:
	CMP    $4, N
	BLT    add1
	VLD1.P 16(PX), [V0.S4]
	VLD1   (PA), [V2.D2, V3.D2]
	WORD   $0x0e617804 // fcvtl v4.2d, v0.2s
	WORD   $0x4e617805 // fcvtl2 v5.2d, v0.4s
	WORD   $0x4e64d442 // fadd v2.2d, v2.2d, v4.2d
	WORD   $0x4e65d463 // fadd v3.2d, v3.2d, v5.2d
	VST1.P [V2.D2, V3.D2], 32(PA)
	SUB    $4, N
	B      add4

add1:
	CBZ     N, addDone
	FMOVS.P 4(PX), F0
	FCVTSD  F0, F0
	FMOVD   (PA), F1
	FADDD   F0, F1, F1
	FMOVD.P F1, 8(PA)
	SUB     $1, N
	B       add1

addDone:
	RET

// ---------------------------------------------------------------------
// func accMaxF32NEON(acc, x *float32, n int)
// ---------------------------------------------------------------------
TEXT ·accMaxF32NEON(SB), NOSPLIT, $0-24
	MOVD acc+0(FP), PA
	MOVD x+8(FP), PX
	MOVD n+16(FP), N

amax4:
	CMP    $4, N
	BLT    amax1
	VLD1   (PA), [V0.S4]
	VLD1.P 16(PX), [V1.S4]
	WORD   $0x4e21f400 // fmax v0.4s, v0.4s, v1.4s
	VST1.P [V0.S4], 16(PA)
	SUB    $4, N
	B      amax4

amax1:
	CBZ     N, amaxDone
	FMOVS   (PA), F0
	FMOVS.P 4(PX), F1
	FMAXS   F1, F0, F0
	FMOVS.P F0, 4(PA)
	SUB     $1, N
	B       amax1

amaxDone:
	RET

// ---------------------------------------------------------------------
// func accMinF32NEON(acc, x *float32, n int)
// ---------------------------------------------------------------------
TEXT ·accMinF32NEON(SB), NOSPLIT, $0-24
	MOVD acc+0(FP), PA
	MOVD x+8(FP), PX
	MOVD n+16(FP), N

amin4:
	CMP    $4, N
	BLT    amin1
	VLD1   (PA), [V0.S4]
	VLD1.P 16(PX), [V1.S4]
	WORD   $0x4ea1f400 // fmin v0.4s, v0.4s, v1.4s
	VST1.P [V0.S4], 16(PA)
	SUB    $4, N
	B      amin4

amin1:
	CBZ     N, aminDone
	FMOVS   (PA), F0
	FMOVS.P 4(PX), F1
	FMINS   F1, F0, F0
	FMOVS.P F0, 4(PA)
	SUB     $1, N
	B       amin1

aminDone:
	RET
