//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func gemmZip6x16AVX2(tiles, k int, a, b, out *float32, offs *int, bias *float32, flags uint)
// gemmPanel6x16AVX2's tiles (the same FMAs in the same order, so the
// same sums) stored in row pairs, interleaved, straight into out (see
// GemmVariant.zip1 in gemm_zip.go): pair q of tile t, rows 6t+2q and
// 6t+2q+1, goes to floats 0-31 at out + offs[3t+q], its two rows'
// values alternating; flags bit 0 adds the old values, bit 3 then adds
// bias[3t+q].
// ---------------------------------------------------------------------

#define K     CX  // steps of k left
#define PA    SI  // packed A: 6 floats (24 bytes) per step
#define PB    DI  // packed B: 16 floats (64 bytes) per step
#define DST   DX  // the pair's outputs
#define OFFS  R8  // pair offsets (floats from out), 3 per tile
#define FLAGS R9
#define OUT   R10
#define K4    R11 // groups of four steps
#define BIASP R12 // bias per pair, 3 per tile
#define TILES AX

#include "gemm_kstep6_amd64.h"

// Accumulate and bias steps of a stored vector V at M (or none); the
// bias is broadcast into A0 by ZBLOAD.
#define ZACC(V, M) VADDPS M, V, V
#define ZBIAS(V) VADDPS A0, V, V
#define ZNONE(V, M)
#define ZNONE1(V)
#define ZBLOAD(q) VBROADCASTSS (4*q)(BIASP), A0
#define ZNOLOAD(q)

// ZQUARTER(E, O, M, ACC, BIAS): eight columns of rows E and O
// interleaved into sixteen outputs at M and 32 bytes on. A1 is free.
#define ZQUARTER(E, O, M, M32, ACC, BIAS) \
	VUNPCKLPS  O, E, B0;            \
	VUNPCKHPS  O, E, A1;            \
	VPERM2F128 $0x20, A1, B0, B1;   \
	VPERM2F128 $0x31, A1, B0, B0;   \
	ACC(B1, M);                     \
	ACC(B0, M32);                   \
	BIAS(B1);                       \
	BIAS(B0);                       \
	VMOVUPS    B1, M;               \
	VMOVUPS    B0, M32

#define ZPAIR(q, E0, E1, O0, O1, ACC, BIAS, BL) \
	MOVQ (8*q)(OFFS), DST;                        \
	LEAQ (OUT)(DST*4), DST;                       \
	BL(q);                                        \
	ZQUARTER(E0, O0, (DST), 32(DST), ACC, BIAS);  \
	ZQUARTER(E1, O1, 64(DST), 96(DST), ACC, BIAS)

#define ZTILE(ACC, BIAS, BL) \
	ZPAIR(0, C00, C01, C10, C11, ACC, BIAS, BL); \
	ZPAIR(1, C20, C21, C30, C31, ACC, BIAS, BL); \
	ZPAIR(2, C40, C41, C50, C51, ACC, BIAS, BL)

TEXT ·gemmZip6x16AVX2(SB), NOSPLIT, $0-64
	MOVQ tiles+0(FP), TILES
	MOVQ a+16(FP), PA
	MOVQ out+32(FP), OUT
	MOVQ offs+40(FP), OFFS
	MOVQ bias+48(FP), BIASP
	MOVQ flags+56(FP), FLAGS

tile:
	MOVQ   k+8(FP), K
	MOVQ   b+24(FP), PB
	VXORPS C00, C00, C00
	VXORPS C01, C01, C01
	VXORPS C10, C10, C10
	VXORPS C11, C11, C11
	VXORPS C20, C20, C20
	VXORPS C21, C21, C21
	VXORPS C30, C30, C30
	VXORPS C31, C31, C31
	VXORPS C40, C40, C40
	VXORPS C41, C41, C41
	VXORPS C50, C50, C50
	VXORPS C51, C51, C51
	MOVQ   K, K4
	SHRQ   $2, K4
	ANDQ   $3, K
	TESTQ  K4, K4
	JZ     tail

loop4:
	PREFETCHT0 384(PA)
	KSTEP(0)
	KSTEP(1)
	KSTEP(2)
	KSTEP(3)
	ADDQ $96, PA
	ADDQ $256, PB
	DECQ K4
	JNZ  loop4

tail:
	TESTQ K, K
	JZ    store

loop1:
	KSTEP(0)
	ADDQ $24, PA
	ADDQ $64, PB
	DECQ K
	JNZ  loop1

store:
	// One store sequence per combination of the accumulate and bias bits.
	TESTQ $1, FLAGS
	JNZ   acc
	TESTQ $8, FLAGS
	JNZ   bias
	ZTILE(ZNONE, ZNONE1, ZNOLOAD)
	JMP   next

bias:
	ZTILE(ZNONE, ZBIAS, ZBLOAD)
	JMP next

acc:
	TESTQ $8, FLAGS
	JNZ   accbias
	ZTILE(ZACC, ZNONE1, ZNOLOAD)
	JMP   next

accbias:
	ZTILE(ZACC, ZBIAS, ZBLOAD)

next:
	ADDQ $24, OFFS  // 3 pairs × 8 bytes
	ADDQ $12, BIASP // 3 pairs × 4 bytes
	DECQ TILES
	JNZ  tile
	VZEROUPPER
	RET
