//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func transpose16AVX512(dst *uint32, ldd int, src *uint32, lds int, rows, cols int)
// dst[j·ldd+i] = src[i·lds+j] for i < rows, j < cols (multiples of 16);
// see row512_amd64.go. Words are only moved, so any 4-byte type and every
// NaN payload survive.
//
// A 16×16 tile is loaded as sixteen zmm rows and transposed in four
// stages: T4 (unpack pairs, then shuffle) transposes the 4×4 blocks within
// each 128-bit lane of four rows, leaving in register 4g+c lane p the
// words of column 4p+c at rows 4g..4g+3; L4 (VSHUFF32X4 twice) then
// transposes the 128-bit lanes across registers c, 4+c, 8+c and 12+c, so
// register r ends as dst row r. (Gathering 128-bit pieces of four rows
// with VINSERTF32X4 from memory instead, which halves the shuffles,
// measured slower than transpose8AVX2 on Zen 5; this measures about as
// fast to 10% faster, within the noise of a shared machine.)
// ---------------------------------------------------------------------

#define PD   DI  // dst rows j..j+15 (the current column block's)
#define LDD  R8  // dst row stride, bytes
#define PS   SI  // src columns j..j+15
#define LDS  R9  // src row stride, bytes
#define LDS3 R12 // 3·lds
#define LDD3 R13 // 3·ldd
#define TS   AX  // src tile, row 0
#define TD   BX  // dst tile
#define LEFT CX  // rows left in the column block
#define S4   DX  // src row 4 of the tile, then dst row 4
#define S8   R10 // src row 8, then dst row 8
#define S12  R11 // src row 12, then dst row 12

#include "transpose512_amd64.h"

TEXT ·transpose16AVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), PD
	MOVQ ldd+8(FP), LDD
	MOVQ src+16(FP), PS
	MOVQ lds+24(FP), LDS
	SHLQ $2, LDD
	SHLQ $2, LDS
	LEAQ (LDS)(LDS*2), LDS3
	LEAQ (LDD)(LDD*2), LDD3

	// Column blocks outside, row strips inside, as transpose8AVX2: each
	// pass down a column block writes sixteen whole dst rows front to
	// back. cols+40(FP) counts the columns left.
block:
	MOVQ  rows+32(FP), LEFT
	TESTQ LEFT, LEFT
	JZ    done
	CMPQ  cols+40(FP), $0
	JEQ   done
	MOVQ  PS, TS
	MOVQ  PD, TD

tile:
	LEAQ    (TS)(LDS*4), S4
	LEAQ    (TS)(LDS*8), S8
	LEAQ    (S4)(LDS*8), S12
	VMOVUPS (TS), Z0
	VMOVUPS (TS)(LDS*1), Z1
	VMOVUPS (TS)(LDS*2), Z2
	VMOVUPS (TS)(LDS3*1), Z3
	VMOVUPS (S4), Z4
	VMOVUPS (S4)(LDS*1), Z5
	VMOVUPS (S4)(LDS*2), Z6
	VMOVUPS (S4)(LDS3*1), Z7
	VMOVUPS (S8), Z8
	VMOVUPS (S8)(LDS*1), Z9
	VMOVUPS (S8)(LDS*2), Z10
	VMOVUPS (S8)(LDS3*1), Z11
	VMOVUPS (S12), Z12
	VMOVUPS (S12)(LDS*1), Z13
	VMOVUPS (S12)(LDS*2), Z14
	VMOVUPS (S12)(LDS3*1), Z15

	TRANSPOSE16

	LEAQ    (TD)(LDD*4), S4
	LEAQ    (TD)(LDD*8), S8
	LEAQ    (S4)(LDD*8), S12
	VMOVUPS Z0, (TD)
	VMOVUPS Z1, (TD)(LDD*1)
	VMOVUPS Z2, (TD)(LDD*2)
	VMOVUPS Z3, (TD)(LDD3*1)
	VMOVUPS Z4, (S4)
	VMOVUPS Z5, (S4)(LDD*1)
	VMOVUPS Z6, (S4)(LDD*2)
	VMOVUPS Z7, (S4)(LDD3*1)
	VMOVUPS Z8, (S8)
	VMOVUPS Z9, (S8)(LDD*1)
	VMOVUPS Z10, (S8)(LDD*2)
	VMOVUPS Z11, (S8)(LDD3*1)
	VMOVUPS Z12, (S12)
	VMOVUPS Z13, (S12)(LDD*1)
	VMOVUPS Z14, (S12)(LDD*2)
	VMOVUPS Z15, (S12)(LDD3*1)

	LEAQ (TS)(LDS*8), TS // next sixteen src rows
	LEAQ (TS)(LDS*8), TS
	ADDQ $64, TD         // next sixteen dst columns
	SUBQ $16, LEFT
	JNZ  tile

	ADDQ $64, PS          // next sixteen src columns
	LEAQ (PD)(LDD*8), PD  // next sixteen dst rows
	LEAQ (PD)(LDD*8), PD
	SUBQ $16, cols+40(FP)
	JMP  block

done:
	VZEROUPPER
	RET
