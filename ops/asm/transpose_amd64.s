//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func transpose8AVX2(dst *uint32, ldd int, src *uint32, lds int, rows, cols int)
// dst[j·ldd+i] = src[i·lds+j] for i < rows, j < cols (multiples of 8);
// see transpose_amd64.go. Words are only moved (unpack, shuffle and lane
// permutes never touch the bits), so any 4-byte type and every NaN
// payload survive.
// ---------------------------------------------------------------------

#define PD    DI  // dst rows j..j+7 (the current column block's)
#define LDD   R8  // dst row stride, bytes
#define PS    SI  // src columns j..j+7
#define LDS   R9  // src row stride, bytes
#define ROWS  R10
#define COLS  R11 // src columns left
#define LDS3  R12 // 3·lds
#define LDD3  R13 // 3·ldd
#define TS    AX  // src tile
#define TD    BX  // dst tile
#define LEFT  CX  // rows left in the column block
#define HALF  DX  // row 4 of the tile

TEXT ·transpose8AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), PD
	MOVQ ldd+8(FP), LDD
	MOVQ src+16(FP), PS
	MOVQ lds+24(FP), LDS
	MOVQ rows+32(FP), ROWS
	MOVQ cols+40(FP), COLS
	SHLQ $2, LDD
	SHLQ $2, LDS
	LEAQ (LDS)(LDS*2), LDS3
	LEAQ (LDD)(LDD*2), LDD3

	// Column blocks outside, row strips inside: each pass down a column
	// block writes eight whole dst rows front to back, so every dst line
	// is completed while it is in L1 (with a power-of-two stride, lines
	// left half written would be evicted by their neighbours first).
block:
	TESTQ ROWS, ROWS
	JZ    done
	TESTQ COLS, COLS
	JZ    done
	MOVQ  PS, TS
	MOVQ  PD, TD
	MOVQ  ROWS, LEFT

tile:
	// Rows a..h of the tile, a0..a7 etc.
	LEAQ    (TS)(LDS*4), HALF
	VMOVUPS (TS), Y0
	VMOVUPS (TS)(LDS*1), Y1
	VMOVUPS (TS)(LDS*2), Y2
	VMOVUPS (TS)(LDS3*1), Y3
	VMOVUPS (HALF), Y4
	VMOVUPS (HALF)(LDS*1), Y5
	VMOVUPS (HALF)(LDS*2), Y6
	VMOVUPS (HALF)(LDS3*1), Y7

	// Interleave pairs of rows: a0 b0 a1 b1 | a4 b4 a5 b5 and
	// a2 b2 a3 b3 | a6 b6 a7 b7 (per 128-bit lane), same for cd, ef, gh.
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	// Gather four rows: a0 b0 c0 d0 | a4 b4 c4 d4, a1 b1 c1 d1 | a5 ...,
	// and so on for columns 2, 3 and rows e..h.
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xee, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xee, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xee, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xee, Y15, Y13, Y7

	// Join the 128-bit halves: low halves are columns 0-3, high 4-7.
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	LEAQ    (TD)(LDD*4), HALF
	VMOVUPS Y8, (TD)
	VMOVUPS Y9, (TD)(LDD*1)
	VMOVUPS Y10, (TD)(LDD*2)
	VMOVUPS Y11, (TD)(LDD3*1)
	VMOVUPS Y12, (HALF)
	VMOVUPS Y13, (HALF)(LDD*1)
	VMOVUPS Y14, (HALF)(LDD*2)
	VMOVUPS Y15, (HALF)(LDD3*1)

	LEAQ (TS)(LDS*8), TS // next eight src rows
	ADDQ $32, TD         // next eight dst columns
	SUBQ $8, LEFT
	JNZ  tile

	ADDQ $32, PS         // next eight src columns
	LEAQ (PD)(LDD*8), PD // next eight dst rows
	SUBQ $8, COLS
	JMP  block

done:
	VZEROUPPER
	RET
