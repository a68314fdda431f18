//go:build !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func transpose8NEON(dst *uint32, ldd int, src *uint32, lds int, rows, cols int)
// dst[j·ldd+i] = src[i·lds+j] for i < rows, j < cols (multiples of 8);
// see transpose_arm64.go. Words are only moved (TRN1/TRN2 never touch
// the bits), so any 4-byte type and every NaN payload survive.
// ---------------------------------------------------------------------

#define PD   R0 // dst rows j..j+7 (the current column block's)
#define LDD  R1 // dst row stride, bytes
#define PS   R2 // src columns j..j+7
#define LDS  R3 // src row stride, bytes
#define ROWS R4
#define COLS R5 // src columns left
#define TS   R6 // src tile, then the next one (the loads step it)
#define TD   R7 // dst tile
#define LEFT R8 // rows left in the column block
#define PROW R9 // dst row being stored

// QUARTER transposes the 4×4 words in rows a, b, c, d (clobbered) into
// columns o0..o3. TRN1/TRN2 on words pair a with b and c with d
// (a0 b0 a2 b2 into o0, a1 b1 a3 b3 into a, c0 d0 c2 d2 into b, c1 d1
// c3 d3 into c); TRN1/TRN2 on doublewords then join the pairs (column 2
// first, since it reads o0 before column 0 overwrites it).
#define QUARTER(a, b, c, d, o0, o1, o2, o3) \
	VTRN1 b.S4, a.S4, o0.S4;  \
	VTRN2 b.S4, a.S4, a.S4;   \
	VTRN1 d.S4, c.S4, b.S4;   \
	VTRN2 d.S4, c.S4, c.S4;   \
	VTRN2 b.D2, o0.D2, o2.D2; \
	VTRN1 b.D2, o0.D2, o0.D2; \
	VTRN1 c.D2, a.D2, o1.D2;  \
	VTRN2 c.D2, a.D2, o3.D2

TEXT ·transpose8NEON(SB), NOSPLIT, $0-48
	MOVD dst+0(FP), PD
	MOVD ldd+8(FP), LDD
	MOVD src+16(FP), PS
	MOVD lds+24(FP), LDS
	MOVD rows+32(FP), ROWS
	MOVD cols+40(FP), COLS
	LSL  $2, LDD
	LSL  $2, LDS
	CBZ  ROWS, done

	// Column blocks outside, row strips inside: each pass down a column
	// block writes eight whole dst rows front to back, so every dst line
	// is completed while it is in L1 (see transpose_amd64.s).
block:
	CBZ  COLS, done
	MOVD PS, TS
	MOVD PD, TD
	MOVD ROWS, LEFT

tile:
	// Row i of the tile in V(2i) (columns 0-3) and V(2i+1) (4-7).
	VLD1.P (TS)(LDS), [V0.S4, V1.S4]
	VLD1.P (TS)(LDS), [V2.S4, V3.S4]
	VLD1.P (TS)(LDS), [V4.S4, V5.S4]
	VLD1.P (TS)(LDS), [V6.S4, V7.S4]
	VLD1.P (TS)(LDS), [V8.S4, V9.S4]
	VLD1.P (TS)(LDS), [V10.S4, V11.S4]
	VLD1.P (TS)(LDS), [V12.S4, V13.S4]
	VLD1.P (TS)(LDS), [V14.S4, V15.S4]

	// dst row j goes out of V(16+2j) (rows 0-3) and V(17+2j) (4-7).
	QUARTER(V0, V2, V4, V6, V16, V18, V20, V22)
	QUARTER(V8, V10, V12, V14, V17, V19, V21, V23)
	QUARTER(V1, V3, V5, V7, V24, V26, V28, V30)
	QUARTER(V9, V11, V13, V15, V25, V27, V29, V31)

	MOVD   TD, PROW
	VST1.P [V16.S4, V17.S4], (PROW)(LDD)
	VST1.P [V18.S4, V19.S4], (PROW)(LDD)
	VST1.P [V20.S4, V21.S4], (PROW)(LDD)
	VST1.P [V22.S4, V23.S4], (PROW)(LDD)
	VST1.P [V24.S4, V25.S4], (PROW)(LDD)
	VST1.P [V26.S4, V27.S4], (PROW)(LDD)
	VST1.P [V28.S4, V29.S4], (PROW)(LDD)
	VST1.P [V30.S4, V31.S4], (PROW)(LDD)

	ADD  $32, TD // next eight dst columns
	SUBS $8, LEFT
	BNE  tile

	ADD LDD<<3, PD // next eight dst rows
	ADD $32, PS    // next eight src columns
	SUB $8, COLS
	B   block

done:
	RET
