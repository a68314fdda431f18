// The 6×8 transpose of the A packers (gemm_amd64.s's gemmPackA6AVX2,
// gemm512_amd64.s's gemmPackA12AVX512). The including file defines LDA
// (row stride in bytes) and DST (packed step 0); the macro clobbers
// Y0-Y15.

// PACK6X8(S, S3, OFF, STEP) loads eight steps of six rows (rows 0-2 at
// S + r·LDA, rows 3-5 at S3 + (r-3)·LDA) and stores step p's six values
// at DST + OFF + STEP·p (0 ≤ p < 8) as a 16-byte and an 8-byte piece, so
// nothing between or past the six values is written.
#define PACK6X8(S, S3, OFF, STEP) \
	VMOVUPS (S), Y0;                             \ // eight steps of each row
	VMOVUPS (S)(LDA*1), Y1;                      \
	VMOVUPS (S)(LDA*2), Y2;                      \
	VMOVUPS (S3), Y3;                            \
	VMOVUPS (S3)(LDA*1), Y4;                     \
	VMOVUPS (S3)(LDA*2), Y5;                     \
	VUNPCKLPS Y1, Y0, Y6;                        \ // row pairs: r0[0] r1[0] r0[1] r1[1] | steps 4,5
	VUNPCKHPS Y1, Y0, Y7;                        \ // steps 2,3 | 6,7
	VUNPCKLPS Y3, Y2, Y8;                        \
	VUNPCKHPS Y3, Y2, Y9;                        \
	VUNPCKLPS Y5, Y4, Y10;                       \ // rows 4,5 of steps 0,1 | 4,5
	VUNPCKHPS Y5, Y4, Y11;                       \ // rows 4,5 of steps 2,3 | 6,7
	VSHUFPS $0x44, Y8, Y6, Y12;                  \ // rows 0-3 of step 0 | step 4
	VSHUFPS $0xEE, Y8, Y6, Y13;                  \ // step 1 | 5
	VSHUFPS $0x44, Y9, Y7, Y14;                  \ // step 2 | 6
	VSHUFPS $0xEE, Y9, Y7, Y15;                  \ // step 3 | 7
	VMOVUPS X12, (OFF)(DST);                     \ // steps 0-3: rows 0-3, then rows 4-5
	VMOVLPS X10, (OFF+16)(DST);                  \
	VMOVUPS X13, (OFF+STEP)(DST);                \
	VMOVHPS X10, (OFF+STEP+16)(DST);             \
	VMOVUPS X14, (OFF+2*STEP)(DST);              \
	VMOVLPS X11, (OFF+2*STEP+16)(DST);           \
	VMOVUPS X15, (OFF+3*STEP)(DST);              \
	VMOVHPS X11, (OFF+3*STEP+16)(DST);           \
	VEXTRACTF128 $1, Y12, (OFF+4*STEP)(DST);     \ // steps 4-7 from the upper lanes
	VEXTRACTF128 $1, Y13, (OFF+5*STEP)(DST);     \
	VEXTRACTF128 $1, Y14, (OFF+6*STEP)(DST);     \
	VEXTRACTF128 $1, Y15, (OFF+7*STEP)(DST);     \
	VEXTRACTF128 $1, Y10, X10;                   \
	VEXTRACTF128 $1, Y11, X11;                   \
	VMOVLPS X10, (OFF+4*STEP+16)(DST);           \
	VMOVHPS X10, (OFF+5*STEP+16)(DST);           \
	VMOVLPS X11, (OFF+6*STEP+16)(DST);           \
	VMOVHPS X11, (OFF+7*STEP+16)(DST)
