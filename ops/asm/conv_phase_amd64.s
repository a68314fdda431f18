//go:build amd64 && !purego

#include "textflag.h"
#include "clamp512_amd64.h"

// ---------------------------------------------------------------------
// func convPhase12x32AVX512(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int, masks *uint64, flags uint)
// Tiles of up to twelve channel rows by two sixteen-position segments
// of one stride-2 phase of a transposed convolution (conv_phase.go).
// Tile t reads its segments from x + tiles[6t] and x + tiles[6t+1] and
// writes them from o + tiles[6t+2] and o + tiles[6t+3] (floats). Each
// step loads both segments' sixteen inputs straight from the input
// through the step's offset and multiplies them by the step's rows A
// values (broadcast once, two FMAs each: 24 accumulators). With masks,
// segment u's loads at step q keep only the lanes of the opmask
// masks[tiles[6t+4+u] + q] (zeros elsewhere: the input's edges, read
// in place, where a padded copy had zeros). The sums, started from the
// bias, are stored every other float (a permute spreads a vector's
// halves over two, an opmask keeps the even lanes), so the two column
// phases of one output row interleave in place (store = phaseSpread, 0).
// With phasePairs (1), rows 2c and 2c+1 are one channel's two column
// phases: their sums interleave in registers (two-table permutes) and
// store as whole vectors, 32 floats a segment from o + tiles[6t+2+u] +
// c·ldo. With phaseWhole (2) each row's vectors store as they are, 16
// floats a segment from o + tiles[6t+2+u] + r·ldo (a stride-1
// convolution's output rows), through the GEMM kernels' clamp with
// gemmRelu (8) or gemmClamp (16, the bound in the flags' upper half).
// The store is the flags' low two bits; with phaseFetchOut (32) each
// tile first fetches the next tile's output lines for writing.
// ---------------------------------------------------------------------

// In the steps' loop:
#define ROWS  AX  // rows computed: 4, 8 or 12
#define K     CX  // steps left
#define PA    SI  // A: ROWS floats a step
#define X0    DI  // segment 0's inputs
#define X1    R11 // segment 1's
#define POFF  R12 // the steps' offsets, in floats
#define OFF   R13 // this step's offset
#define PT    R14 // this tile's four offsets (the count left is ntiles's slot)
#define XN0   R9  // the next tile's segment 0 inputs, fetched ahead
#define XN1   R10 // and segment 1's
// In the tile's start and stores:
#define N    BX  // rows left to store
#define P0   R8  // segment 0's output row
#define P1   R9  // segment 1's
#define LDO  R10 // output row stride in bytes
#define BIAS DX
// In the masked steps' loop: each segment's masks less the offsets'
// address, so that (PMu)(POFF*1) is the step's mask.
#define PM0 BX
#define PM1 R8

// Accumulators: row r's segment 0 in Zr, segment 1 in Z(12+r).
#define BL Z24 // the step's segment 0 inputs
#define BR Z25 // and segment 1's
#define T0 Z26
#define T1 Z27
#define T2 Z28
#define T3 Z29

// ROW(r, T, CL, CR): broadcast the step's A value r once and multiply it
// into both segments of row r.
#define ROW(r, T, CL, CR) \
	VBROADCASTSS (4*r)(PA), T; \
	VFMADD231PS  T, BL, CL;    \
	VFMADD231PS  T, BR, CR

#define LOAD_STEP \
	MOVQ       (POFF), OFF;       \
	VMOVUPS    (X0)(OFF*4), BL;   \
	VMOVUPS    (X1)(OFF*4), BR;   \
	PREFETCHT0 (XN0)(OFF*4);      \
	PREFETCHT0 (XN1)(OFF*4)

#define LOAD_STEP_MASKED \
	MOVQ       (POFF), OFF;           \
	KMOVW      (PM0)(POFF*1), K2;     \
	KMOVW      (PM1)(POFF*1), K3;     \
	VMOVUPS.Z  (X0)(OFF*4), K2, BL;   \
	VMOVUPS.Z  (X1)(OFF*4), K3, BR;   \
	PREFETCHT0 (XN0)(OFF*4);          \
	PREFETCHT0 (XN1)(OFF*4)

// SET_MASKS points PM0 and PM1 at this tile's masks (DX is free).
#define SET_MASKS \
	MOVQ masks+88(FP), PM0;    \
	MOVQ off+40(FP), DX;       \
	SUBQ DX, PM0;              \
	MOVQ 40(PT), OFF;          \
	LEAQ (PM0)(OFF*8), PM1;    \
	MOVQ 32(PT), OFF;          \
	LEAQ (PM0)(OFF*8), PM0

#define STEP4 \
	ROW(0, T0, Z0, Z12); \
	ROW(1, T1, Z1, Z13); \
	ROW(2, T2, Z2, Z14); \
	ROW(3, T3, Z3, Z15)
#define STEP4TO8 \
	ROW(4, T0, Z4, Z16); \
	ROW(5, T1, Z5, Z17); \
	ROW(6, T2, Z6, Z18); \
	ROW(7, T3, Z7, Z19)
#define STEP8TO12 \
	ROW(8, T0, Z8, Z20);   \
	ROW(9, T1, Z9, Z21);   \
	ROW(10, T2, Z10, Z22); \
	ROW(11, T3, Z11, Z23)

// INIT(r, CL, CR): both segments of row r start at bias[r].
#define INIT(r, CL, CR) \
	VBROADCASTSS (4*r)(BIAS), CL; \
	VMOVAPS      CL, CR

// STORE(CL, CR): row CL/CR's sums every other float from P0 and P1,
// then the next row; after the last stored row, the next tile.
#define STORE(CL, CR) \
	VPERMPS CL, Z30, T0;      \
	VPERMPS CL, Z31, T1;      \
	VPERMPS CR, Z30, T2;      \
	VPERMPS CR, Z31, T3;      \
	VMOVUPS T0, K1, (P0);     \
	VMOVUPS T1, K1, 64(P0);   \
	VMOVUPS T2, K1, (P1);     \
	VMOVUPS T3, K1, 64(P1);   \
	ADDQ    LDO, P0;          \
	ADDQ    LDO, P1;          \
	DECQ    N;                \
	JZ      nextTile

// STORE_PAIR(EL, ER, OL, OR): a channel's even-column sums EL/ER (its
// two segments) and odd-column sums OL/OR interleaved (Z30/Z31 hold
// phaseZip) into 32 floats from P0 and from P1, then the next channel.
#define STORE_PAIR(EL, ER, OL, OR) \
	VMOVAPS   Z30, T0;     \
	VPERMI2PS OL, EL, T0;  \
	VMOVAPS   Z31, T1;     \
	VPERMI2PS OL, EL, T1;  \
	VMOVAPS   Z30, T2;     \
	VPERMI2PS OR, ER, T2;  \
	VMOVAPS   Z31, T3;     \
	VPERMI2PS OR, ER, T3;  \
	VMOVUPS   T0, (P0);    \
	VMOVUPS   T1, 64(P0);  \
	VMOVUPS   T2, (P1);    \
	VMOVUPS   T3, 64(P1);  \
	ADDQ      LDO, P0;     \
	ADDQ      LDO, P1;     \
	DECQ      N;           \
	JZ        nextTile

// STORE_WHOLE(CL, CR, OP, OPR): row CL/CR's sums through OP(CL), OPR(CR)
// at P0 and P1, then the next row. The OPs: none (a no-op move, as an
// OP must expand to an instruction), the ReLU with Z30 = +0, the clamp
// to [+0, Z31] with T0 and K2 as scratch (clamp512_amd64.h).
#define STORE_WHOLE(CL, CR, OP, OPR) \
	OP;               \
	OPR;              \
	VMOVUPS CL, (P0); \
	VMOVUPS CR, (P1); \
	ADDQ    LDO, P0;  \
	ADDQ    LDO, P1;  \
	DECQ    N;        \
	JZ      nextTile

#define WHOLE_PLAIN(X) MOVQ CX, CX
#define WHOLE_RELU(X)  RELU512(X, Z30)
#define WHOLE_CLAMP(X) CLAMP512(X, Z30, Z31, T0, K2)

// STORE_WHOLE_ROWS(OPM): every row through OPM.
#define STORE_WHOLE_ROWS(OPM) \
	STORE_WHOLE(Z0, Z12, OPM(Z0), OPM(Z12));  \
	STORE_WHOLE(Z1, Z13, OPM(Z1), OPM(Z13));  \
	STORE_WHOLE(Z2, Z14, OPM(Z2), OPM(Z14));  \
	STORE_WHOLE(Z3, Z15, OPM(Z3), OPM(Z15));  \
	STORE_WHOLE(Z4, Z16, OPM(Z4), OPM(Z16));  \
	STORE_WHOLE(Z5, Z17, OPM(Z5), OPM(Z17));  \
	STORE_WHOLE(Z6, Z18, OPM(Z6), OPM(Z18));  \
	STORE_WHOLE(Z7, Z19, OPM(Z7), OPM(Z19));  \
	STORE_WHOLE(Z8, Z20, OPM(Z8), OPM(Z20));  \
	STORE_WHOLE(Z9, Z21, OPM(Z9), OPM(Z21));  \
	STORE_WHOLE(Z10, Z22, OPM(Z10), OPM(Z22)); \
	STORE_WHOLE(Z11, Z23, OPM(Z11), OPM(Z23))

// TILE_OUT(o0, o1, R0, R1, T, LD): R0 and R1 = the output addresses of
// the segments whose offsets sit at o0(PT) and o1(PT) (this tile's
// at 16 and 24, the next one's at 64 and 72), LD = the row stride in
// bytes; T is scratch (LD may be T).
#define TILE_OUT(o0, o1, R0, R1, T, LD) \
	MOVQ o+56(FP), R1;      \
	MOVQ o0(PT), T;         \
	LEAQ (R1)(T*4), R0;     \
	MOVQ o1(PT), T;         \
	LEAQ (R1)(T*4), R1;     \
	MOVQ ldo+64(FP), LD;    \
	SHLQ $2, LD

TEXT ·convPhase12x32AVX512(SB), NOSPLIT, $0-104
	MOVQ      rows+0(FP), ROWS
	MOVQ      tiles+72(FP), PT
	MOVQ      flags+96(FP), OFF
	ANDQ      $3, OFF
	CMPQ      OFF, $2
	JEQ       whole
	VMOVDQU32 phaseSpread<>+0(SB), Z30
	VMOVDQU32 phaseSpread<>+64(SB), Z31
	CMPQ      OFF, $1
	JNE       spread
	VMOVDQU32 phaseZip<>+0(SB), Z30
	VMOVDQU32 phaseZip<>+64(SB), Z31

	JMP       spread

whole:
	// Z30 = +0, Z31 = the clamp's bound (the spread tables are not used)
	VPXORD       Z30, Z30, Z30
	MOVQ         flags+96(FP), OFF
	SHRQ         $32, OFF
	VPBROADCASTD OFF, Z31

spread:
	MOVL      $0x5555, OFF
	KMOVW     OFF, K1 // the even lanes

tile:
	MOVQ k+16(FP), K
	MOVQ a+24(FP), PA
	MOVQ x+32(FP), X1
	MOVQ (PT), OFF
	LEAQ (X1)(OFF*4), X0
	MOVQ 8(PT), OFF
	LEAQ (X1)(OFF*4), X1
	MOVQ off+40(FP), POFF
	// With phaseFetchOut, fetch the next tile's output lines for
	// writing: each row's segments' first lines and the second's last
	// (a segment's second line where they are adjacent, as along a row).
	// Go's assembler has no PREFETCHW (0F 0D /1): its bytes.
	MOVQ  flags+96(FP), OFF
	TESTQ $32, OFF
	JZ    nopfw
	TILE_OUT(64, 72, BX, R8, DX, DX)
	MOVQ  n+8(FP), OFF
pfw:
	BYTE $0x0F; BYTE $0x0D; BYTE $0x0B                         // prefetchw (%rbx)
	BYTE $0x41; BYTE $0x0F; BYTE $0x0D; BYTE $0x08             // prefetchw (%r8)
	BYTE $0x41; BYTE $0x0F; BYTE $0x0D; BYTE $0x48; BYTE $0x3C // prefetchw 0x3c(%r8)
	ADDQ  DX, BX
	ADDQ  DX, R8
	DECQ  OFF
	JNZ   pfw
nopfw:
	MOVQ bias+48(FP), BIAS
	// (Without phaseFetchOut, as a transposed convolution's phases run,
	// the next tile's output rows are not fetched ahead: fetching its
	// twelve rows' lines here cost the 3×3 decoder and U-Net steps 1-3%
	// at one thread, Zen 5; the stores find them soon enough.)
	MOVQ x+32(FP), XN1 // the table holds a tile past the last: itself again
	MOVQ 48(PT), OFF
	LEAQ (XN1)(OFF*4), XN0
	MOVQ 56(PT), OFF
	LEAQ (XN1)(OFF*4), XN1
	INIT(0, Z0, Z12)
	INIT(1, Z1, Z13)
	INIT(2, Z2, Z14)
	INIT(3, Z3, Z15)
	CMPQ ROWS, $4
	JEQ  initialised
	INIT(4, Z4, Z16)
	INIT(5, Z5, Z17)
	INIT(6, Z6, Z18)
	INIT(7, Z7, Z19)
	CMPQ ROWS, $8
	JEQ  initialised
	INIT(8, Z8, Z20)
	INIT(9, Z9, Z21)
	INIT(10, Z10, Z22)
	INIT(11, Z11, Z23)

initialised:
	CMPQ masks+88(FP), $0
	JNE  masked
	CMPQ ROWS, $8
	JEQ  loop8
	JLT  loop4

loop12:
	LOAD_STEP
	STEP4
	STEP4TO8
	STEP8TO12
	ADDQ $8, POFF
	ADDQ $48, PA
	DECQ K
	JNZ  loop12
	JMP  store

loop8:
	LOAD_STEP
	STEP4
	STEP4TO8
	ADDQ $8, POFF
	ADDQ $32, PA
	DECQ K
	JNZ  loop8
	JMP  store

loop4:
	LOAD_STEP
	STEP4
	ADDQ $8, POFF
	ADDQ $16, PA
	DECQ K
	JNZ  loop4
	JMP  store

masked:
	SET_MASKS
	CMPQ ROWS, $8
	JEQ  loop8m
	JLT  loop4m

loop12m:
	LOAD_STEP_MASKED
	STEP4
	STEP4TO8
	STEP8TO12
	ADDQ $8, POFF
	ADDQ $48, PA
	DECQ K
	JNZ  loop12m
	JMP  store

loop8m:
	LOAD_STEP_MASKED
	STEP4
	STEP4TO8
	ADDQ $8, POFF
	ADDQ $32, PA
	DECQ K
	JNZ  loop8m
	JMP  store

loop4m:
	LOAD_STEP_MASKED
	STEP4
	ADDQ $8, POFF
	ADDQ $16, PA
	DECQ K
	JNZ  loop4m

store:
	MOVQ n+8(FP), N
	TILE_OUT(16, 24, P0, P1, OFF, LDO)
	MOVQ  flags+96(FP), OFF
	TESTQ $2, OFF
	JNZ   storeWhole
	TESTQ $1, OFF
	JNZ   storePairs
	STORE(Z0, Z12)
	STORE(Z1, Z13)
	STORE(Z2, Z14)
	STORE(Z3, Z15)
	STORE(Z4, Z16)
	STORE(Z5, Z17)
	STORE(Z6, Z18)
	STORE(Z7, Z19)
	STORE(Z8, Z20)
	STORE(Z9, Z21)
	STORE(Z10, Z22)
	STORE(Z11, Z23)
	JMP nextTile

storePairs:
	SHRQ $1, N // channels
	STORE_PAIR(Z0, Z12, Z1, Z13)
	STORE_PAIR(Z2, Z14, Z3, Z15)
	STORE_PAIR(Z4, Z16, Z5, Z17)
	STORE_PAIR(Z6, Z18, Z7, Z19)
	STORE_PAIR(Z8, Z20, Z9, Z21)
	STORE_PAIR(Z10, Z22, Z11, Z23)
	JMP nextTile

storeWhole:
	TESTQ $8, OFF
	JNZ   storeRelu
	TESTQ $16, OFF
	JNZ   storeClamp
	STORE_WHOLE_ROWS(WHOLE_PLAIN)
	JMP nextTile

storeRelu:
	STORE_WHOLE_ROWS(WHOLE_RELU)
	JMP nextTile

storeClamp:
	STORE_WHOLE_ROWS(WHOLE_CLAMP)

nextTile:
	ADDQ $48, PT
	DECQ ntiles+80(FP)
	JNZ  tile
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func convPhase24x16AVX512(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int, masks *uint64)
// The one-segment twin of convPhase12x32AVX512, for planes of one
// segment (a generator's 4×4 input): tiles of up to 24 channel rows (16
// or 24) by the tile's first segment only, 24 accumulators, each step's
// A values broadcast inside their FMAs (one FMA each). Same arguments
// and tile table (the second segment's offsets are not read but for the
// fetch ahead; with masks its first class's masks clear lanes as there).
// ---------------------------------------------------------------------

#define FMA1(r, C) VFMADD231PS.BCST (4*r)(PA), BL, C

#define PF_ROW1 \
	PREFETCHT0 (R8);    \
	PREFETCHT0 62(R8);  \
	PREFETCHT0 123(R8); \
	ADDQ       R9, R8

#define PF_ROWS8 \
	PF_ROW1; \
	PF_ROW1; \
	PF_ROW1; \
	PF_ROW1; \
	PF_ROW1; \
	PF_ROW1; \
	PF_ROW1; \
	PF_ROW1

#define INIT1(r, C) VBROADCASTSS (4*r)(BIAS), C

// STORE1(C): row C's sums every other float from P0, then the next row;
// after the last stored row, the next tile.
#define STORE1(C) \
	VPERMPS C, Z30, T0;   \
	VPERMPS C, Z31, T1;   \
	VMOVUPS T0, K1, (P0); \
	VMOVUPS T1, K1, 64(P0); \
	ADDQ    LDO, P0;      \
	DECQ    N;            \
	JZ      nextTile1

// FMA8_r: rows r..r+7 (accumulators Zr..Z(r+7)).
#define FMA8_0 \
	FMA1(0, Z0); \
	FMA1(1, Z1); \
	FMA1(2, Z2); \
	FMA1(3, Z3); \
	FMA1(4, Z4); \
	FMA1(5, Z5); \
	FMA1(6, Z6); \
	FMA1(7, Z7)
#define FMA8_8 \
	FMA1(8, Z8);   \
	FMA1(9, Z9);   \
	FMA1(10, Z10); \
	FMA1(11, Z11); \
	FMA1(12, Z12); \
	FMA1(13, Z13); \
	FMA1(14, Z14); \
	FMA1(15, Z15)
#define FMA8_16 \
	FMA1(16, Z16); \
	FMA1(17, Z17); \
	FMA1(18, Z18); \
	FMA1(19, Z19); \
	FMA1(20, Z20); \
	FMA1(21, Z21); \
	FMA1(22, Z22); \
	FMA1(23, Z23)

#define LOAD_STEP1 \
	MOVQ       (POFF), OFF;     \
	VMOVUPS    (X0)(OFF*4), BL; \
	PREFETCHT0 (XN0)(OFF*4)

#define LOAD_STEP1_MASKED \
	MOVQ       (POFF), OFF;         \
	KMOVW      (PM0)(POFF*1), K2;   \
	VMOVUPS.Z  (X0)(OFF*4), K2, BL; \
	PREFETCHT0 (XN0)(OFF*4)

TEXT ·convPhase24x16AVX512(SB), NOSPLIT, $0-96
	MOVQ      rows+0(FP), ROWS
	MOVQ      tiles+72(FP), PT
	VMOVDQU32 phaseSpread<>+0(SB), Z30
	VMOVDQU32 phaseSpread<>+64(SB), Z31
	MOVL      $0x5555, OFF
	KMOVW     OFF, K1 // the even lanes

tile1:
	MOVQ k+16(FP), K
	MOVQ a+24(FP), PA
	MOVQ x+32(FP), X0
	MOVQ (PT), OFF
	LEAQ (X0)(OFF*4), X0
	MOVQ off+40(FP), POFF
	MOVQ bias+48(FP), BIAS
	// The next tile's output rows, fetched while this tile computes.
	MOVQ o+56(FP), R8
	MOVQ 64(PT), OFF
	LEAQ (R8)(OFF*4), R8
	MOVQ ldo+64(FP), R9
	SHLQ $2, R9
	PF_ROWS8
	PF_ROWS8
	PF_ROWS8
	MOVQ x+32(FP), XN0 // the table holds a tile past the last: itself again
	MOVQ 48(PT), OFF
	LEAQ (XN0)(OFF*4), XN0
	INIT1(0, Z0)
	INIT1(1, Z1)
	INIT1(2, Z2)
	INIT1(3, Z3)
	INIT1(4, Z4)
	INIT1(5, Z5)
	INIT1(6, Z6)
	INIT1(7, Z7)
	INIT1(8, Z8)
	INIT1(9, Z9)
	INIT1(10, Z10)
	INIT1(11, Z11)
	INIT1(12, Z12)
	INIT1(13, Z13)
	INIT1(14, Z14)
	INIT1(15, Z15)
	CMPQ ROWS, $16
	JEQ  initialised1
	INIT1(16, Z16)
	INIT1(17, Z17)
	INIT1(18, Z18)
	INIT1(19, Z19)
	INIT1(20, Z20)
	INIT1(21, Z21)
	INIT1(22, Z22)
	INIT1(23, Z23)

initialised1:
	CMPQ masks+88(FP), $0
	JNE  masked1
	CMPQ ROWS, $16
	JEQ  loop16x1

loop24x1:
	LOAD_STEP1
	FMA8_0
	FMA8_8
	FMA8_16
	ADDQ $8, POFF
	ADDQ $96, PA
	DECQ K
	JNZ  loop24x1
	JMP  store1

loop16x1:
	LOAD_STEP1
	FMA8_0
	FMA8_8
	ADDQ $8, POFF
	ADDQ $64, PA
	DECQ K
	JNZ  loop16x1
	JMP  store1

masked1:
	SET_MASKS
	CMPQ ROWS, $16
	JEQ  loop16x1m

loop24x1m:
	LOAD_STEP1_MASKED
	FMA8_0
	FMA8_8
	FMA8_16
	ADDQ $8, POFF
	ADDQ $96, PA
	DECQ K
	JNZ  loop24x1m
	JMP  store1

loop16x1m:
	LOAD_STEP1_MASKED
	FMA8_0
	FMA8_8
	ADDQ $8, POFF
	ADDQ $64, PA
	DECQ K
	JNZ  loop16x1m

store1:
	MOVQ n+8(FP), N
	MOVQ o+56(FP), P0
	MOVQ 16(PT), OFF
	LEAQ (P0)(OFF*4), P0
	MOVQ ldo+64(FP), LDO
	SHLQ $2, LDO
	STORE1(Z0)
	STORE1(Z1)
	STORE1(Z2)
	STORE1(Z3)
	STORE1(Z4)
	STORE1(Z5)
	STORE1(Z6)
	STORE1(Z7)
	STORE1(Z8)
	STORE1(Z9)
	STORE1(Z10)
	STORE1(Z11)
	STORE1(Z12)
	STORE1(Z13)
	STORE1(Z14)
	STORE1(Z15)
	STORE1(Z16)
	STORE1(Z17)
	STORE1(Z18)
	STORE1(Z19)
	STORE1(Z20)
	STORE1(Z21)
	STORE1(Z22)
	STORE1(Z23)

nextTile1:
	ADDQ $48, PT
	DECQ ntiles+80(FP)
	JNZ  tile1
	VZEROUPPER
	RET

// phaseSpread: lane 2i and 2i+1 take float i (the first vector) and
// float 8+i (the second) of a segment's sums.
DATA phaseSpread<>+0(SB)/4, $0
DATA phaseSpread<>+4(SB)/4, $0
DATA phaseSpread<>+8(SB)/4, $1
DATA phaseSpread<>+12(SB)/4, $1
DATA phaseSpread<>+16(SB)/4, $2
DATA phaseSpread<>+20(SB)/4, $2
DATA phaseSpread<>+24(SB)/4, $3
DATA phaseSpread<>+28(SB)/4, $3
DATA phaseSpread<>+32(SB)/4, $4
DATA phaseSpread<>+36(SB)/4, $4
DATA phaseSpread<>+40(SB)/4, $5
DATA phaseSpread<>+44(SB)/4, $5
DATA phaseSpread<>+48(SB)/4, $6
DATA phaseSpread<>+52(SB)/4, $6
DATA phaseSpread<>+56(SB)/4, $7
DATA phaseSpread<>+60(SB)/4, $7
DATA phaseSpread<>+64(SB)/4, $8
DATA phaseSpread<>+68(SB)/4, $8
DATA phaseSpread<>+72(SB)/4, $9
DATA phaseSpread<>+76(SB)/4, $9
DATA phaseSpread<>+80(SB)/4, $10
DATA phaseSpread<>+84(SB)/4, $10
DATA phaseSpread<>+88(SB)/4, $11
DATA phaseSpread<>+92(SB)/4, $11
DATA phaseSpread<>+96(SB)/4, $12
DATA phaseSpread<>+100(SB)/4, $12
DATA phaseSpread<>+104(SB)/4, $13
DATA phaseSpread<>+108(SB)/4, $13
DATA phaseSpread<>+112(SB)/4, $14
DATA phaseSpread<>+116(SB)/4, $14
DATA phaseSpread<>+120(SB)/4, $15
DATA phaseSpread<>+124(SB)/4, $15
GLOBL phaseSpread<>(SB), RODATA|NOPTR, $128

// phaseZip: lanes 2i and 2i+1 take float i of the first table and of the
// second (the first vector), then floats 8+i (the second vector).
DATA phaseZip<>+0(SB)/4, $0
DATA phaseZip<>+4(SB)/4, $16
DATA phaseZip<>+8(SB)/4, $1
DATA phaseZip<>+12(SB)/4, $17
DATA phaseZip<>+16(SB)/4, $2
DATA phaseZip<>+20(SB)/4, $18
DATA phaseZip<>+24(SB)/4, $3
DATA phaseZip<>+28(SB)/4, $19
DATA phaseZip<>+32(SB)/4, $4
DATA phaseZip<>+36(SB)/4, $20
DATA phaseZip<>+40(SB)/4, $5
DATA phaseZip<>+44(SB)/4, $21
DATA phaseZip<>+48(SB)/4, $6
DATA phaseZip<>+52(SB)/4, $22
DATA phaseZip<>+56(SB)/4, $7
DATA phaseZip<>+60(SB)/4, $23
DATA phaseZip<>+64(SB)/4, $8
DATA phaseZip<>+68(SB)/4, $24
DATA phaseZip<>+72(SB)/4, $9
DATA phaseZip<>+76(SB)/4, $25
DATA phaseZip<>+80(SB)/4, $10
DATA phaseZip<>+84(SB)/4, $26
DATA phaseZip<>+88(SB)/4, $11
DATA phaseZip<>+92(SB)/4, $27
DATA phaseZip<>+96(SB)/4, $12
DATA phaseZip<>+100(SB)/4, $28
DATA phaseZip<>+104(SB)/4, $13
DATA phaseZip<>+108(SB)/4, $29
DATA phaseZip<>+112(SB)/4, $14
DATA phaseZip<>+116(SB)/4, $30
DATA phaseZip<>+120(SB)/4, $15
DATA phaseZip<>+124(SB)/4, $31
GLOBL phaseZip<>(SB), RODATA|NOPTR, $128
