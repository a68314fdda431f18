//go:build !purego

#include "textflag.h"

// The NEON packing kernels of the GEMM, declared in gemm_arm64.go beside
// the micro-kernel and GEMV of gemm_arm64.s. Each function names its
// general registers by role (#define before it, #undef after); vector
// registers keep their numbers, and the comments say what they hold.

// ---------------------------------------------------------------------
// func gemmPackB16NEON(k int, src *float32, ld int, dst *float32)
// dst[p*16+j] = src[p*ld+j] for p < k, j < 16; see gemm_arm64.go.
// ---------------------------------------------------------------------

#define ROWS   R0 // rows left
#define SRCROW R1 // src row p
#define LDB    R2 // ld in bytes
#define DSTROW R3 // dst row p
#define AHEAD  R4 // src row p+8, prefetched

TEXT ·gemmPackB16NEON(SB), NOSPLIT, $0-32
	// Arguments; ld from floats to bytes.
	MOVD k+0(FP), ROWS
	MOVD src+8(FP), SRCROW
	MOVD ld+16(FP), LDB
	MOVD dst+24(FP), DSTROW
	LSL  $2, LDB

packb16:
	// Ask for the row eight ahead (a strided walk the prefetcher may not
	// follow), then copy one 64-byte row.
	ADD    LDB<<3, SRCROW, AHEAD
	PRFM   (AHEAD), PLDL1KEEP
	VLD1.P (SRCROW)(LDB), [V0.S4, V1.S4, V2.S4, V3.S4]
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(DSTROW)
	SUBS   $1, ROWS
	BNE    packb16
	RET

#undef ROWS
#undef SRCROW
#undef LDB
#undef DSTROW
#undef AHEAD

// ---------------------------------------------------------------------
// func gemmPackB64NEON(k int, src *float32, ld int, dst *float32, pstride int)
// Four 16-column panels at once: dst[q*pstride+p*16+j] = src[p*ld+16q+j]
// for q < 4, p < k, j < 16; see gemm_arm64.go.
// ---------------------------------------------------------------------

#define ROWS    R0 // rows left
#define SRCROW  R1 // src row p
#define LDB     R2 // ld in bytes
#define PANEL0  R3 // row p of panel 0 in dst
#define PSTRIDE R4 // panel stride in bytes
#define PANEL1  R5 // row p of panel 1
#define PANEL2  R6 // panel 2
#define PANEL3  R7 // panel 3
#define NEXTROW R8 // from the row's last 64 bytes to the next row
#define AHEAD   R9 // src row p+4, prefetched

TEXT ·gemmPackB64NEON(SB), NOSPLIT, $0-40
	// Arguments; ld and pstride from floats to bytes, panels 1-3 from
	// panel 0, and the step from a row's last 64 bytes to the next row.
	MOVD k+0(FP), ROWS
	MOVD src+8(FP), SRCROW
	MOVD ld+16(FP), LDB
	MOVD dst+24(FP), PANEL0
	MOVD pstride+32(FP), PSTRIDE
	LSL  $2, LDB
	LSL  $2, PSTRIDE
	ADD  PSTRIDE, PANEL0, PANEL1
	ADD  PSTRIDE, PANEL1, PANEL2
	ADD  PSTRIDE, PANEL2, PANEL3
	SUB  $192, LDB, NEXTROW

packb64:
	// One source row: 256 bytes read in order (four rows ahead asked for),
	// then each panel's 64 into its row p.
	ADD    LDB<<2, SRCROW, AHEAD
	PRFM   (AHEAD), PLDL1KEEP
	PRFM   64(AHEAD), PLDL1KEEP
	PRFM   128(AHEAD), PLDL1KEEP
	PRFM   192(AHEAD), PLDL1KEEP
	VLD1.P 64(SRCROW), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(SRCROW), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(SRCROW), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P (SRCROW)(NEXTROW), [V20.S4, V21.S4, V22.S4, V23.S4]
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(PANEL0)
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(PANEL1)
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(PANEL2)
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(PANEL3)
	SUBS   $1, ROWS
	BNE    packb64
	RET

#undef ROWS
#undef SRCROW
#undef LDB
#undef PANEL0
#undef PSTRIDE
#undef PANEL1
#undef PANEL2
#undef PANEL3
#undef NEXTROW
#undef AHEAD

// ---------------------------------------------------------------------
// func gemmPackA6NEON(k8 int, src *float32, lda int, dst *float32)
// dst[p*6+r] = src[r*lda+p] for r < 6, p < 8*k8; see gemm_arm64.go.
//
// Row r's eight steps load into V(2r) (steps 0-3) and V(2r+1) (steps 4-7).
// ---------------------------------------------------------------------

#define BLOCKS R0 // blocks of eight steps left
#define AROW0  R1 // row 0 of src at the current step
#define AROW1  R4 // row 1
#define AROW2  R5 // row 2
#define AROW3  R6 // row 3
#define AROW4  R7 // row 4
#define AROW5  R8 // row 5
#define LDAB   R2 // lda in bytes
#define DSTPTR R3 // dst

// PACK4STEPS stores four steps of the six rows, row r's four values in
// vector INr: it transposes rows 0-3 (4×4), pairs up rows 4-5, then lays
// the four 24-byte steps out as six vectors (V12-V25 scratch).
#define PACK4STEPS(IN0, IN1, IN2, IN3, IN4, IN5) \
	VTRN1 IN1.S4, IN0.S4, V12.S4  \ // r0[0] r1[0] r0[2] r1[2]
	VTRN2 IN1.S4, IN0.S4, V13.S4  \ // r0[1] r1[1] r0[3] r1[3]
	VTRN1 IN3.S4, IN2.S4, V14.S4  \ // r2[0] r3[0] r2[2] r3[2]
	VTRN2 IN3.S4, IN2.S4, V15.S4  \ // r2[1] r3[1] r2[3] r3[3]
	VZIP1 IN5.S4, IN4.S4, V16.S4  \ // r4[0] r5[0] r4[1] r5[1]
	VZIP2 IN5.S4, IN4.S4, V17.S4  \ // r4[2] r5[2] r4[3] r5[3]
	VTRN1 V14.D2, V12.D2, V20.D2  \ // step 0, rows 0-3
	VTRN1 V15.D2, V13.D2, V18.D2  \ // step 1
	VTRN2 V14.D2, V12.D2, V23.D2  \ // step 2
	VTRN2 V15.D2, V13.D2, V19.D2  \ // step 3
	VTRN1 V18.D2, V16.D2, V21.D2  \ // step 0 rows 4-5, step 1 rows 0-1
	VTRN2 V16.D2, V18.D2, V22.D2  \ // step 1 rows 2-5
	VTRN1 V19.D2, V17.D2, V24.D2  \ // step 2 rows 4-5, step 3 rows 0-1
	VTRN2 V17.D2, V19.D2, V25.D2  \ // step 3 rows 2-5
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(DSTPTR) \
	VST1.P [V24.S4, V25.S4], 32(DSTPTR)

TEXT ·gemmPackA6NEON(SB), NOSPLIT, $0-32
	// Arguments; lda from floats to bytes, rows 1-5 from row 0.
	MOVD k8+0(FP), BLOCKS
	MOVD src+8(FP), AROW0
	MOVD lda+16(FP), LDAB
	MOVD dst+24(FP), DSTPTR
	LSL  $2, LDAB
	ADD  LDAB, AROW0, AROW1
	ADD  LDAB, AROW1, AROW2
	ADD  LDAB, AROW2, AROW3
	ADD  LDAB, AROW3, AROW4
	ADD  LDAB, AROW4, AROW5

packa6:
	// Eight steps of each row: row r into V(2r), V(2r+1).
	VLD1.P 32(AROW0), [V0.S4, V1.S4]
	VLD1.P 32(AROW1), [V2.S4, V3.S4]
	VLD1.P 32(AROW2), [V4.S4, V5.S4]
	VLD1.P 32(AROW3), [V6.S4, V7.S4]
	VLD1.P 32(AROW4), [V8.S4, V9.S4]
	VLD1.P 32(AROW5), [V10.S4, V11.S4]
	PACK4STEPS(V0, V2, V4, V6, V8, V10)  // steps 0-3
	PACK4STEPS(V1, V3, V5, V7, V9, V11)  // steps 4-7
	SUBS $1, BLOCKS
	BNE  packa6
	RET

#undef BLOCKS
#undef AROW0
#undef AROW1
#undef AROW2
#undef AROW3
#undef AROW4
#undef AROW5
#undef LDAB
#undef DSTPTR
#undef PACK4STEPS
