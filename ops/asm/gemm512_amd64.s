//go:build amd64 && !purego

#include "textflag.h"
#include "gemm_clamp_amd64.h"
#include "clamp512_amd64.h"

// ---------------------------------------------------------------------
// func gemmPanel12x16AVX512(tiles, k int, a, b, c *float32, ldc int, flags uint)
// For t < tiles: C tile t [12×16] (+)= A panel t [k×12, interleaved] · Bpanel[k×16],
// A panels back to back, tile t's C rows 12t..12t+11; see gemm512_amd64.go.
// ---------------------------------------------------------------------

#define K     CX  // steps of k left
#define PA    SI  // packed A: 12 floats (48 bytes) per step
#define PB    DI  // packed B: 16 floats (64 bytes) per step
#define PC    DX  // C row 0
#define LDC   R8  // C row stride in bytes
#define FLAGS R9  // bit 0: accumulate into C
#define PC3   R10 // C row 3
#define PC6   R13 // C row 6
#define PC9   BX  // C row 9
#define K4    R11 // groups of four steps
#define PN    R12 // two B panels on, 2*k*64 bytes past PB (flags bit 1)
#define TILES AX  // tiles left

#define B0  Z0  // B rows of the four unrolled steps
#define B1  Z1
#define B2  Z2
#define B3  Z3
#define C0  Z16 // accumulators: one zmm per C row
#define C1  Z17
#define C2  Z18
#define C3  Z19
#define C4  Z20
#define C5  Z21
#define C6  Z22
#define C7  Z23
#define C8  Z24
#define C9  Z25
#define C10 Z26
#define C11 Z27

// KSTEP(u, B) is step u of an unrolled group: load the B row into
// register B, then fuse-multiply-add each of the twelve A values,
// broadcast straight from memory (embedded broadcast: no broadcast
// register, one load µop per FMA), into its row's accumulator. Twelve
// independent chains cover the FMA latency (4 cycles × 2 pipes).
// KSTEP8 and KSTEP4 are the same step for rows 0-7 and 0-3 of the panel.
#define FMA_ROW(u, B, r, C) VFMADD231PS.BCST (48*u+4*r)(PA), B, C
#define KSTEP4(u, B) \
	VMOVUPS (64*u)(PB), B; \
	FMA_ROW(u, B, 0, C0);  \
	FMA_ROW(u, B, 1, C1);  \
	FMA_ROW(u, B, 2, C2);  \
	FMA_ROW(u, B, 3, C3)
#define KSTEP8(u, B) \
	KSTEP4(u, B);         \
	FMA_ROW(u, B, 4, C4); \
	FMA_ROW(u, B, 5, C5); \
	FMA_ROW(u, B, 6, C6); \
	FMA_ROW(u, B, 7, C7)
#define KSTEP(u, B) \
	KSTEP8(u, B);           \
	FMA_ROW(u, B, 8, C8);   \
	FMA_ROW(u, B, 9, C9);   \
	FMA_ROW(u, B, 10, C10); \
	FMA_ROW(u, B, 11, C11)

// TILE_ROWS(op) applies op(register, row address) to the twelve rows:
// row r of C is at PC, PC3, PC6 or PC9 plus (r mod 3)·LDC. TILE_ROWS4
// and TILE_ROWS8 do rows 0-3 and 0-7.
#define TILE_ROWS4(op) \
	op(C0, (PC));         \
	op(C1, (PC)(LDC*1));  \
	op(C2, (PC)(LDC*2));  \
	op(C3, (PC3))
#define TILE_ROWS8(op) \
	TILE_ROWS4(op);       \
	op(C4, (PC3)(LDC*1)); \
	op(C5, (PC3)(LDC*2)); \
	op(C6, (PC6));        \
	op(C7, (PC6)(LDC*1))
#define TILE_ROWS(op) \
	TILE_ROWS8(op);        \
	op(C8, (PC6)(LDC*2));  \
	op(C9, (PC9));         \
	op(C10, (PC9)(LDC*1)); \
	op(C11, (PC9)(LDC*2))

#define ROW_ZERO(R, M)     VPXORD R, R, R
#define ROW_PREFETCH(R, M) PREFETCHT0 M
#define ROW_ADD(R, M)      VADDPS M, R, R
#define ROW_STORE(R, M)    VMOVUPS R, M

// The epilogue clamps (gemmRelu, gemmClamp; see gemm_variant.go), with
// B0 = +0, B2 the upper bound and B1 scratch, as gemmPanel12x32AVX512
// applies them.
#define CLAMP_ZERO VPXORD B0, B0, B0
#define CLAMP_HI   VPBROADCASTD K, B2
#define ROW_RELU(R, M)  RELU512(R, B0)
#define ROW_CLAMP(R, M) CLAMP512(R, B0, B2, B1, K1)

TEXT ·gemmPanel12x16AVX512(SB), NOSPLIT, $0-56
	MOVQ tiles+0(FP), TILES
	MOVQ a+16(FP), PA         // A panels are back to back: PA runs on
	MOVQ c+32(FP), PC
	MOVQ ldc+40(FP), LDC
	MOVQ flags+48(FP), FLAGS
	SHLQ $2, LDC              // ldc in bytes

tile:
	MOVQ k+8(FP), K
	MOVQ b+24(FP), PB
	LEAQ (LDC)(LDC*2), PC3    // 3*ldc bytes
	LEAQ (PC)(PC3*2), PC6     // C row 6
	LEAQ (PC6)(PC3*1), PC9    // C row 9
	ADDQ PC, PC3              // C row 3

	// Fetch the tile's twelve C lines (one 64-byte line per row), so the
	// write-back after the k loop finds them in L1.
	TILE_ROWS(ROW_PREFETCH)
	TILE_ROWS(ROW_ZERO)

	// Split k into groups of four steps and a remainder of 0-3.
	MOVQ  K, K4
	SHLQ  $7, K4
	LEAQ  (PB)(K4*1), PN      // two panels of k steps × 64 bytes on
	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail
	TESTQ $2, FLAGS
	JNZ   loop4pf
	TESTQ $4, FLAGS
	JNZ   loop4far

loop4:
	// Four steps per iteration (192 bytes of A, three lines): ask for
	// the A panel's lines 16 steps ahead; the B panel stays in L1.
	PREFETCHT0 768(PA)
	KSTEP(0, B0)
	PREFETCHT0 832(PA)
	KSTEP(1, B1)
	PREFETCHT0 896(PA)
	KSTEP(2, B2)
	KSTEP(3, B3)
	ADDQ $192, PA             // 4 steps × 12 floats
	ADDQ $256, PB             // 4 steps × 16 floats
	DECQ K4
	JNZ  loop4
	JMP  tail

loop4far:
	// As loop4 for an A streamed from memory (gemmPrefetchFar): its
	// lines 4 KiB (85 steps, some 500 cycles) ahead, which covers a DRAM
	// miss where 16 steps do not.
	PREFETCHT0 4096(PA)
	KSTEP(0, B0)
	PREFETCHT0 4160(PA)
	KSTEP(1, B1)
	PREFETCHT0 4224(PA)
	KSTEP(2, B2)
	KSTEP(3, B3)
	ADDQ $192, PA
	ADDQ $256, PB
	DECQ K4
	JNZ  loop4far
	JMP  tail

loop4pf:
	// As loop4, and fetch the four matching lines of the B panel two
	// on (see gemm_amd64.s: a B panel that meets few row panels streams
	// from memory faster than the hardware prefetcher brings it).
	PREFETCHT0 768(PA)
	PREFETCHT0 (PN)
	KSTEP(0, B0)
	PREFETCHT0 832(PA)
	PREFETCHT0 64(PN)
	KSTEP(1, B1)
	PREFETCHT0 896(PA)
	PREFETCHT0 128(PN)
	KSTEP(2, B2)
	PREFETCHT0 192(PN)
	KSTEP(3, B3)
	ADDQ $192, PA
	ADDQ $256, PB
	ADDQ $256, PN
	DECQ K4
	JNZ  loop4pf

tail:
	// The last 0-3 steps, one at a time.
	TESTQ K, K
	JZ    store

loop1:
	KSTEP(0, B0)
	ADDQ $48, PA
	ADDQ $64, PB
	DECQ K
	JNZ  loop1

store:
	// Accumulate mode adds the old C; overwrite mode never reads it, so
	// garbage or NaN there cannot leak in.
	TESTQ $1, FLAGS
	JZ    clamp
	TILE_ROWS(ROW_ADD)

clamp:
	TILE_CLAMP

write:
	TILE_ROWS(ROW_STORE)

	// The next tile: its C rows start 12 on, its A panel where PA is;
	// only the first tile prefetches the later B panel.
	LEAQ (PC9)(LDC*2), PC
	ADDQ LDC, PC
	ANDQ $~2, FLAGS
	DECQ TILES
	JNZ  tile
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func gemmKernel8x16AVX512(k int, a, b, c *float32, ldc int, flags uint)
// func gemmKernel4x16AVX512(k int, a, b, c *float32, ldc int, flags uint)
// Rows 0-7 (0-3) of gemmPanel12x16AVX512's tile from a 12-row A panel:
// the same FMAs in the same order, so the same bits; see gemm512_amd64.go.
// ---------------------------------------------------------------------

// PARTIAL_SETUP turns LDC into bytes, points PC3 and PC6 at C rows 3 and
// 6 and splits k into K4 groups of four steps and K = k mod 4. The
// partial kernels ignore the prefetch flag.
#define PARTIAL_SETUP \
	SHLQ $2, LDC;             \
	LEAQ (LDC)(LDC*2), PC3;   \
	LEAQ (PC)(PC3*2), PC6;    \
	ADDQ PC, PC3;             \
	MOVQ K, K4;               \
	SHRQ $2, K4;              \
	ANDQ $3, K

TEXT ·gemmKernel8x16AVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), K
	MOVQ a+8(FP), PA
	MOVQ b+16(FP), PB
	MOVQ c+24(FP), PC
	MOVQ ldc+32(FP), LDC
	MOVQ flags+40(FP), FLAGS
	PARTIAL_SETUP
	TILE_ROWS8(ROW_ZERO)
	TESTQ K4, K4
	JZ    tail8

loop8:
	KSTEP8(0, B0)
	KSTEP8(1, B1)
	KSTEP8(2, B2)
	KSTEP8(3, B3)
	ADDQ $192, PA             // 4 steps of the 12-row panel
	ADDQ $256, PB
	DECQ K4
	JNZ  loop8

tail8:
	TESTQ K, K
	JZ    store8

step8:
	KSTEP8(0, B0)
	ADDQ $48, PA
	ADDQ $64, PB
	DECQ K
	JNZ  step8

store8:
	TESTQ $1, FLAGS
	JZ    write8
	TILE_ROWS8(ROW_ADD)

write8:
	TILE_ROWS8(ROW_STORE)
	VZEROUPPER
	RET

TEXT ·gemmKernel4x16AVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), K
	MOVQ a+8(FP), PA
	MOVQ b+16(FP), PB
	MOVQ c+24(FP), PC
	MOVQ ldc+32(FP), LDC
	MOVQ flags+40(FP), FLAGS
	PARTIAL_SETUP
	TILE_ROWS4(ROW_ZERO)
	TESTQ K4, K4
	JZ    tail4

loop4:
	KSTEP4(0, B0)
	KSTEP4(1, B1)
	KSTEP4(2, B2)
	KSTEP4(3, B3)
	ADDQ $192, PA
	ADDQ $256, PB
	DECQ K4
	JNZ  loop4

tail4:
	TESTQ K, K
	JZ    store4

step4:
	KSTEP4(0, B0)
	ADDQ $48, PA
	ADDQ $64, PB
	DECQ K
	JNZ  step4

store4:
	TESTQ $1, FLAGS
	JZ    write4
	TILE_ROWS4(ROW_ADD)

write4:
	TILE_ROWS4(ROW_STORE)
	VZEROUPPER
	RET

#undef PC6
#undef PC9
#undef PA

// ---------------------------------------------------------------------
// func gemmPanel12x16RowAAVX512(tiles, k int, a *float32, lda int, b, c *float32, ldc int, flags uint)
// gemmPanel12x16AVX512 with A read in place: tile t's twelve rows lda
// floats apart from a[12t*lda], step p of its row r at a[(12t+r)*lda+p].
// Same FMAs in the same order, so the same bits; see gemm512_amd64.go.
// ---------------------------------------------------------------------

#define PA    SI  // A row 0 at the current step
#define LDA   BX  // A row stride in bytes
#define PA3   R10 // A rows 3, 6, 9 at the current step (k loop only)
#define PA6   R12
#define PA9   R13
#define PC6   R12 // C rows 6 and 9 (with PC3 = R10: prefetch and write-back only)
#define PC9   R13
#define A0ROW R14 // A row 0 of the tile

// RSTEP(u, B) is KSTEP with the twelve A values broadcast from the
// twelve rows.
#define RSTEP(u, B) \
	VMOVUPS          (64*u)(PB), B;               \
	VFMADD231PS.BCST (4*u)(PA), B, C0;            \
	VFMADD231PS.BCST (4*u)(PA)(LDA*1), B, C1;     \
	VFMADD231PS.BCST (4*u)(PA)(LDA*2), B, C2;     \
	VFMADD231PS.BCST (4*u)(PA3), B, C3;           \
	VFMADD231PS.BCST (4*u)(PA3)(LDA*1), B, C4;    \
	VFMADD231PS.BCST (4*u)(PA3)(LDA*2), B, C5;    \
	VFMADD231PS.BCST (4*u)(PA6), B, C6;           \
	VFMADD231PS.BCST (4*u)(PA6)(LDA*1), B, C7;    \
	VFMADD231PS.BCST (4*u)(PA6)(LDA*2), B, C8;    \
	VFMADD231PS.BCST (4*u)(PA9), B, C9;           \
	VFMADD231PS.BCST (4*u)(PA9)(LDA*1), B, C10;   \
	VFMADD231PS.BCST (4*u)(PA9)(LDA*2), B, C11

// C_ROWS points PC3, PC6 and PC9 at C rows 3, 6 and 9.
#define C_ROWS \
	LEAQ (LDC)(LDC*2), PC3; \
	LEAQ (PC)(PC3*2), PC6;  \
	LEAQ (PC6)(PC3*1), PC9; \
	ADDQ PC, PC3

TEXT ·gemmPanel12x16RowAAVX512(SB), NOSPLIT, $0-64
	MOVQ tiles+0(FP), TILES
	MOVQ a+16(FP), A0ROW
	MOVQ lda+24(FP), LDA
	MOVQ c+40(FP), PC
	MOVQ ldc+48(FP), LDC
	SHLQ $2, LDA              // lda in bytes
	SHLQ $2, LDC

rtile:
	MOVQ k+8(FP), K
	MOVQ b+32(FP), PB
	MOVQ flags+56(FP), FLAGS
	C_ROWS
	TILE_ROWS(ROW_PREFETCH)
	TILE_ROWS(ROW_ZERO)

	// The A row pointers (in the registers the C rows used).
	MOVQ A0ROW, PA
	LEAQ (LDA)(LDA*2), PA3
	LEAQ (PA)(PA3*2), PA6     // A row 6
	LEAQ (PA6)(PA3*1), PA9    // A row 9
	ADDQ PA, PA3              // A row 3

	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    rtail

rloop4:
	RSTEP(0, B0)
	RSTEP(1, B1)
	RSTEP(2, B2)
	RSTEP(3, B3)
	ADDQ $16, PA              // 4 steps of each row
	ADDQ $16, PA3
	ADDQ $16, PA6
	ADDQ $16, PA9
	ADDQ $256, PB             // 4 steps × 16 floats
	DECQ K4
	JNZ  rloop4

rtail:
	TESTQ K, K
	JZ    rstore

rloop1:
	RSTEP(0, B0)
	ADDQ $4, PA
	ADDQ $4, PA3
	ADDQ $4, PA6
	ADDQ $4, PA9
	ADDQ $64, PB
	DECQ K
	JNZ  rloop1

rstore:
	C_ROWS
	TESTQ $1, FLAGS
	JZ    rwrite
	TILE_ROWS(ROW_ADD)

rwrite:
	TILE_ROWS(ROW_STORE)

	// The next tile: A and C rows 12 on.
	MOVQ LDA, K
	SHLQ $2, K                // 4*lda bytes
	LEAQ (A0ROW)(K*2), A0ROW
	ADDQ K, A0ROW             // 12*lda bytes on
	LEAQ (PC9)(LDC*2), PC
	ADDQ LDC, PC
	DECQ TILES
	JNZ  rtile
	VZEROUPPER
	RET
