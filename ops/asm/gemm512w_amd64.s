//go:build amd64 && !purego

#include "textflag.h"
#include "gemm_clamp_amd64.h"
#include "clamp512_amd64.h"

// ---------------------------------------------------------------------
// func gemmPanel12x32AVX512(tiles, k int, a, b0, b1, c *float32, ldc int, flags uint)
// For t < tiles: C tile t [12×32] (+)= A panel t [k×12, interleaved] ·
// [B panel b0 | B panel b1] [k×16 each]: gemmPanel12x16AVX512 on two
// column panels at once, with the same FMAs in the same order (so the
// same bits); see gemm512w_amd64.go.
// ---------------------------------------------------------------------

#define K     CX  // steps of k left
#define PA    SI  // packed A: 12 floats (48 bytes) per step
#define PB    DI  // B panel b0: 16 floats (64 bytes) per step
#define DIST  R11 // b1 - b0 in bytes
#define PC    DX  // C row 0
#define LDC   R8  // C row stride in bytes
#define FLAGS R9  // bit 0: accumulate into C
#define PC3   R10 // C row 3
#define PC6   R13 // C row 6
#define PC9   BX  // C row 9
#define K2    R12 // pairs of steps
#define TILES AX  // tiles left
#define PN    R14 // the next pair's b0 at this step, PB + 2·DIST (flags bit 1)

// Accumulators: row r's columns 0-15 in Zr, 16-31 in Z(12+r).
#define BL Z24 // the step's row of b0
#define BR Z25 // and of b1
#define T0 Z26 // broadcast A values, four in rotation
#define T1 Z27
#define T2 Z28
#define T3 Z29

// ROW(u, r, T, CL, CR): broadcast A value r of step u once and multiply
// it into both halves of row r. One load feeds two FMAs, so a step is 14
// loads for 24 FMAs where the 16-column kernel issues 13 for 12: the
// FMA pipes, not the load ports, set the pace.
#define ROW(u, r, T, CL, CR) \
	VBROADCASTSS (48*u+4*r)(PA), T; \
	VFMADD231PS  T, BL, CL;         \
	VFMADD231PS  T, BR, CR

// KSTEP(u) is step u: the two B rows, then the twelve A values each into
// both halves of its row; KSTEP4 and KSTEP8 do rows 0-3 and 0-7 of the
// twelve-row A panel.
#define KSTEP4(u) \
	VMOVUPS (64*u)(PB), BL;          \
	VMOVUPS (64*u)(PB)(DIST*1), BR;  \
	ROW(u, 0, T0, Z0, Z12);          \
	ROW(u, 1, T1, Z1, Z13);          \
	ROW(u, 2, T2, Z2, Z14);          \
	ROW(u, 3, T3, Z3, Z15)
#define KSTEP8(u) \
	KSTEP4(u);                       \
	ROW(u, 4, T0, Z4, Z16);          \
	ROW(u, 5, T1, Z5, Z17);          \
	ROW(u, 6, T2, Z6, Z18);          \
	ROW(u, 7, T3, Z7, Z19)
#define KSTEP(u) \
	KSTEP8(u);                       \
	ROW(u, 8, T0, Z8, Z20);          \
	ROW(u, 9, T1, Z9, Z21);          \
	ROW(u, 10, T2, Z10, Z22);        \
	ROW(u, 11, T3, Z11, Z23)

// TILE_ROWS(op) applies op(left, right, left's address, right's) to
// the twelve rows: row r of C is at PC, PC3, PC6 or PC9 plus
// (r mod 3)·LDC, its right half 64 bytes on. TILE_ROWS4, TILE_ROWS4TO8
// and TILE_ROWS8 do rows 0-3, 4-7 and 0-7.
#define TILE_ROWS4(op) \
	op(Z0, Z12, (PC), 64(PC));                    \
	op(Z1, Z13, (PC)(LDC*1), 64(PC)(LDC*1));      \
	op(Z2, Z14, (PC)(LDC*2), 64(PC)(LDC*2));      \
	op(Z3, Z15, (PC3), 64(PC3))
#define TILE_ROWS4TO8(op) \
	op(Z4, Z16, (PC3)(LDC*1), 64(PC3)(LDC*1));    \
	op(Z5, Z17, (PC3)(LDC*2), 64(PC3)(LDC*2));    \
	op(Z6, Z18, (PC6), 64(PC6));                  \
	op(Z7, Z19, (PC6)(LDC*1), 64(PC6)(LDC*1))
#define TILE_ROWS8(op) \
	TILE_ROWS4(op); \
	TILE_ROWS4TO8(op)
#define TILE_ROWS(op) \
	TILE_ROWS8(op);                               \
	op(Z8, Z20, (PC6)(LDC*2), 64(PC6)(LDC*2));    \
	op(Z9, Z21, (PC9), 64(PC9));                  \
	op(Z10, Z22, (PC9)(LDC*1), 64(PC9)(LDC*1));   \
	op(Z11, Z23, (PC9)(LDC*2), 64(PC9)(LDC*2))

#define ROW_ZERO(L, R, ML, MR) \
	VPXORD L, L, L; \
	VPXORD R, R, R
#define ROW_PREFETCH(L, R, ML, MR) \
	PREFETCHT0 ML; \
	PREFETCHT0 MR
#define ROW_ADD(L, R, ML, MR) \
	VADDPS ML, L, L; \
	VADDPS MR, R, R
#define ROW_STORE(L, R, ML, MR) \
	VMOVUPS L, ML; \
	VMOVUPS R, MR

// The epilogue clamps (clamp512_amd64.h), with BR = +0, BL the upper
// bound and T0 scratch.
#define CLAMP_ZERO VPXORD BR, BR, BR
#define CLAMP_HI   VPBROADCASTD K, BL
#define ROW_RELU(L, R, ML, MR) \
	RELU512(L, BR); \
	RELU512(R, BR)
#define ROW_CLAMP(L, R, ML, MR) \
	CLAMP512(L, BR, BL, T0, K1); \
	CLAMP512(R, BR, BL, T0, K1)

TEXT ·gemmPanel12x32AVX512(SB), NOSPLIT, $0-64
	MOVQ tiles+0(FP), TILES
	MOVQ a+16(FP), PA       // A panels are back to back: PA runs on
	MOVQ b1+32(FP), DIST
	SUBQ b0+24(FP), DIST
	MOVQ c+40(FP), PC
	MOVQ ldc+48(FP), LDC
	MOVQ flags+56(FP), FLAGS
	SHLQ $2, LDC            // ldc in bytes

tile:
	MOVQ k+8(FP), K
	MOVQ b0+24(FP), PB
	LEAQ (LDC)(LDC*2), PC3  // 3*ldc bytes
	LEAQ (PC)(PC3*2), PC6   // C row 6
	LEAQ (PC6)(PC3*1), PC9  // C row 9
	ADDQ PC, PC3            // C row 3

	// Fetch the tile's C lines (two per row), so the write-back after
	// the k loop finds them in L1.
	TILE_ROWS(ROW_PREFETCH)
	TILE_ROWS(ROW_ZERO)

	MOVQ  K, K2
	SHRQ  $1, K2
	ANDQ  $1, K
	TESTQ K2, K2
	JZ    tail
	TESTQ $2, FLAGS
	JNZ   loop2pf
	TESTQ $4, FLAGS
	JNZ   loop2far

loop2:
	// Two steps per iteration (96 bytes of A); ask for the A panel's
	// lines 16 steps ahead; the B panels stay in L1.
	PREFETCHT0 768(PA)
	KSTEP(0)
	PREFETCHT0 832(PA)
	KSTEP(1)
	ADDQ $96, PA            // 2 steps × 12 floats
	ADDQ $128, PB           // 2 steps × 16 floats
	DECQ K2
	JNZ  loop2
	JMP  tail

loop2far:
	// As loop2 for an A streamed from memory (gemmPrefetchFar): 4 KiB
	// ahead (see gemm512_amd64.s).
	PREFETCHT0 4096(PA)
	KSTEP(0)
	PREFETCHT0 4160(PA)
	KSTEP(1)
	ADDQ $96, PA
	ADDQ $128, PB
	DECQ K2
	JNZ  loop2far
	JMP  tail

loop2pf:
	// As loop2, and fetch the matching lines of the next pair of B
	// panels (b0 + 2·DIST and b1 + 2·DIST: the GEMM's packed B, panels
	// back to back): where few row panels share a B panel it streams from
	// memory, and the hardware prefetcher brings it too late (as in
	// gemm512_amd64.s). Only the first tile does it.
	LEAQ (PB)(DIST*2), PN

loop2pfl:
	PREFETCHT0 768(PA)
	PREFETCHT0 (PN)
	PREFETCHT0 (PN)(DIST*1)
	KSTEP(0)
	PREFETCHT0 832(PA)
	PREFETCHT0 64(PN)
	PREFETCHT0 64(PN)(DIST*1)
	KSTEP(1)
	ADDQ $96, PA
	ADDQ $128, PB
	ADDQ $128, PN
	DECQ K2
	JNZ  loop2pfl

tail:
	TESTQ K, K
	JZ    store
	KSTEP(0)
	ADDQ  $48, PA

store:
	// Accumulate mode adds the old C; overwrite mode never reads it.
	TESTQ $1, FLAGS
	JZ    clamp
	TILE_ROWS(ROW_ADD)

clamp:
	TILE_CLAMP

write:
	TILE_ROWS(ROW_STORE)

	// The next tile: its C rows start 12 on, its A panel where PA is;
	// only the first tile prefetches the next pair of B panels.
	ANDQ $~2, FLAGS
	LEAQ (PC9)(LDC*2), PC
	ADDQ LDC, PC
	DECQ TILES
	JNZ  tile
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func gemmEdge32AVX512(rows, k int, a, b0, b1, c *float32, ldc int, flags uint)
// Rows 0-7 (rows = 8) or 0-3 (rows = 4) of gemmPanel12x32AVX512's tile
// from a 12-row A panel: the same FMAs in the same order, so the same
// bits; see gemm512w_amd64.go. One tile, no A prefetch.
// ---------------------------------------------------------------------

#define ROWS AX // 8 or 4 (TILES is not used here)

TEXT ·gemmEdge32AVX512(SB), NOSPLIT, $0-64
	MOVQ rows+0(FP), ROWS
	MOVQ k+8(FP), K
	MOVQ a+16(FP), PA
	MOVQ b0+24(FP), PB
	MOVQ b1+32(FP), DIST
	SUBQ PB, DIST
	MOVQ c+40(FP), PC
	MOVQ ldc+48(FP), LDC
	MOVQ flags+56(FP), FLAGS
	SHLQ $2, LDC            // ldc in bytes
	LEAQ (LDC)(LDC*2), PC3  // 3*ldc bytes
	LEAQ (PC)(PC3*2), PC6   // C row 6
	ADDQ PC, PC3            // C row 3
	TILE_ROWS8(ROW_ZERO)
	MOVQ K, K2
	SHRQ $1, K2
	ANDQ $1, K
	CMPQ ROWS, $8
	JEQ  edge8

edge4:
	// Two steps per iteration, then the last odd one.
	TESTQ K2, K2
	JZ    edge4Tail

edge4Loop:
	KSTEP4(0)
	KSTEP4(1)
	ADDQ $96, PA
	ADDQ $128, PB
	DECQ K2
	JNZ  edge4Loop

edge4Tail:
	TESTQ K, K
	JZ    edgeStore
	KSTEP4(0)
	JMP   edgeStore

edge8:
	TESTQ K2, K2
	JZ    edge8Tail

edge8Loop:
	KSTEP8(0)
	KSTEP8(1)
	ADDQ $96, PA
	ADDQ $128, PB
	DECQ K2
	JNZ  edge8Loop

edge8Tail:
	TESTQ K, K
	JZ    edgeStore
	KSTEP8(0)

edgeStore:
	// Accumulate mode adds the old C; overwrite mode never reads it.
	TESTQ $1, FLAGS
	JZ    edgeWrite
	TILE_ROWS4(ROW_ADD)
	CMPQ  ROWS, $8
	JNE   edgeWrite
	TILE_ROWS4TO8(ROW_ADD)

edgeWrite:
	TILE_ROWS4(ROW_STORE)
	CMPQ ROWS, $8
	JNE  edgeDone
	TILE_ROWS4TO8(ROW_STORE)

edgeDone:
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func gemmZip12x32AVX512(tiles, k int, a, b0, b1, out *float32, offs *int, d1 int, bias *float32, flags uint)
// gemmPanel12x32AVX512's tiles (the same FMAs in the same order, so the
// same sums) stored in row pairs, interleaved, straight into out (see
// GemmVariant.zip2 in gemm_zip.go): pair q of tile t, rows 12t+2q and
// 12t+2q+1, goes to out + offs[6t+q], columns 0-15 at floats 0-31 and
// 16-31 at d1 bytes on, its two rows' values alternating; flags bit 0
// adds the old values, bit 3 then adds bias[6t+q].
// ---------------------------------------------------------------------

#define OFFS  R8  // pair offsets (floats from out), 6 per tile
#define OUT   R10 // out
#define D1    R13 // columns 16-31's distance from 0-15, bytes
#define BIASP BX  // bias per pair, 6 per tile
#define DST   DX  // a pair's columns 0-15
#define DST1  R14 // and 16-31

// Interleaving indices (VPERMT2PS, the second table's lanes 16-31):
// zipLo takes lanes 0-7 of both, zipHi lanes 8-15.
DATA zipIdx<>+0(SB)/4, $0
DATA zipIdx<>+4(SB)/4, $16
DATA zipIdx<>+8(SB)/4, $1
DATA zipIdx<>+12(SB)/4, $17
DATA zipIdx<>+16(SB)/4, $2
DATA zipIdx<>+20(SB)/4, $18
DATA zipIdx<>+24(SB)/4, $3
DATA zipIdx<>+28(SB)/4, $19
DATA zipIdx<>+32(SB)/4, $4
DATA zipIdx<>+36(SB)/4, $20
DATA zipIdx<>+40(SB)/4, $5
DATA zipIdx<>+44(SB)/4, $21
DATA zipIdx<>+48(SB)/4, $6
DATA zipIdx<>+52(SB)/4, $22
DATA zipIdx<>+56(SB)/4, $7
DATA zipIdx<>+60(SB)/4, $23
DATA zipIdx<>+64(SB)/4, $8
DATA zipIdx<>+68(SB)/4, $24
DATA zipIdx<>+72(SB)/4, $9
DATA zipIdx<>+76(SB)/4, $25
DATA zipIdx<>+80(SB)/4, $10
DATA zipIdx<>+84(SB)/4, $26
DATA zipIdx<>+88(SB)/4, $11
DATA zipIdx<>+92(SB)/4, $27
DATA zipIdx<>+96(SB)/4, $12
DATA zipIdx<>+100(SB)/4, $28
DATA zipIdx<>+104(SB)/4, $13
DATA zipIdx<>+108(SB)/4, $29
DATA zipIdx<>+112(SB)/4, $14
DATA zipIdx<>+116(SB)/4, $30
DATA zipIdx<>+120(SB)/4, $15
DATA zipIdx<>+124(SB)/4, $31
GLOBL zipIdx<>(SB), RODATA|NOPTR, $128

// Accumulate and bias steps of a stored vector V at M (or none).
#define ZACC(V, M) VADDPS M, V, V
#define ZBIAS(V, M) VADDPS Z27, V, V
#define ZNONE(V, M)
#define ZBLOAD(q) VBROADCASTSS (4*q)(BIASP), Z27
#define ZNOLOAD(q)

// ZHALF(E, O, M, ACC, BIAS): rows E and O of 16 columns interleaved and
// stored at M and 64 bytes on. E is clobbered.
#define ZHALF(E, O, M, M64, ACC, BIAS) \
	VMOVAPS   E, Z24;    \
	VPERMT2PS O, Z30, Z24; \
	VPERMT2PS O, Z31, E; \
	ACC(Z24, M);         \
	ACC(E, M64);         \
	BIAS(Z24, M);        \
	BIAS(E, M64);        \
	VMOVUPS   Z24, M;    \
	VMOVUPS   E, M64

// ZPAIR(q, E, O, ER, OR, ACC, BIAS, BL) stores pair q of the tile (BL
// loads its bias into Z27, or nothing).
#define ZPAIR(q, E, O, ER, OR, ACC, BIAS, BL) \
	MOVQ (8*q)(OFFS), DST;                    \
	LEAQ (OUT)(DST*4), DST;                   \
	LEAQ (DST)(D1*1), DST1;                   \
	BL(q);                                    \
	ZHALF(E, O, (DST), 64(DST), ACC, BIAS);   \
	ZHALF(ER, OR, (DST1), 64(DST1), ACC, BIAS)

#define ZTILE(ACC, BIAS, BL) \
	ZPAIR(0, Z0, Z1, Z12, Z13, ACC, BIAS, BL);  \
	ZPAIR(1, Z2, Z3, Z14, Z15, ACC, BIAS, BL);  \
	ZPAIR(2, Z4, Z5, Z16, Z17, ACC, BIAS, BL);  \
	ZPAIR(3, Z6, Z7, Z18, Z19, ACC, BIAS, BL);  \
	ZPAIR(4, Z8, Z9, Z20, Z21, ACC, BIAS, BL);  \
	ZPAIR(5, Z10, Z11, Z22, Z23, ACC, BIAS, BL)

TEXT ·gemmZip12x32AVX512(SB), NOSPLIT, $0-80
	MOVQ      tiles+0(FP), TILES
	MOVQ      a+16(FP), PA
	MOVQ      b1+32(FP), DIST
	SUBQ      b0+24(FP), DIST
	MOVQ      out+40(FP), OUT
	MOVQ      offs+48(FP), OFFS
	MOVQ      d1+56(FP), D1
	MOVQ      bias+64(FP), BIASP
	MOVQ      flags+72(FP), FLAGS
	VMOVDQU32 zipIdx<>+0(SB), Z30
	VMOVDQU32 zipIdx<>+64(SB), Z31

ztile:
	MOVQ k+8(FP), K
	MOVQ b0+24(FP), PB
	TILE_ROWS(ROW_ZERO)
	MOVQ  K, K2
	SHRQ  $1, K2
	ANDQ  $1, K
	TESTQ K2, K2
	JZ    ztail
	TESTQ $2, FLAGS
	JNZ   zloop2pf

zloop2:
	PREFETCHT0 768(PA)
	KSTEP(0)
	PREFETCHT0 832(PA)
	KSTEP(1)
	ADDQ $96, PA
	ADDQ $128, PB
	DECQ K2
	JNZ  zloop2
	JMP  ztail

zloop2pf:
	// As gemmPanel12x32AVX512's loop2pf: the first tile fetches the
	// next pair of B panels.
	LEAQ (PB)(DIST*2), DST

zloop2pfl:
	PREFETCHT0 768(PA)
	PREFETCHT0 (DST)
	PREFETCHT0 (DST)(DIST*1)
	KSTEP(0)
	PREFETCHT0 832(PA)
	PREFETCHT0 64(DST)
	PREFETCHT0 64(DST)(DIST*1)
	KSTEP(1)
	ADDQ $96, PA
	ADDQ $128, PB
	ADDQ $128, DST
	DECQ K2
	JNZ  zloop2pfl

ztail:
	TESTQ K, K
	JZ    zstore
	KSTEP(0)
	ADDQ  $48, PA

zstore:
	// Four stores, one per combination of the accumulate and bias bits.
	TESTQ $1, FLAGS
	JNZ   zacc
	TESTQ $8, FLAGS
	JNZ   zbias
	ZTILE(ZNONE, ZNONE, ZNOLOAD)
	JMP   znext

zbias:
	ZTILE(ZNONE, ZBIAS, ZBLOAD)
	JMP znext

zacc:
	TESTQ $8, FLAGS
	JNZ   zaccbias
	ZTILE(ZACC, ZNONE, ZNOLOAD)
	JMP   znext

zaccbias:
	ZTILE(ZACC, ZBIAS, ZBLOAD)

znext:
	ANDQ $~2, FLAGS // only the first tile prefetches
	ADDQ $48, OFFS  // 6 pairs × 8 bytes
	ADDQ $24, BIASP // 6 pairs × 4 bytes
	DECQ TILES
	JNZ  ztile
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func gemmZipEdge32AVX512(rows, k int, a, b0, b1, out *float32, offs *int, d1 int, bias *float32, flags uint)
// Rows 0-7 (rows = 8) or 0-3 (rows = 4) of one gemmZip12x32AVX512 tile:
// gemmEdge32AVX512's sums stored as the zip kernel stores them (pairs
// 0-3 or 0-1). One tile, no prefetch.
// ---------------------------------------------------------------------

// ZTILE4 and ZTILE4TO8 store pairs 0-1 and 2-3.
#define ZTILE4(ACC, BIAS, BL) \
	ZPAIR(0, Z0, Z1, Z12, Z13, ACC, BIAS, BL);  \
	ZPAIR(1, Z2, Z3, Z14, Z15, ACC, BIAS, BL)
#define ZTILE4TO8(ACC, BIAS, BL) \
	ZPAIR(2, Z4, Z5, Z16, Z17, ACC, BIAS, BL);  \
	ZPAIR(3, Z6, Z7, Z18, Z19, ACC, BIAS, BL)

TEXT ·gemmZipEdge32AVX512(SB), NOSPLIT, $0-80
	MOVQ      rows+0(FP), ROWS
	MOVQ      k+8(FP), K
	MOVQ      a+16(FP), PA
	MOVQ      b0+24(FP), PB
	MOVQ      b1+32(FP), DIST
	SUBQ      PB, DIST
	MOVQ      out+40(FP), OUT
	MOVQ      offs+48(FP), OFFS
	MOVQ      d1+56(FP), D1
	MOVQ      bias+64(FP), BIASP
	MOVQ      flags+72(FP), FLAGS
	VMOVDQU32 zipIdx<>+0(SB), Z30
	VMOVDQU32 zipIdx<>+64(SB), Z31
	TILE_ROWS8(ROW_ZERO)
	MOVQ      K, K2
	SHRQ      $1, K2
	ANDQ      $1, K
	CMPQ      ROWS, $8
	JEQ       zedge8
	TESTQ     K2, K2
	JZ        zedge4Tail

zedge4Loop:
	KSTEP4(0)
	KSTEP4(1)
	ADDQ $96, PA
	ADDQ $128, PB
	DECQ K2
	JNZ  zedge4Loop

zedge4Tail:
	TESTQ K, K
	JZ    zedgeStore
	KSTEP4(0)
	JMP   zedgeStore

zedge8:
	TESTQ K2, K2
	JZ    zedge8Tail

zedge8Loop:
	KSTEP8(0)
	KSTEP8(1)
	ADDQ $96, PA
	ADDQ $128, PB
	DECQ K2
	JNZ  zedge8Loop

zedge8Tail:
	TESTQ K, K
	JZ    zedgeStore
	KSTEP8(0)

zedgeStore:
	// As the zip kernel: one store sequence per combination of the
	// accumulate and bias bits, pairs 2-3 only for eight rows.
	TESTQ $1, FLAGS
	JNZ   zeacc
	TESTQ $8, FLAGS
	JNZ   zebias
	ZTILE4(ZNONE, ZNONE, ZNOLOAD)
	CMPQ  ROWS, $8
	JNE   zedone
	ZTILE4TO8(ZNONE, ZNONE, ZNOLOAD)
	JMP   zedone

zebias:
	ZTILE4(ZNONE, ZBIAS, ZBLOAD)
	CMPQ ROWS, $8
	JNE  zedone
	ZTILE4TO8(ZNONE, ZBIAS, ZBLOAD)
	JMP  zedone

zeacc:
	TESTQ $8, FLAGS
	JNZ   zeaccbias
	ZTILE4(ZACC, ZNONE, ZNOLOAD)
	CMPQ  ROWS, $8
	JNE   zedone
	ZTILE4TO8(ZACC, ZNONE, ZNOLOAD)
	JMP   zedone

zeaccbias:
	ZTILE4(ZACC, ZBIAS, ZBLOAD)
	CMPQ ROWS, $8
	JNE  zedone
	ZTILE4TO8(ZACC, ZBIAS, ZBLOAD)

zedone:
	VZEROUPPER
	RET
