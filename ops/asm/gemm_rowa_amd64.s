//go:build amd64 && !purego

#include "textflag.h"
#include "gemm_tile_amd64.h"

// ---------------------------------------------------------------------
// func gemmPanel6x16RowAAVX2(tiles, k int, a *float32, lda int, b, c *float32, ldc int, flags uint)
// gemmPanel6x16AVX2 with A read in place: tile t's six rows lda floats
// apart from a[6t*lda], step p of its row r at a[(6t+r)*lda+p]. Same FMAs
// in the same order, so the same bits; see gemm_rowa_amd64.go.
// ---------------------------------------------------------------------

#define K     CX  // steps of k left
#define PA    SI  // A row 0 at the current step
#define PB    DI  // packed B: 16 floats (64 bytes) per step
#define PC    DX  // C row 0
#define LDC   R8  // C row stride in bytes
#define FLAGS R9  // bit 0: accumulate into C
#define PC3   R10 // C row 3
#define K4    R11 // groups of four steps
#define LDA   BX  // A row stride in bytes
#define PA3   R13 // A row 3 at the current step
#define TILES AX  // tiles left
#define A0ROW R12 // A row 0 of the tile

#define B0  Y0
#define B1  Y1
#define A0  Y2
#define A1  Y3
#define C00 Y4
#define C01 Y5
#define C10 Y6
#define C11 Y7
#define C20 Y8
#define C21 Y9
#define C30 Y10
#define C31 Y11
#define C40 Y12
#define C41 Y13
#define C50 Y14
#define C51 Y15

// RSTEP(u) is step u of an unrolled group: as gemm_amd64.s's KSTEP, with
// the six A values broadcast from the six rows.
#define RSTEP(u) \
	VMOVUPS      (64*u)(PB), B0;       \
	VMOVUPS      (64*u+32)(PB), B1;    \
	VBROADCASTSS (4*u)(PA), A0;        \
	VFMADD231PS  B0, A0, C00;          \
	VFMADD231PS  B1, A0, C01;          \
	VBROADCASTSS (4*u)(PA)(LDA*1), A1; \
	VFMADD231PS  B0, A1, C10;          \
	VFMADD231PS  B1, A1, C11;          \
	VBROADCASTSS (4*u)(PA)(LDA*2), A0; \
	VFMADD231PS  B0, A0, C20;          \
	VFMADD231PS  B1, A0, C21;          \
	VBROADCASTSS (4*u)(PA3), A1;       \
	VFMADD231PS  B0, A1, C30;          \
	VFMADD231PS  B1, A1, C31;          \
	VBROADCASTSS (4*u)(PA3)(LDA*1), A0; \
	VFMADD231PS  B0, A0, C40;          \
	VFMADD231PS  B1, A0, C41;          \
	VBROADCASTSS (4*u)(PA3)(LDA*2), A1; \
	VFMADD231PS  B0, A1, C50;          \
	VFMADD231PS  B1, A1, C51

TEXT ·gemmPanel6x16RowAAVX2(SB), NOSPLIT, $0-64
	MOVQ tiles+0(FP), TILES
	MOVQ a+16(FP), A0ROW
	MOVQ lda+24(FP), LDA
	MOVQ c+40(FP), PC
	MOVQ ldc+48(FP), LDC
	SHLQ $2, LDA              // lda in bytes
	SHLQ $2, LDC

tile:
	MOVQ k+8(FP), K
	MOVQ b+32(FP), PB
	MOVQ flags+56(FP), FLAGS
	MOVQ A0ROW, PA
	LEAQ (LDA)(LDA*2), PA3
	ADDQ PA, PA3              // A row 3
	LEAQ (LDC)(LDC*2), PC3
	ADDQ PC, PC3

	TILE_PREFETCH

	TILE_ZERO

	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail

loop4:
	RSTEP(0)
	RSTEP(1)
	RSTEP(2)
	RSTEP(3)
	ADDQ $16, PA              // 4 steps of each row
	ADDQ $16, PA3
	ADDQ $256, PB             // 4 steps × 16 floats
	DECQ K4
	JNZ  loop4

tail:
	TESTQ K, K
	JZ    store

loop1:
	RSTEP(0)
	ADDQ $4, PA
	ADDQ $4, PA3
	ADDQ $64, PB
	DECQ K
	JNZ  loop1

store:
	TESTQ $1, FLAGS
	JZ    write
	TILE_ADD

write:
	TILE_STORE

	// The next tile: A and C rows 6 on.
	LEAQ (A0ROW)(LDA*4), A0ROW
	LEAQ (A0ROW)(LDA*2), A0ROW
	LEAQ (PC3)(LDC*2), PC
	ADDQ LDC, PC
	DECQ TILES
	JNZ  tile
	VZEROUPPER
	RET
