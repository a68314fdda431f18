//go:build !purego

#include "textflag.h"

// The int8 GEMM kernel for arm64 (SDOT, Armv8.2 dot product); see
// gemm_i8.go for the layouts and the exactness argument and
// gemm_i8_arm64.go for the contract. Go's assembler has no SDOT: each is
// a WORD with the instruction in GNU syntax beside it, checked by
// TestNeonWords.
//
// SDOT_QUADu: quad u of a group of four: for rows r = 0..3 and column
// groups g = 0..3, sdot v(8+4r+g).4s, v(g).16b, v(4+r).4b[u]: V0-V3 hold
// the B panel's quad (columns 4g..4g+3, four steps each), V4-V7 rows
// 0-3's next four quads of A (as a-128: signed bytes), used by element.

#define SDOT_QUAD0 \
	WORD $0x4f84e008 /* sdot v8.4s, v0.16b, v4.4b[0] */; \
	WORD $0x4f84e029 /* sdot v9.4s, v1.16b, v4.4b[0] */; \
	WORD $0x4f84e04a /* sdot v10.4s, v2.16b, v4.4b[0] */; \
	WORD $0x4f84e06b /* sdot v11.4s, v3.16b, v4.4b[0] */; \
	WORD $0x4f85e00c /* sdot v12.4s, v0.16b, v5.4b[0] */; \
	WORD $0x4f85e02d /* sdot v13.4s, v1.16b, v5.4b[0] */; \
	WORD $0x4f85e04e /* sdot v14.4s, v2.16b, v5.4b[0] */; \
	WORD $0x4f85e06f /* sdot v15.4s, v3.16b, v5.4b[0] */; \
	WORD $0x4f86e010 /* sdot v16.4s, v0.16b, v6.4b[0] */; \
	WORD $0x4f86e031 /* sdot v17.4s, v1.16b, v6.4b[0] */; \
	WORD $0x4f86e052 /* sdot v18.4s, v2.16b, v6.4b[0] */; \
	WORD $0x4f86e073 /* sdot v19.4s, v3.16b, v6.4b[0] */; \
	WORD $0x4f87e014 /* sdot v20.4s, v0.16b, v7.4b[0] */; \
	WORD $0x4f87e035 /* sdot v21.4s, v1.16b, v7.4b[0] */; \
	WORD $0x4f87e056 /* sdot v22.4s, v2.16b, v7.4b[0] */; \
	WORD $0x4f87e077 /* sdot v23.4s, v3.16b, v7.4b[0] */

#define SDOT_QUAD1 \
	WORD $0x4fa4e008 /* sdot v8.4s, v0.16b, v4.4b[1] */; \
	WORD $0x4fa4e029 /* sdot v9.4s, v1.16b, v4.4b[1] */; \
	WORD $0x4fa4e04a /* sdot v10.4s, v2.16b, v4.4b[1] */; \
	WORD $0x4fa4e06b /* sdot v11.4s, v3.16b, v4.4b[1] */; \
	WORD $0x4fa5e00c /* sdot v12.4s, v0.16b, v5.4b[1] */; \
	WORD $0x4fa5e02d /* sdot v13.4s, v1.16b, v5.4b[1] */; \
	WORD $0x4fa5e04e /* sdot v14.4s, v2.16b, v5.4b[1] */; \
	WORD $0x4fa5e06f /* sdot v15.4s, v3.16b, v5.4b[1] */; \
	WORD $0x4fa6e010 /* sdot v16.4s, v0.16b, v6.4b[1] */; \
	WORD $0x4fa6e031 /* sdot v17.4s, v1.16b, v6.4b[1] */; \
	WORD $0x4fa6e052 /* sdot v18.4s, v2.16b, v6.4b[1] */; \
	WORD $0x4fa6e073 /* sdot v19.4s, v3.16b, v6.4b[1] */; \
	WORD $0x4fa7e014 /* sdot v20.4s, v0.16b, v7.4b[1] */; \
	WORD $0x4fa7e035 /* sdot v21.4s, v1.16b, v7.4b[1] */; \
	WORD $0x4fa7e056 /* sdot v22.4s, v2.16b, v7.4b[1] */; \
	WORD $0x4fa7e077 /* sdot v23.4s, v3.16b, v7.4b[1] */

#define SDOT_QUAD2 \
	WORD $0x4f84e808 /* sdot v8.4s, v0.16b, v4.4b[2] */; \
	WORD $0x4f84e829 /* sdot v9.4s, v1.16b, v4.4b[2] */; \
	WORD $0x4f84e84a /* sdot v10.4s, v2.16b, v4.4b[2] */; \
	WORD $0x4f84e86b /* sdot v11.4s, v3.16b, v4.4b[2] */; \
	WORD $0x4f85e80c /* sdot v12.4s, v0.16b, v5.4b[2] */; \
	WORD $0x4f85e82d /* sdot v13.4s, v1.16b, v5.4b[2] */; \
	WORD $0x4f85e84e /* sdot v14.4s, v2.16b, v5.4b[2] */; \
	WORD $0x4f85e86f /* sdot v15.4s, v3.16b, v5.4b[2] */; \
	WORD $0x4f86e810 /* sdot v16.4s, v0.16b, v6.4b[2] */; \
	WORD $0x4f86e831 /* sdot v17.4s, v1.16b, v6.4b[2] */; \
	WORD $0x4f86e852 /* sdot v18.4s, v2.16b, v6.4b[2] */; \
	WORD $0x4f86e873 /* sdot v19.4s, v3.16b, v6.4b[2] */; \
	WORD $0x4f87e814 /* sdot v20.4s, v0.16b, v7.4b[2] */; \
	WORD $0x4f87e835 /* sdot v21.4s, v1.16b, v7.4b[2] */; \
	WORD $0x4f87e856 /* sdot v22.4s, v2.16b, v7.4b[2] */; \
	WORD $0x4f87e877 /* sdot v23.4s, v3.16b, v7.4b[2] */

#define SDOT_QUAD3 \
	WORD $0x4fa4e808 /* sdot v8.4s, v0.16b, v4.4b[3] */; \
	WORD $0x4fa4e829 /* sdot v9.4s, v1.16b, v4.4b[3] */; \
	WORD $0x4fa4e84a /* sdot v10.4s, v2.16b, v4.4b[3] */; \
	WORD $0x4fa4e86b /* sdot v11.4s, v3.16b, v4.4b[3] */; \
	WORD $0x4fa5e80c /* sdot v12.4s, v0.16b, v5.4b[3] */; \
	WORD $0x4fa5e82d /* sdot v13.4s, v1.16b, v5.4b[3] */; \
	WORD $0x4fa5e84e /* sdot v14.4s, v2.16b, v5.4b[3] */; \
	WORD $0x4fa5e86f /* sdot v15.4s, v3.16b, v5.4b[3] */; \
	WORD $0x4fa6e810 /* sdot v16.4s, v0.16b, v6.4b[3] */; \
	WORD $0x4fa6e831 /* sdot v17.4s, v1.16b, v6.4b[3] */; \
	WORD $0x4fa6e852 /* sdot v18.4s, v2.16b, v6.4b[3] */; \
	WORD $0x4fa6e873 /* sdot v19.4s, v3.16b, v6.4b[3] */; \
	WORD $0x4fa7e814 /* sdot v20.4s, v0.16b, v7.4b[3] */; \
	WORD $0x4fa7e835 /* sdot v21.4s, v1.16b, v7.4b[3] */; \
	WORD $0x4fa7e856 /* sdot v22.4s, v2.16b, v7.4b[3] */; \
	WORD $0x4fa7e877 /* sdot v23.4s, v3.16b, v7.4b[3] */

// ---------------------------------------------------------------------
// func gemmPanelU8S8NEON(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)
// For t < tiles: C tile t [4×16] (+)= A rows 4t..4t+3 [kq quads of
// signed bytes, lda bytes apart] · one B panel [kq quads × 16 columns].
// V8-V23 accumulate row r, columns 4g..4g+3 in V(8+4r+g).
// ---------------------------------------------------------------------

#define TILES R0  // tiles left
#define QUADS R1  // groups of four quads left
#define ATILE R2  // A row 0 of the tile
#define LDA   R3  // A row stride in bytes
#define BPAN  R4  // B panel at the current quad
#define CROW  R5  // C row being stored
#define LDCB  R6  // ldc in bytes
#define FLAGS R7  // flags: bit 0 accumulates
#define AROW0 R8  // A rows 0-3 at the current quad
#define AROW1 R9
#define AROW2 R10
#define AROW3 R11
#define CTILE R12 // C row 0 of the tile

TEXT ·gemmPanelU8S8NEON(SB), NOSPLIT, $0-64
	MOVD tiles+0(FP), TILES
	MOVD a+16(FP), ATILE
	MOVD lda+24(FP), LDA
	MOVD c+40(FP), CTILE
	MOVD ldc+48(FP), LDCB
	MOVD flags+56(FP), FLAGS
	LSL  $2, LDCB

tile:
	MOVD kq+8(FP), QUADS
	LSR  $2, QUADS            // kq is a multiple of 4
	MOVD b+32(FP), BPAN
	MOVD ATILE, AROW0
	ADD  LDA, AROW0, AROW1
	ADD  LDA, AROW1, AROW2
	ADD  LDA, AROW2, AROW3
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

loop:
	// Four quads: each row's 16 bytes of A once, then the panel's four
	// quads (64 bytes each) against them by element.
	VLD1.P 16(AROW0), [V4.B16]
	VLD1.P 16(AROW1), [V5.B16]
	VLD1.P 16(AROW2), [V6.B16]
	VLD1.P 16(AROW3), [V7.B16]
	VLD1.P 64(BPAN), [V0.B16, V1.B16, V2.B16, V3.B16]
	SDOT_QUAD0
	VLD1.P 64(BPAN), [V0.B16, V1.B16, V2.B16, V3.B16]
	SDOT_QUAD1
	VLD1.P 64(BPAN), [V0.B16, V1.B16, V2.B16, V3.B16]
	SDOT_QUAD2
	VLD1.P 64(BPAN), [V0.B16, V1.B16, V2.B16, V3.B16]
	SDOT_QUAD3
	SUBS $1, QUADS
	BNE  loop

	// Write back row by row; accumulate mode adds the old C.
	MOVD CTILE, CROW
	TBZ  $0, FLAGS, write
	VLD1 (CROW), [V24.S4, V25.S4, V26.S4, V27.S4]
	VADD V24.S4, V8.S4, V8.S4
	VADD V25.S4, V9.S4, V9.S4
	VADD V26.S4, V10.S4, V10.S4
	VADD V27.S4, V11.S4, V11.S4
	ADD  LDCB, CROW
	VLD1 (CROW), [V24.S4, V25.S4, V26.S4, V27.S4]
	VADD V24.S4, V12.S4, V12.S4
	VADD V25.S4, V13.S4, V13.S4
	VADD V26.S4, V14.S4, V14.S4
	VADD V27.S4, V15.S4, V15.S4
	ADD  LDCB, CROW
	VLD1 (CROW), [V24.S4, V25.S4, V26.S4, V27.S4]
	VADD V24.S4, V16.S4, V16.S4
	VADD V25.S4, V17.S4, V17.S4
	VADD V26.S4, V18.S4, V18.S4
	VADD V27.S4, V19.S4, V19.S4
	ADD  LDCB, CROW
	VLD1 (CROW), [V24.S4, V25.S4, V26.S4, V27.S4]
	VADD V24.S4, V20.S4, V20.S4
	VADD V25.S4, V21.S4, V21.S4
	VADD V26.S4, V22.S4, V22.S4
	VADD V27.S4, V23.S4, V23.S4
	MOVD CTILE, CROW

write:
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (CROW)
	ADD  LDCB, CROW
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (CROW)

	// The next tile: A and C rows 4 on.
	ADD  LDA<<2, ATILE
	ADD  LDCB<<2, CTILE
	SUBS $1, TILES
	BNE  tile
	RET

#undef TILES
#undef QUADS
#undef ATILE
#undef LDA
#undef BPAN
#undef CROW
#undef LDCB
#undef FLAGS
#undef AROW0
#undef AROW1
#undef AROW2
#undef AROW3
#undef CTILE
