//go:build !purego

#include "textflag.h"

// The vector floating-point instructions Go's assembler has no mnemonic
// for are WORDs with the instruction in GNU syntax beside them;
// TestNeonWords checks every one against the disassembler.

// ---------------------------------------------------------------------
// func gemmKernel6x16NEON(k int, a, b, c *float32, ldc int, flags uint)
// C[6×16] (+)= Apanel[k×6]ᵀ-interleaved · Bpanel[k×16]; see gemm_arm64.go.
//
// R0 steps of k, R1 packed A (24 bytes a step), R2 packed B (64 bytes a
// step), R3 C row, R4 ldc in bytes, R5 flags, R6 pairs of steps left.
// V8-V31 accumulate row i, columns 4j..4j+3 in V(8+4i+j); V0-V3 hold a
// B row; V4-V6 two steps of A (12 floats), multiplied by element.
// ---------------------------------------------------------------------

TEXT ·gemmKernel6x16NEON(SB), NOSPLIT, $0-48
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD c+24(FP), R3
	MOVD ldc+32(FP), R4
	MOVD flags+40(FP), R5
	LSL  $2, R4                // ldc in bytes

	// Fetch the tile's six C rows now, so the write-back finds them in L1.
	MOVD R3, R7
	PRFM (R7), PSTL1KEEP
	ADD  R4, R7
	PRFM (R7), PSTL1KEEP
	ADD  R4, R7
	PRFM (R7), PSTL1KEEP
	ADD  R4, R7
	PRFM (R7), PSTL1KEEP
	ADD  R4, R7
	PRFM (R7), PSTL1KEEP
	ADD  R4, R7
	PRFM (R7), PSTL1KEEP

	// Zero the accumulators.
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16

	LSR  $1, R0, R6            // pairs of steps
	CBZ  R6, tail

loop2:
	// Two steps: A's 12 floats fill V4-V6 exactly; step 0 takes rows 0-5
	// from V4[0..3], V5[0..1], step 1 from V5[2..3], V6[0..3]. Ask for A
	// 16 steps ahead (it streams from L2; the B panel stays in L1).
	PRFM 384(R1), PLDL1KEEP
	VLD1.P 48(R1), [V4.S4, V5.S4, V6.S4]
	VLD1.P 64(R2), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f841008 // fmla v8.4s, v0.4s, v4.s[0]
	WORD $0x4f841029 // fmla v9.4s, v1.4s, v4.s[0]
	WORD $0x4f84104a // fmla v10.4s, v2.4s, v4.s[0]
	WORD $0x4f84106b // fmla v11.4s, v3.4s, v4.s[0]
	WORD $0x4fa4100c // fmla v12.4s, v0.4s, v4.s[1]
	WORD $0x4fa4102d // fmla v13.4s, v1.4s, v4.s[1]
	WORD $0x4fa4104e // fmla v14.4s, v2.4s, v4.s[1]
	WORD $0x4fa4106f // fmla v15.4s, v3.4s, v4.s[1]
	WORD $0x4f841810 // fmla v16.4s, v0.4s, v4.s[2]
	WORD $0x4f841831 // fmla v17.4s, v1.4s, v4.s[2]
	WORD $0x4f841852 // fmla v18.4s, v2.4s, v4.s[2]
	WORD $0x4f841873 // fmla v19.4s, v3.4s, v4.s[2]
	WORD $0x4fa41814 // fmla v20.4s, v0.4s, v4.s[3]
	WORD $0x4fa41835 // fmla v21.4s, v1.4s, v4.s[3]
	WORD $0x4fa41856 // fmla v22.4s, v2.4s, v4.s[3]
	WORD $0x4fa41877 // fmla v23.4s, v3.4s, v4.s[3]
	WORD $0x4f851018 // fmla v24.4s, v0.4s, v5.s[0]
	WORD $0x4f851039 // fmla v25.4s, v1.4s, v5.s[0]
	WORD $0x4f85105a // fmla v26.4s, v2.4s, v5.s[0]
	WORD $0x4f85107b // fmla v27.4s, v3.4s, v5.s[0]
	WORD $0x4fa5101c // fmla v28.4s, v0.4s, v5.s[1]
	WORD $0x4fa5103d // fmla v29.4s, v1.4s, v5.s[1]
	WORD $0x4fa5105e // fmla v30.4s, v2.4s, v5.s[1]
	WORD $0x4fa5107f // fmla v31.4s, v3.4s, v5.s[1]
	VLD1.P 64(R2), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f851808 // fmla v8.4s, v0.4s, v5.s[2]
	WORD $0x4f851829 // fmla v9.4s, v1.4s, v5.s[2]
	WORD $0x4f85184a // fmla v10.4s, v2.4s, v5.s[2]
	WORD $0x4f85186b // fmla v11.4s, v3.4s, v5.s[2]
	WORD $0x4fa5180c // fmla v12.4s, v0.4s, v5.s[3]
	WORD $0x4fa5182d // fmla v13.4s, v1.4s, v5.s[3]
	WORD $0x4fa5184e // fmla v14.4s, v2.4s, v5.s[3]
	WORD $0x4fa5186f // fmla v15.4s, v3.4s, v5.s[3]
	WORD $0x4f861010 // fmla v16.4s, v0.4s, v6.s[0]
	WORD $0x4f861031 // fmla v17.4s, v1.4s, v6.s[0]
	WORD $0x4f861052 // fmla v18.4s, v2.4s, v6.s[0]
	WORD $0x4f861073 // fmla v19.4s, v3.4s, v6.s[0]
	WORD $0x4fa61014 // fmla v20.4s, v0.4s, v6.s[1]
	WORD $0x4fa61035 // fmla v21.4s, v1.4s, v6.s[1]
	WORD $0x4fa61056 // fmla v22.4s, v2.4s, v6.s[1]
	WORD $0x4fa61077 // fmla v23.4s, v3.4s, v6.s[1]
	WORD $0x4f861818 // fmla v24.4s, v0.4s, v6.s[2]
	WORD $0x4f861839 // fmla v25.4s, v1.4s, v6.s[2]
	WORD $0x4f86185a // fmla v26.4s, v2.4s, v6.s[2]
	WORD $0x4f86187b // fmla v27.4s, v3.4s, v6.s[2]
	WORD $0x4fa6181c // fmla v28.4s, v0.4s, v6.s[3]
	WORD $0x4fa6183d // fmla v29.4s, v1.4s, v6.s[3]
	WORD $0x4fa6185e // fmla v30.4s, v2.4s, v6.s[3]
	WORD $0x4fa6187f // fmla v31.4s, v3.4s, v6.s[3]
	SUBS $1, R6
	BNE  loop2

tail:
	// An odd last step: its 6 floats of A as 16 + 8 bytes.
	TBZ   $0, R0, store
	VLD1  (R1), [V4.S4]
	FMOVD 16(R1), F5
	VLD1  (R2), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f841008 // fmla v8.4s, v0.4s, v4.s[0]
	WORD $0x4f841029 // fmla v9.4s, v1.4s, v4.s[0]
	WORD $0x4f84104a // fmla v10.4s, v2.4s, v4.s[0]
	WORD $0x4f84106b // fmla v11.4s, v3.4s, v4.s[0]
	WORD $0x4fa4100c // fmla v12.4s, v0.4s, v4.s[1]
	WORD $0x4fa4102d // fmla v13.4s, v1.4s, v4.s[1]
	WORD $0x4fa4104e // fmla v14.4s, v2.4s, v4.s[1]
	WORD $0x4fa4106f // fmla v15.4s, v3.4s, v4.s[1]
	WORD $0x4f841810 // fmla v16.4s, v0.4s, v4.s[2]
	WORD $0x4f841831 // fmla v17.4s, v1.4s, v4.s[2]
	WORD $0x4f841852 // fmla v18.4s, v2.4s, v4.s[2]
	WORD $0x4f841873 // fmla v19.4s, v3.4s, v4.s[2]
	WORD $0x4fa41814 // fmla v20.4s, v0.4s, v4.s[3]
	WORD $0x4fa41835 // fmla v21.4s, v1.4s, v4.s[3]
	WORD $0x4fa41856 // fmla v22.4s, v2.4s, v4.s[3]
	WORD $0x4fa41877 // fmla v23.4s, v3.4s, v4.s[3]
	WORD $0x4f851018 // fmla v24.4s, v0.4s, v5.s[0]
	WORD $0x4f851039 // fmla v25.4s, v1.4s, v5.s[0]
	WORD $0x4f85105a // fmla v26.4s, v2.4s, v5.s[0]
	WORD $0x4f85107b // fmla v27.4s, v3.4s, v5.s[0]
	WORD $0x4fa5101c // fmla v28.4s, v0.4s, v5.s[1]
	WORD $0x4fa5103d // fmla v29.4s, v1.4s, v5.s[1]
	WORD $0x4fa5105e // fmla v30.4s, v2.4s, v5.s[1]
	WORD $0x4fa5107f // fmla v31.4s, v3.4s, v5.s[1]

store:
	// Accumulate mode adds the old C row (sum first, then C, as the Go
	// twin does); overwrite mode never reads C, so garbage or NaN there
	// cannot leak in.
	TBZ $0, R5, write
	VLD1 (R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d508 // fadd v8.4s, v8.4s, v0.4s
	WORD $0x4e21d529 // fadd v9.4s, v9.4s, v1.4s
	WORD $0x4e22d54a // fadd v10.4s, v10.4s, v2.4s
	WORD $0x4e23d56b // fadd v11.4s, v11.4s, v3.4s
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R3)
	ADD  R4, R3
	VLD1 (R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d58c // fadd v12.4s, v12.4s, v0.4s
	WORD $0x4e21d5ad // fadd v13.4s, v13.4s, v1.4s
	WORD $0x4e22d5ce // fadd v14.4s, v14.4s, v2.4s
	WORD $0x4e23d5ef // fadd v15.4s, v15.4s, v3.4s
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R3)
	ADD  R4, R3
	VLD1 (R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R3)
	ADD  R4, R3
	VLD1 (R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d694 // fadd v20.4s, v20.4s, v0.4s
	WORD $0x4e21d6b5 // fadd v21.4s, v21.4s, v1.4s
	WORD $0x4e22d6d6 // fadd v22.4s, v22.4s, v2.4s
	WORD $0x4e23d6f7 // fadd v23.4s, v23.4s, v3.4s
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R3)
	ADD  R4, R3
	VLD1 (R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d718 // fadd v24.4s, v24.4s, v0.4s
	WORD $0x4e21d739 // fadd v25.4s, v25.4s, v1.4s
	WORD $0x4e22d75a // fadd v26.4s, v26.4s, v2.4s
	WORD $0x4e23d77b // fadd v27.4s, v27.4s, v3.4s
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R3)
	ADD  R4, R3
	VLD1 (R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d79c // fadd v28.4s, v28.4s, v0.4s
	WORD $0x4e21d7bd // fadd v29.4s, v29.4s, v1.4s
	WORD $0x4e22d7de // fadd v30.4s, v30.4s, v2.4s
	WORD $0x4e23d7ff // fadd v31.4s, v31.4s, v3.4s
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R3)
	RET

write:
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R3)
	ADD  R4, R3
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R3)
	ADD  R4, R3
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R3)
	ADD  R4, R3
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R3)
	ADD  R4, R3
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R3)
	ADD  R4, R3
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (R3)
	RET

// ---------------------------------------------------------------------
// func gemv16NEON(k int, x, b *float32, ldb int, y *float32, flags uint)
// y[16] (+)= x[k] · B[k×16] with B rows ldb floats apart; see gemm_arm64.go.
//
// R0 rows left, R1 x, R2 B row p, R3 ldb in bytes, R4 y, R5 flags, R6
// groups of four rows. V16-V31 are four partial sums of 16 columns (rows
// p ≡ 0, 1, 2, 3 mod 4), V0-V7 B rows, V8 x values.
// ---------------------------------------------------------------------

TEXT ·gemv16NEON(SB), NOSPLIT, $0-48
	MOVD k+0(FP), R0
	MOVD x+8(FP), R1
	MOVD b+16(FP), R2
	MOVD ldb+24(FP), R3
	MOVD y+32(FP), R4
	MOVD flags+40(FP), R5
	LSL  $2, R3                // ldb in bytes
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	LSR  $2, R0, R6            // groups of four rows
	AND  $3, R0                // and 0-3 rows after them
	CBZ  R6, gemvtail

gemvloop4:
	// Rows p..p+3 into sums 0..3, each times its x value (by element).
	VLD1.P 16(R1), [V8.S4]
	VLD1.P (R2)(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f881010 // fmla v16.4s, v0.4s, v8.s[0]
	WORD $0x4f881031 // fmla v17.4s, v1.4s, v8.s[0]
	WORD $0x4f881052 // fmla v18.4s, v2.4s, v8.s[0]
	WORD $0x4f881073 // fmla v19.4s, v3.4s, v8.s[0]
	VLD1.P (R2)(R3), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fa81094 // fmla v20.4s, v4.4s, v8.s[1]
	WORD $0x4fa810b5 // fmla v21.4s, v5.4s, v8.s[1]
	WORD $0x4fa810d6 // fmla v22.4s, v6.4s, v8.s[1]
	WORD $0x4fa810f7 // fmla v23.4s, v7.4s, v8.s[1]
	VLD1.P (R2)(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f881818 // fmla v24.4s, v0.4s, v8.s[2]
	WORD $0x4f881839 // fmla v25.4s, v1.4s, v8.s[2]
	WORD $0x4f88185a // fmla v26.4s, v2.4s, v8.s[2]
	WORD $0x4f88187b // fmla v27.4s, v3.4s, v8.s[2]
	VLD1.P (R2)(R3), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fa8189c // fmla v28.4s, v4.4s, v8.s[3]
	WORD $0x4fa818bd // fmla v29.4s, v5.4s, v8.s[3]
	WORD $0x4fa818de // fmla v30.4s, v6.4s, v8.s[3]
	WORD $0x4fa818ff // fmla v31.4s, v7.4s, v8.s[3]
	SUBS $1, R6
	BNE  gemvloop4

gemvtail:
	// The last 0-3 rows into sum 0.
	CBZ R0, gemvsum

gemvloop1:
	FMOVS.P 4(R1), F8
	VLD1.P  (R2)(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f881010 // fmla v16.4s, v0.4s, v8.s[0]
	WORD $0x4f881031 // fmla v17.4s, v1.4s, v8.s[0]
	WORD $0x4f881052 // fmla v18.4s, v2.4s, v8.s[0]
	WORD $0x4f881073 // fmla v19.4s, v3.4s, v8.s[0]
	SUBS $1, R0
	BNE  gemvloop1

gemvsum:
	// Fold the sums as (0+1) + (2+3), the AVX2 kernel's order, then add
	// the old y in accumulate mode.
	WORD $0x4e34d610 // fadd v16.4s, v16.4s, v20.4s
	WORD $0x4e35d631 // fadd v17.4s, v17.4s, v21.4s
	WORD $0x4e36d652 // fadd v18.4s, v18.4s, v22.4s
	WORD $0x4e37d673 // fadd v19.4s, v19.4s, v23.4s
	WORD $0x4e3cd718 // fadd v24.4s, v24.4s, v28.4s
	WORD $0x4e3dd739 // fadd v25.4s, v25.4s, v29.4s
	WORD $0x4e3ed75a // fadd v26.4s, v26.4s, v30.4s
	WORD $0x4e3fd77b // fadd v27.4s, v27.4s, v31.4s
	WORD $0x4e38d610 // fadd v16.4s, v16.4s, v24.4s
	WORD $0x4e39d631 // fadd v17.4s, v17.4s, v25.4s
	WORD $0x4e3ad652 // fadd v18.4s, v18.4s, v26.4s
	WORD $0x4e3bd673 // fadd v19.4s, v19.4s, v27.4s
	TBZ  $0, R5, gemvstore
	VLD1 (R4), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s

gemvstore:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R4)
	RET

// ---------------------------------------------------------------------
// func gemvRows4NEON(n int, x, b *float32, ldb int, y *float32, flags uint)
// y[0:n] (+)= x[0]·B[0,:] + x[1]·B[1,:] + x[2]·B[2,:] + x[3]·B[3,:];
// see gemm_arm64.go.
//
// R0 columns left, R2/R6/R7/R8 B rows 0-3 at the current column, R4 y,
// R5 flags, V31 x[0..3]; V16-V19 the sums of 16 columns, each started
// from y (or zero) and multiply-added with rows 0, 1, 2, 3 in order.
// ---------------------------------------------------------------------

TEXT ·gemvRows4NEON(SB), NOSPLIT, $0-48
	MOVD n+0(FP), R0
	MOVD x+8(FP), R1
	MOVD b+16(FP), R2
	MOVD ldb+24(FP), R3
	MOVD y+32(FP), R4
	MOVD flags+40(FP), R5
	LSL  $2, R3                // ldb in bytes
	ADD  R3, R2, R6            // row 1
	ADD  R3, R6, R7            // row 2
	ADD  R3, R7, R8            // row 3
	VLD1 (R1), [V31.S4]        // x[0..3]

rows16:
	// 16 columns per iteration as four independent chains.
	CMP  $16, R0
	BLT  rows4
	TBZ  $0, R5, zero16
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4]
	B    fma16

zero16:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

fma16:
	VLD1.P 64(R2), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f9f1010 // fmla v16.4s, v0.4s, v31.s[0]
	WORD $0x4f9f1031 // fmla v17.4s, v1.4s, v31.s[0]
	WORD $0x4f9f1052 // fmla v18.4s, v2.4s, v31.s[0]
	WORD $0x4f9f1073 // fmla v19.4s, v3.4s, v31.s[0]
	VLD1.P 64(R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fbf1090 // fmla v16.4s, v4.4s, v31.s[1]
	WORD $0x4fbf10b1 // fmla v17.4s, v5.4s, v31.s[1]
	WORD $0x4fbf10d2 // fmla v18.4s, v6.4s, v31.s[1]
	WORD $0x4fbf10f3 // fmla v19.4s, v7.4s, v31.s[1]
	VLD1.P 64(R7), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f9f1810 // fmla v16.4s, v0.4s, v31.s[2]
	WORD $0x4f9f1831 // fmla v17.4s, v1.4s, v31.s[2]
	WORD $0x4f9f1852 // fmla v18.4s, v2.4s, v31.s[2]
	WORD $0x4f9f1873 // fmla v19.4s, v3.4s, v31.s[2]
	VLD1.P 64(R8), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fbf1890 // fmla v16.4s, v4.4s, v31.s[3]
	WORD $0x4fbf18b1 // fmla v17.4s, v5.4s, v31.s[3]
	WORD $0x4fbf18d2 // fmla v18.4s, v6.4s, v31.s[3]
	WORD $0x4fbf18f3 // fmla v19.4s, v7.4s, v31.s[3]
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R4)
	SUB    $16, R0
	B      rows16

rows4:
	// Four columns at a time.
	CMP  $4, R0
	BLT  rows1
	VEOR V16.B16, V16.B16, V16.B16
	TBZ  $0, R5, fma4
	VLD1 (R4), [V16.S4]

fma4:
	VLD1.P 16(R2), [V0.S4]
	VLD1.P 16(R6), [V1.S4]
	VLD1.P 16(R7), [V2.S4]
	VLD1.P 16(R8), [V3.S4]
	WORD $0x4f9f1010 // fmla v16.4s, v0.4s, v31.s[0]
	WORD $0x4fbf1030 // fmla v16.4s, v1.4s, v31.s[1]
	WORD $0x4f9f1850 // fmla v16.4s, v2.4s, v31.s[2]
	WORD $0x4fbf1870 // fmla v16.4s, v3.4s, v31.s[3]
	VST1.P [V16.S4], 16(R4)
	SUB    $4, R0
	B      rows4

rows1:
	// The last 0-3 columns one at a time, in lane 0 (the single-float
	// loads zero the other lanes).
	CBZ R0, rowsdone

loop1:
	VEOR V16.B16, V16.B16, V16.B16
	TBZ  $0, R5, fma1
	FMOVS (R4), F16

fma1:
	FMOVS.P 4(R2), F0
	FMOVS.P 4(R6), F1
	FMOVS.P 4(R7), F2
	FMOVS.P 4(R8), F3
	WORD $0x4f9f1010 // fmla v16.4s, v0.4s, v31.s[0]
	WORD $0x4fbf1030 // fmla v16.4s, v1.4s, v31.s[1]
	WORD $0x4f9f1850 // fmla v16.4s, v2.4s, v31.s[2]
	WORD $0x4fbf1870 // fmla v16.4s, v3.4s, v31.s[3]
	FMOVS.P F16, 4(R4)
	SUBS    $1, R0
	BNE     loop1

rowsdone:
	RET

// ---------------------------------------------------------------------
// func gemmPackB16NEON(k int, src *float32, ld int, dst *float32)
// dst[p*16+j] = src[p*ld+j] for p < k, j < 16; see gemm_arm64.go.
// ---------------------------------------------------------------------

TEXT ·gemmPackB16NEON(SB), NOSPLIT, $0-32
	MOVD k+0(FP), R0
	MOVD src+8(FP), R1
	MOVD ld+16(FP), R2
	MOVD dst+24(FP), R3
	LSL  $2, R2                // ld in bytes

packb16:
	// Ask for the row eight ahead (a strided walk the prefetcher may not
	// follow), then copy one 64-byte row.
	ADD    R2<<3, R1, R4
	PRFM   (R4), PLDL1KEEP
	VLD1.P (R1)(R2), [V0.S4, V1.S4, V2.S4, V3.S4]
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R3)
	SUBS   $1, R0
	BNE    packb16
	RET

// ---------------------------------------------------------------------
// func gemmPackB64NEON(k int, src *float32, ld int, dst *float32, pstride int)
// Four 16-column panels at once: dst[q*pstride+p*16+j] = src[p*ld+16q+j]
// for q < 4, p < k, j < 16; see gemm_arm64.go.
// ---------------------------------------------------------------------

TEXT ·gemmPackB64NEON(SB), NOSPLIT, $0-40
	MOVD k+0(FP), R0
	MOVD src+8(FP), R1
	MOVD ld+16(FP), R2
	MOVD dst+24(FP), R3
	MOVD pstride+32(FP), R4
	LSL  $2, R2                // ld in bytes
	LSL  $2, R4                // panel stride in bytes
	ADD  R4, R3, R5            // row p of panel 1
	ADD  R4, R5, R6            // panel 2
	ADD  R4, R6, R7            // panel 3
	SUB  $192, R2, R8          // from the row's last 64 bytes to the next row

packb64:
	// One source row: 256 bytes read in order (four rows ahead asked for),
	// then each panel's 64 into its row p.
	ADD    R2<<2, R1, R9
	PRFM   (R9), PLDL1KEEP
	PRFM   64(R9), PLDL1KEEP
	PRFM   128(R9), PLDL1KEEP
	PRFM   192(R9), PLDL1KEEP
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P (R1)(R8), [V20.S4, V21.S4, V22.S4, V23.S4]
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R3)
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R5)
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R6)
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R7)
	SUBS   $1, R0
	BNE    packb64
	RET

// ---------------------------------------------------------------------
// func gemmPackA6NEON(k8 int, src *float32, lda int, dst *float32)
// dst[p*6+r] = src[r*lda+p] for r < 6, p < 8*k8; see gemm_arm64.go.
//
// R1, R4-R8 rows 0-5 at the current step, R3 dst. Row r's eight steps
// load into V(2r) (steps 0-3) and V(2r+1) (steps 4-7).
// ---------------------------------------------------------------------

TEXT ·gemmPackA6NEON(SB), NOSPLIT, $0-32
	MOVD k8+0(FP), R0
	MOVD src+8(FP), R1
	MOVD lda+16(FP), R2
	MOVD dst+24(FP), R3
	LSL  $2, R2                // lda in bytes
	ADD  R2, R1, R4            // row 1
	ADD  R2, R4, R5
	ADD  R2, R5, R6
	ADD  R2, R6, R7
	ADD  R2, R7, R8            // row 5

packa6:
	VLD1.P 32(R1), [V0.S4, V1.S4]
	VLD1.P 32(R4), [V2.S4, V3.S4]
	VLD1.P 32(R5), [V4.S4, V5.S4]
	VLD1.P 32(R6), [V6.S4, V7.S4]
	VLD1.P 32(R7), [V8.S4, V9.S4]
	VLD1.P 32(R8), [V10.S4, V11.S4]
	// Steps 0-3: transpose rows 0-3 (4×4), pair up rows 4-5, then lay the
	// four 24-byte steps out as six vectors.
	VTRN1 V2.S4, V0.S4, V12.S4 // r0[0] r1[0] r0[2] r1[2]
	VTRN2 V2.S4, V0.S4, V13.S4 // r0[1] r1[1] r0[3] r1[3]
	VTRN1 V6.S4, V4.S4, V14.S4 // r2[0] r3[0] r2[2] r3[2]
	VTRN2 V6.S4, V4.S4, V15.S4 // r2[1] r3[1] r2[3] r3[3]
	VZIP1 V10.S4, V8.S4, V16.S4 // r4[0] r5[0] r4[1] r5[1]
	VZIP2 V10.S4, V8.S4, V17.S4 // r4[2] r5[2] r4[3] r5[3]
	VTRN1 V14.D2, V12.D2, V20.D2 // step 0, rows 0-3
	VTRN1 V15.D2, V13.D2, V18.D2 // step 1
	VTRN2 V14.D2, V12.D2, V23.D2 // step 2
	VTRN2 V15.D2, V13.D2, V19.D2 // step 3
	VTRN1 V18.D2, V16.D2, V21.D2 // step 0 rows 4-5, step 1 rows 0-1
	VTRN2 V16.D2, V18.D2, V22.D2 // step 1 rows 2-5
	VTRN1 V19.D2, V17.D2, V24.D2 // step 2 rows 4-5, step 3 rows 0-1
	VTRN2 V17.D2, V19.D2, V25.D2 // step 3 rows 2-5
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R3)
	VST1.P [V24.S4, V25.S4], 32(R3)
	// Steps 4-7 the same from the upper vectors.
	VTRN1 V3.S4, V1.S4, V12.S4 // r0[0] r1[0] r0[2] r1[2]
	VTRN2 V3.S4, V1.S4, V13.S4 // r0[1] r1[1] r0[3] r1[3]
	VTRN1 V7.S4, V5.S4, V14.S4 // r2[0] r3[0] r2[2] r3[2]
	VTRN2 V7.S4, V5.S4, V15.S4 // r2[1] r3[1] r2[3] r3[3]
	VZIP1 V11.S4, V9.S4, V16.S4 // r4[0] r5[0] r4[1] r5[1]
	VZIP2 V11.S4, V9.S4, V17.S4 // r4[2] r5[2] r4[3] r5[3]
	VTRN1 V14.D2, V12.D2, V20.D2 // step 0, rows 0-3
	VTRN1 V15.D2, V13.D2, V18.D2 // step 1
	VTRN2 V14.D2, V12.D2, V23.D2 // step 2
	VTRN2 V15.D2, V13.D2, V19.D2 // step 3
	VTRN1 V18.D2, V16.D2, V21.D2 // step 0 rows 4-5, step 1 rows 0-1
	VTRN2 V16.D2, V18.D2, V22.D2 // step 1 rows 2-5
	VTRN1 V19.D2, V17.D2, V24.D2 // step 2 rows 4-5, step 3 rows 0-1
	VTRN2 V17.D2, V19.D2, V25.D2 // step 3 rows 2-5
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R3)
	VST1.P [V24.S4, V25.S4], 32(R3)
	SUBS $1, R0
	BNE  packa6
	RET
