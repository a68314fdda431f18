//go:build !purego

#include "textflag.h"

// The vector floating-point instructions Go's assembler has no mnemonic
// for are WORDs with the instruction in GNU syntax beside them;
// TestNeonWords checks every one against the disassembler.
//
// Each function names its general registers by role (#define before it,
// #undef after). Vector registers keep their numbers, since the WORD
// encodings fix them; each function's header says what they hold.

// ---------------------------------------------------------------------
// func gemmKernel6x16NEON(k int, a, b, c *float32, ldc int, flags uint)
// C[6×16] (+)= Apanel[k×6]ᵀ-interleaved · Bpanel[k×16]; see gemm_arm64.go.
//
// V8-V31 accumulate row i, columns 4j..4j+3 in V(8+4i+j); V0-V3 hold a
// B row; V4-V6 two steps of A (12 floats), multiplied by element.
// ---------------------------------------------------------------------

#define STEPS R0 // steps of k
#define APAN  R1 // packed A, 24 bytes a step
#define BPAN  R2 // packed B, 64 bytes a step
#define CROW  R3 // C row being stored
#define LDCB  R4 // ldc in bytes
#define FLAGS R5 // flags: bit 0 accumulates
#define PAIRS R6 // pairs of steps left
#define PFROW R7 // C row being prefetched

TEXT ·gemmKernel6x16NEON(SB), NOSPLIT, $0-48
	// Arguments; ldc from floats to bytes.
	MOVD k+0(FP), STEPS
	MOVD a+8(FP), APAN
	MOVD b+16(FP), BPAN
	MOVD c+24(FP), CROW
	MOVD ldc+32(FP), LDCB
	MOVD flags+40(FP), FLAGS
	LSL  $2, LDCB

	// Fetch the tile's six C rows now, so the write-back finds them in L1.
	MOVD CROW, PFROW
	PRFM (PFROW), PSTL1KEEP
	ADD  LDCB, PFROW
	PRFM (PFROW), PSTL1KEEP
	ADD  LDCB, PFROW
	PRFM (PFROW), PSTL1KEEP
	ADD  LDCB, PFROW
	PRFM (PFROW), PSTL1KEEP
	ADD  LDCB, PFROW
	PRFM (PFROW), PSTL1KEEP
	ADD  LDCB, PFROW
	PRFM (PFROW), PSTL1KEEP

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

	// Steps run in pairs (loop2); an odd last one runs in tail.
	LSR  $1, STEPS, PAIRS
	CBZ  PAIRS, tail

loop2:
	// Two steps: A's 12 floats fill V4-V6 exactly; step 0 takes rows 0-5
	// from V4[0..3], V5[0..1], step 1 from V5[2..3], V6[0..3]. Ask for A
	// 16 steps ahead (it streams from L2; the B panel stays in L1).
	PRFM 384(APAN), PLDL1KEEP
	VLD1.P 48(APAN), [V4.S4, V5.S4, V6.S4]
	VLD1.P 64(BPAN), [V0.S4, V1.S4, V2.S4, V3.S4]
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
	VLD1.P 64(BPAN), [V0.S4, V1.S4, V2.S4, V3.S4]
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
	SUBS $1, PAIRS
	BNE  loop2

tail:
	// An odd last step: its 6 floats of A as 16 + 8 bytes.
	TBZ   $0, STEPS, store
	VLD1  (APAN), [V4.S4]
	FMOVD 16(APAN), F5
	VLD1  (BPAN), [V0.S4, V1.S4, V2.S4, V3.S4]
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
	TBZ $0, FLAGS, write
	VLD1 (CROW), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d508 // fadd v8.4s, v8.4s, v0.4s
	WORD $0x4e21d529 // fadd v9.4s, v9.4s, v1.4s
	WORD $0x4e22d54a // fadd v10.4s, v10.4s, v2.4s
	WORD $0x4e23d56b // fadd v11.4s, v11.4s, v3.4s
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (CROW)
	ADD  LDCB, CROW
	VLD1 (CROW), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d58c // fadd v12.4s, v12.4s, v0.4s
	WORD $0x4e21d5ad // fadd v13.4s, v13.4s, v1.4s
	WORD $0x4e22d5ce // fadd v14.4s, v14.4s, v2.4s
	WORD $0x4e23d5ef // fadd v15.4s, v15.4s, v3.4s
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (CROW)
	ADD  LDCB, CROW
	VLD1 (CROW), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (CROW)
	ADD  LDCB, CROW
	VLD1 (CROW), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d694 // fadd v20.4s, v20.4s, v0.4s
	WORD $0x4e21d6b5 // fadd v21.4s, v21.4s, v1.4s
	WORD $0x4e22d6d6 // fadd v22.4s, v22.4s, v2.4s
	WORD $0x4e23d6f7 // fadd v23.4s, v23.4s, v3.4s
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (CROW)
	ADD  LDCB, CROW
	VLD1 (CROW), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d718 // fadd v24.4s, v24.4s, v0.4s
	WORD $0x4e21d739 // fadd v25.4s, v25.4s, v1.4s
	WORD $0x4e22d75a // fadd v26.4s, v26.4s, v2.4s
	WORD $0x4e23d77b // fadd v27.4s, v27.4s, v3.4s
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (CROW)
	ADD  LDCB, CROW
	VLD1 (CROW), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d79c // fadd v28.4s, v28.4s, v0.4s
	WORD $0x4e21d7bd // fadd v29.4s, v29.4s, v1.4s
	WORD $0x4e22d7de // fadd v30.4s, v30.4s, v2.4s
	WORD $0x4e23d7ff // fadd v31.4s, v31.4s, v3.4s
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (CROW)
	RET

write:
	// Overwrite mode: store the six rows.
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V28.S4, V29.S4, V30.S4, V31.S4], (CROW)
	RET

#undef STEPS
#undef APAN
#undef BPAN
#undef CROW
#undef LDCB
#undef FLAGS
#undef PAIRS
#undef PFROW

// ---------------------------------------------------------------------
// func gemv16NEON(k int, x, b *float32, ldb int, y *float32, flags uint)
// y[16] (+)= x[k] · B[k×16] with B rows ldb floats apart; see gemm_arm64.go.
//
// V16-V31 are four partial sums of 16 columns (rows p ≡ 0, 1, 2, 3
// mod 4), V0-V7 B rows, V8 x values.
// ---------------------------------------------------------------------

#define ROWS   R0 // rows of B left
#define XPTR   R1 // x at row p
#define BROW   R2 // B row p
#define LDBB   R3 // ldb in bytes
#define YPTR   R4 // y
#define FLAGS  R5 // flags: bit 0 accumulates
#define GROUPS R6 // groups of four rows left

TEXT ·gemv16NEON(SB), NOSPLIT, $0-48
	// Arguments; ldb from floats to bytes. Zero the four partial sums.
	MOVD k+0(FP), ROWS
	MOVD x+8(FP), XPTR
	MOVD b+16(FP), BROW
	MOVD ldb+24(FP), LDBB
	MOVD y+32(FP), YPTR
	MOVD flags+40(FP), FLAGS
	LSL  $2, LDBB
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

	// Rows go four at a time (gemvloop4), then the 0-3 left one at a
	// time (gemvloop1).
	LSR  $2, ROWS, GROUPS
	AND  $3, ROWS
	CBZ  GROUPS, gemvtail

gemvloop4:
	// Rows p..p+3 into sums 0..3, each times its x value (by element).
	VLD1.P 16(XPTR), [V8.S4]
	VLD1.P (BROW)(LDBB), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f881010 // fmla v16.4s, v0.4s, v8.s[0]
	WORD $0x4f881031 // fmla v17.4s, v1.4s, v8.s[0]
	WORD $0x4f881052 // fmla v18.4s, v2.4s, v8.s[0]
	WORD $0x4f881073 // fmla v19.4s, v3.4s, v8.s[0]
	VLD1.P (BROW)(LDBB), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fa81094 // fmla v20.4s, v4.4s, v8.s[1]
	WORD $0x4fa810b5 // fmla v21.4s, v5.4s, v8.s[1]
	WORD $0x4fa810d6 // fmla v22.4s, v6.4s, v8.s[1]
	WORD $0x4fa810f7 // fmla v23.4s, v7.4s, v8.s[1]
	VLD1.P (BROW)(LDBB), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f881818 // fmla v24.4s, v0.4s, v8.s[2]
	WORD $0x4f881839 // fmla v25.4s, v1.4s, v8.s[2]
	WORD $0x4f88185a // fmla v26.4s, v2.4s, v8.s[2]
	WORD $0x4f88187b // fmla v27.4s, v3.4s, v8.s[2]
	VLD1.P (BROW)(LDBB), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fa8189c // fmla v28.4s, v4.4s, v8.s[3]
	WORD $0x4fa818bd // fmla v29.4s, v5.4s, v8.s[3]
	WORD $0x4fa818de // fmla v30.4s, v6.4s, v8.s[3]
	WORD $0x4fa818ff // fmla v31.4s, v7.4s, v8.s[3]
	SUBS $1, GROUPS
	BNE  gemvloop4

gemvtail:
	// The last 0-3 rows into sum 0.
	CBZ ROWS, gemvsum

gemvloop1:
	FMOVS.P 4(XPTR), F8
	VLD1.P  (BROW)(LDBB), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f881010 // fmla v16.4s, v0.4s, v8.s[0]
	WORD $0x4f881031 // fmla v17.4s, v1.4s, v8.s[0]
	WORD $0x4f881052 // fmla v18.4s, v2.4s, v8.s[0]
	WORD $0x4f881073 // fmla v19.4s, v3.4s, v8.s[0]
	SUBS $1, ROWS
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
	TBZ  $0, FLAGS, gemvstore
	VLD1 (YPTR), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4e20d610 // fadd v16.4s, v16.4s, v0.4s
	WORD $0x4e21d631 // fadd v17.4s, v17.4s, v1.4s
	WORD $0x4e22d652 // fadd v18.4s, v18.4s, v2.4s
	WORD $0x4e23d673 // fadd v19.4s, v19.4s, v3.4s

gemvstore:
	// Store y's 16 floats.
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (YPTR)
	RET

#undef ROWS
#undef XPTR
#undef BROW
#undef LDBB
#undef YPTR
#undef FLAGS
#undef GROUPS

// ---------------------------------------------------------------------
// func gemvRows4NEON(n int, x, b *float32, ldb int, y *float32, flags uint)
// y[0:n] (+)= x[0]·B[0,:] + x[1]·B[1,:] + x[2]·B[2,:] + x[3]·B[3,:];
// see gemm_arm64.go.
//
// V31 holds x[0..3]; V16-V19 the sums of 16 columns, each started from
// y (or zero) and multiply-added with rows 0, 1, 2, 3 in order.
// ---------------------------------------------------------------------

#define COLS  R0 // columns left
#define XPTR  R1 // x (four floats, read once)
#define BROW0 R2 // B row 0 at the current column
#define BROW1 R6 // row 1
#define BROW2 R7 // row 2
#define BROW3 R8 // row 3
#define LDBB  R3 // ldb in bytes
#define YPTR  R4 // y at the current column
#define FLAGS R5 // flags: bit 0 accumulates

TEXT ·gemvRows4NEON(SB), NOSPLIT, $0-48
	// Arguments; ldb from floats to bytes, rows 1-3 from row 0, x's four
	// values into V31.
	MOVD n+0(FP), COLS
	MOVD x+8(FP), XPTR
	MOVD b+16(FP), BROW0
	MOVD ldb+24(FP), LDBB
	MOVD y+32(FP), YPTR
	MOVD flags+40(FP), FLAGS
	LSL  $2, LDBB
	ADD  LDBB, BROW0, BROW1
	ADD  LDBB, BROW1, BROW2
	ADD  LDBB, BROW2, BROW3
	VLD1 (XPTR), [V31.S4]

rows16:
	// 16 columns per iteration as four independent chains, started from
	// y in accumulate mode.
	CMP  $16, COLS
	BLT  rows4
	TBZ  $0, FLAGS, zero16
	VLD1 (YPTR), [V16.S4, V17.S4, V18.S4, V19.S4]
	B    fma16

zero16:
	// Overwrite mode: the chains start from zero.
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

fma16:
	// Rows 0-3 in order, each times its x value; store, advance.
	VLD1.P 64(BROW0), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f9f1010 // fmla v16.4s, v0.4s, v31.s[0]
	WORD $0x4f9f1031 // fmla v17.4s, v1.4s, v31.s[0]
	WORD $0x4f9f1052 // fmla v18.4s, v2.4s, v31.s[0]
	WORD $0x4f9f1073 // fmla v19.4s, v3.4s, v31.s[0]
	VLD1.P 64(BROW1), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fbf1090 // fmla v16.4s, v4.4s, v31.s[1]
	WORD $0x4fbf10b1 // fmla v17.4s, v5.4s, v31.s[1]
	WORD $0x4fbf10d2 // fmla v18.4s, v6.4s, v31.s[1]
	WORD $0x4fbf10f3 // fmla v19.4s, v7.4s, v31.s[1]
	VLD1.P 64(BROW2), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD $0x4f9f1810 // fmla v16.4s, v0.4s, v31.s[2]
	WORD $0x4f9f1831 // fmla v17.4s, v1.4s, v31.s[2]
	WORD $0x4f9f1852 // fmla v18.4s, v2.4s, v31.s[2]
	WORD $0x4f9f1873 // fmla v19.4s, v3.4s, v31.s[2]
	VLD1.P 64(BROW3), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4fbf1890 // fmla v16.4s, v4.4s, v31.s[3]
	WORD $0x4fbf18b1 // fmla v17.4s, v5.4s, v31.s[3]
	WORD $0x4fbf18d2 // fmla v18.4s, v6.4s, v31.s[3]
	WORD $0x4fbf18f3 // fmla v19.4s, v7.4s, v31.s[3]
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(YPTR)
	SUB    $16, COLS
	B      rows16

rows4:
	// Four columns at a time: one chain, from y or zero.
	CMP  $4, COLS
	BLT  rows1
	VEOR V16.B16, V16.B16, V16.B16
	TBZ  $0, FLAGS, fma4
	VLD1 (YPTR), [V16.S4]

fma4:
	// Rows 0-3 in order; store, advance.
	VLD1.P 16(BROW0), [V0.S4]
	VLD1.P 16(BROW1), [V1.S4]
	VLD1.P 16(BROW2), [V2.S4]
	VLD1.P 16(BROW3), [V3.S4]
	WORD $0x4f9f1010 // fmla v16.4s, v0.4s, v31.s[0]
	WORD $0x4fbf1030 // fmla v16.4s, v1.4s, v31.s[1]
	WORD $0x4f9f1850 // fmla v16.4s, v2.4s, v31.s[2]
	WORD $0x4fbf1870 // fmla v16.4s, v3.4s, v31.s[3]
	VST1.P [V16.S4], 16(YPTR)
	SUB    $4, COLS
	B      rows4

rows1:
	// The last 0-3 columns one at a time, in lane 0 (the single-float
	// loads zero the other lanes).
	CBZ COLS, rowsdone

loop1:
	// One column: from y or zero, rows 0-3 in order; store, advance.
	VEOR V16.B16, V16.B16, V16.B16
	TBZ  $0, FLAGS, fma1
	FMOVS (YPTR), F16

fma1:
	FMOVS.P 4(BROW0), F0
	FMOVS.P 4(BROW1), F1
	FMOVS.P 4(BROW2), F2
	FMOVS.P 4(BROW3), F3
	WORD $0x4f9f1010 // fmla v16.4s, v0.4s, v31.s[0]
	WORD $0x4fbf1030 // fmla v16.4s, v1.4s, v31.s[1]
	WORD $0x4f9f1850 // fmla v16.4s, v2.4s, v31.s[2]
	WORD $0x4fbf1870 // fmla v16.4s, v3.4s, v31.s[3]
	FMOVS.P F16, 4(YPTR)
	SUBS    $1, COLS
	BNE     loop1

rowsdone:
	RET

#undef COLS
#undef XPTR
#undef BROW0
#undef BROW1
#undef BROW2
#undef BROW3
#undef LDBB
#undef YPTR
#undef FLAGS
