//go:build amd64 && !purego

#include "textflag.h"
#include "gemm_tile_amd64.h"
#include "gemm_pack_amd64.h"
#include "gemm_clamp_amd64.h"
#include "minmax_amd64.h"

// ---------------------------------------------------------------------
// func gemmPanel6x16AVX2(tiles, k int, a, b, c *float32, ldc int, flags uint)
// For t < tiles: C tile t [6×16] (+)= A panel t [k×6, interleaved] · Bpanel[k×16],
// A panels back to back, tile t's C rows 6t..6t+5; see gemm_amd64.go.
// ---------------------------------------------------------------------

#define K     CX  // steps of k left
#define PA    SI  // packed A: 6 floats (24 bytes) per step
#define PB    DI  // packed B: 16 floats (64 bytes) per step
#define PC    DX  // C row 0
#define LDC   R8  // C row stride in bytes
#define FLAGS R9  // bit 0: accumulate into C
#define PC3   R10 // C row 3
#define K4    R11 // groups of four steps
#define PN    R12 // two B panels on, 2*k*64 bytes past PB (flags bit 1)
#define TILES AX  // tiles left

#include "gemm_kstep6_amd64.h"

// The epilogue clamps (gemmRelu, gemmClamp; see gemm_variant.go) on the
// twelve accumulators, with B0 = +0, B1 the upper bound and A0, A1
// scratch: ROW_RELU is max(+0, x) returning x for zeros and NaNs (the
// elementwise Relu), ROW_CLAMP the elementwise AVX2 Clamp's OP_MAX and
// OP_MIN (minmax_amd64.h), in place.
#define TILE_ROWS(op) \
	op(C00); op(C01); op(C10); op(C11); op(C20); op(C21); \
	op(C30); op(C31); op(C40); op(C41); op(C50); op(C51)
#define ROW_RELU(R) VMAXPS R, B0, R
#define ROW_CLAMP(R) \
	OP_MAX(B0, R, R, A0, A1); \
	OP_MIN(B1, R, R, A0, A1)
#define CLAMP_ZERO VXORPS B0, B0, B0
#define CLAMP_HI \
	MOVQ         K, X1; \
	VPBROADCASTD X1, B1

TEXT ·gemmPanel6x16AVX2(SB), NOSPLIT, $0-56
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
	ADDQ PC, PC3              // address of C row 3

	TILE_PREFETCH

	TILE_ZERO

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
	// Four steps per iteration; ask for the A panel 16 steps ahead (it
	// streams from L2, while the B panel stays in L1 across row panels).
	PREFETCHT0 384(PA)
	KSTEP(0)
	KSTEP(1)
	KSTEP(2)
	KSTEP(3)
	ADDQ $96, PA              // 4 steps × 6 floats
	ADDQ $256, PB             // 4 steps × 16 floats
	DECQ K4
	JNZ  loop4
	JMP  tail

loop4far:
	// As loop4 for an A streamed from memory (gemmPrefetchFar): 4 KiB
	// ahead, which covers a DRAM miss, two lines an iteration.
	PREFETCHT0 4096(PA)
	KSTEP(0)
	KSTEP(1)
	PREFETCHT0 4160(PA)
	KSTEP(2)
	KSTEP(3)
	ADDQ $96, PA
	ADDQ $256, PB
	DECQ K4
	JNZ  loop4far
	JMP  tail

loop4pf:
	// As loop4, and fetch the four matching lines of the B panel two
	// on. With few rows of A, each B panel meets only a few row panels,
	// so B streams from memory faster than the hardware prefetcher
	// brings it (M = 16: 25 → 40+ GFLOP/s); two panels of lead time
	// beat one here.
	PREFETCHT0 384(PA)
	PREFETCHT0 (PN)
	KSTEP(0)
	PREFETCHT0 64(PN)
	KSTEP(1)
	PREFETCHT0 128(PN)
	KSTEP(2)
	PREFETCHT0 192(PN)
	KSTEP(3)
	ADDQ $96, PA
	ADDQ $256, PB
	ADDQ $256, PN
	DECQ K4
	JNZ  loop4pf

tail:
	// The last 0-3 steps, one at a time.
	TESTQ K, K
	JZ    store

loop1:
	KSTEP(0)
	ADDQ $24, PA
	ADDQ $64, PB
	DECQ K
	JNZ  loop1

store:
	TESTQ $1, FLAGS
	JZ    clamp
	TILE_ADD

clamp:
	TILE_CLAMP

write:
	TILE_STORE

	// The next tile: its C rows start 6 on, its A panel where PA is;
	// only the first tile prefetches the later B panel (the others
	// find it on its way).
	LEAQ (PC3)(LDC*2), PC
	ADDQ LDC, PC
	ANDQ $~2, FLAGS
	DECQ TILES
	JNZ  tile
	VZEROUPPER                // leave no dirty upper halves for SSE code
	RET

#undef K
#undef TILES
#undef PA
#undef PB
#undef PC
#undef LDC
#undef FLAGS
#undef PC3
#undef K4
#undef PN
#undef B0
#undef B1
#undef A0
#undef A1

// ---------------------------------------------------------------------
// func gemv16AVX2(k int, x, b *float32, ldb int, y *float32, flags uint)
// y[16] (+)= x[k] · B[k×16] with B rows ldb floats apart; see gemm_amd64.go.
// ---------------------------------------------------------------------

#define K     CX  // rows of B left
#define PX    SI  // x, one float per row
#define PB    DI  // B row p
#define LDB   R8  // B row stride in bytes
#define LDB3  R10 // 3*ldb bytes
#define PY    DX  // y
#define FLAGS R9  // bit 0: accumulate into y
#define K4    R11 // groups of four rows
#define PN    R12 // row p+64, prefetched

#define S0L Y0  // sums of rows p ≡ 0 (mod 4), columns 0-7 (L) and 8-15 (H)
#define S0H Y1
#define S1L Y2  // rows p ≡ 1
#define S1H Y3
#define S2L Y4  // rows p ≡ 2
#define S2H Y5
#define S3L Y6  // rows p ≡ 3
#define S3H Y7
#define X0  Y8  // broadcast x values
#define X1  Y9
#define X2  Y10
#define X3  Y11

TEXT ·gemv16AVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), K
	MOVQ x+8(FP), PX
	MOVQ b+16(FP), PB
	MOVQ ldb+24(FP), LDB
	MOVQ y+32(FP), PY
	MOVQ flags+40(FP), FLAGS
	SHLQ $2, LDB              // ldb in bytes
	LEAQ (LDB)(LDB*2), LDB3   // 3*ldb bytes
	MOVQ LDB, PN
	SHLQ $6, PN
	ADDQ PB, PN               // row p+64, which the loop fetches ahead

	// Zero the eight partial sums.
	VXORPS S0L, S0L, S0L
	VXORPS S0H, S0H, S0H
	VXORPS S1L, S1L, S1L
	VXORPS S1H, S1H, S1H
	VXORPS S2L, S2L, S2L
	VXORPS S2H, S2H, S2H
	VXORPS S3L, S3L, S3L
	VXORPS S3H, S3H, S3H

	// Split k into groups of four rows and a remainder of 0-3.
	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail

loop4:
	// Rows p..p+3: broadcast x[p+i], multiply-add row p+i into sums i;
	// fetch rows p+64..p+67 (4 KiB on in a packed panel): B is read once
	// and streams from memory (a decoder step's weights, a classifier's)
	// faster than the hardware prefetcher, which stops at each page,
	// brings it.
	PREFETCHT0   (PN)
	PREFETCHT0   (PN)(LDB*1)
	PREFETCHT0   (PN)(LDB*2)
	PREFETCHT0   (PN)(LDB3*1)
	VBROADCASTSS (PX), X0
	VFMADD231PS  (PB), X0, S0L
	VFMADD231PS  32(PB), X0, S0H
	VBROADCASTSS 4(PX), X1
	VFMADD231PS  (PB)(LDB*1), X1, S1L
	VFMADD231PS  32(PB)(LDB*1), X1, S1H
	VBROADCASTSS 8(PX), X2
	VFMADD231PS  (PB)(LDB*2), X2, S2L
	VFMADD231PS  32(PB)(LDB*2), X2, S2H
	VBROADCASTSS 12(PX), X3
	VFMADD231PS  (PB)(LDB3*1), X3, S3L
	VFMADD231PS  32(PB)(LDB3*1), X3, S3H
	ADDQ         $16, PX      // next four x
	LEAQ         (PB)(LDB*4), PB // next four rows
	LEAQ         (PN)(LDB*4), PN
	DECQ         K4
	JNZ          loop4

tail:
	// The last 0-3 rows into the first pair of sums.
	TESTQ K, K
	JZ    sum

loop1:
	VBROADCASTSS (PX), X0
	VFMADD231PS  (PB), X0, S0L
	VFMADD231PS  32(PB), X0, S0H
	ADDQ         $4, PX
	ADDQ         LDB, PB
	DECQ         K
	JNZ          loop1

sum:
	// Fold the four partial sums into S0.
	VADDPS S1L, S0L, S0L
	VADDPS S1H, S0H, S0H
	VADDPS S3L, S2L, S2L
	VADDPS S3H, S2H, S2H
	VADDPS S2L, S0L, S0L
	VADDPS S2H, S0H, S0H

	// Add the old y in accumulate mode, then store.
	TESTQ  $1, FLAGS
	JZ     store
	VADDPS (PY), S0L, S0L
	VADDPS 32(PY), S0H, S0H

store:
	VMOVUPS S0L, (PY)
	VMOVUPS S0H, 32(PY)
	VZEROUPPER
	RET

#undef K
#undef PX
#undef PB
#undef LDB
#undef LDB3
#undef PY
#undef FLAGS
#undef K4
#undef PN
#undef S0L
#undef S0H
#undef S1L
#undef S1H
#undef S2L
#undef S2H
#undef S3L
#undef S3H
#undef X0
#undef X1
#undef X2
#undef X3

// ---------------------------------------------------------------------
// func gemmPackB16AVX2(k int, src *float32, ld int, dst *float32)
// dst[p*16+j] = src[p*ld+j] for p < k, j < 16; see gemm_amd64.go.
// ---------------------------------------------------------------------

#define K    CX  // rows left
#define SRC  SI  // source row p
#define LD   R8  // source row stride in bytes
#define LD3  R10 // 3*ld bytes
#define DST  DI  // packed row p (64 bytes each)
#define K4   R11 // groups of four rows

TEXT ·gemmPackB16AVX2(SB), NOSPLIT, $0-32
	MOVQ k+0(FP), K
	MOVQ src+8(FP), SRC
	MOVQ ld+16(FP), LD
	MOVQ dst+24(FP), DST
	SHLQ $2, LD               // ld in bytes
	LEAQ (LD)(LD*2), LD3      // 3*ld bytes

	// Split k into groups of four rows and a remainder of 0-3.
	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail

loop4:
	// Ask for the rows eight ahead (a strided walk the prefetcher may
	// not follow), then copy four 64-byte rows.
	PREFETCHT0 (SRC)(LD*8)
	VMOVUPS    (SRC), Y0
	VMOVUPS    32(SRC), Y1
	VMOVUPS    (SRC)(LD*1), Y2
	VMOVUPS    32(SRC)(LD*1), Y3
	VMOVUPS    (SRC)(LD*2), Y4
	VMOVUPS    32(SRC)(LD*2), Y5
	VMOVUPS    (SRC)(LD3*1), Y6
	VMOVUPS    32(SRC)(LD3*1), Y7
	VMOVUPS    Y0, (DST)
	VMOVUPS    Y1, 32(DST)
	VMOVUPS    Y2, 64(DST)
	VMOVUPS    Y3, 96(DST)
	VMOVUPS    Y4, 128(DST)
	VMOVUPS    Y5, 160(DST)
	VMOVUPS    Y6, 192(DST)
	VMOVUPS    Y7, 224(DST)
	LEAQ       (SRC)(LD*4), SRC // next four source rows
	ADDQ       $256, DST        // next four packed rows
	DECQ       K4
	JNZ        loop4

tail:
	// The last 0-3 rows.
	TESTQ K, K
	JZ    done

loop1:
	VMOVUPS (SRC), Y0
	VMOVUPS 32(SRC), Y1
	VMOVUPS Y0, (DST)
	VMOVUPS Y1, 32(DST)
	ADDQ    LD, SRC
	ADDQ    $64, DST
	DECQ    K
	JNZ     loop1

done:
	VZEROUPPER
	RET

#undef K
#undef SRC
#undef LD
#undef LD3
#undef DST
#undef K4

// ---------------------------------------------------------------------
// func gemvRows4AVX2(n int, x, b *float32, ldb int, y *float32, flags uint)
// y[0:n] (+)= x[0]·B[0,:] + x[1]·B[1,:] + x[2]·B[2,:] + x[3]·B[3,:];
// see gemm_amd64.go.
// ---------------------------------------------------------------------

#define N     CX  // columns left
#define PB0   SI  // B row 0 at the current column
#define LDB   R8  // B row stride in bytes
#define LDB3  R10 // 3*ldb bytes
#define PY    DX  // y at the current column
#define FLAGS R9  // bit 0: accumulate into y
#define XB0   Y12 // x[0..3] broadcast (scalar halves X12-X15 in the tail)
#define XB1   Y13
#define XB2   Y14
#define XB3   Y15

// COL8(off, acc) is eight columns at byte offset off: start from y (or
// zero), then fuse-multiply-add the four rows in order.
#define COL8(off, acc) \
	VFMADD231PS off(PB0), XB0, acc;         \
	VFMADD231PS off(PB0)(LDB*1), XB1, acc;  \
	VFMADD231PS off(PB0)(LDB*2), XB2, acc;  \
	VFMADD231PS off(PB0)(LDB3*1), XB3, acc; \
	VMOVUPS     acc, off(PY)

TEXT ·gemvRows4AVX2(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), N
	MOVQ x+8(FP), AX
	MOVQ b+16(FP), PB0
	MOVQ ldb+24(FP), LDB
	MOVQ y+32(FP), PY
	MOVQ flags+40(FP), FLAGS
	SHLQ $2, LDB              // ldb in bytes
	LEAQ (LDB)(LDB*2), LDB3   // 3*ldb bytes

	// Broadcast the four x values once.
	VBROADCASTSS (AX), XB0
	VBROADCASTSS 4(AX), XB1
	VBROADCASTSS 8(AX), XB2
	VBROADCASTSS 12(AX), XB3

loop32:
	// 32 columns per iteration as four independent chains.
	CMPQ N, $32
	JLT  loop8
	TESTQ $1, FLAGS
	JZ   zero32
	VMOVUPS (PY), Y0          // accumulate: start from y
	VMOVUPS 32(PY), Y1
	VMOVUPS 64(PY), Y2
	VMOVUPS 96(PY), Y3
	JMP  fma32

zero32:
	VXORPS Y0, Y0, Y0         // overwrite: start from zero, never read y
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

fma32:
	COL8(0, Y0)
	COL8(32, Y1)
	COL8(64, Y2)
	COL8(96, Y3)
	ADDQ $128, PB0
	ADDQ $128, PY
	SUBQ $32, N
	JMP  loop32

loop8:
	// Eight columns at a time.
	CMPQ N, $8
	JLT  tail
	VXORPS Y0, Y0, Y0
	TESTQ $1, FLAGS
	JZ   fma8
	VMOVUPS (PY), Y0

fma8:
	COL8(0, Y0)
	ADDQ $32, PB0
	ADDQ $32, PY
	SUBQ $8, N
	JMP  loop8

tail:
	// The last 0-7 columns one at a time, with scalar FMAs.
	TESTQ N, N
	JZ    done

loop1:
	VXORPS X4, X4, X4
	TESTQ  $1, FLAGS
	JZ     fma1
	VMOVSS (PY), X4

fma1:
	VFMADD231SS (PB0), X12, X4
	VFMADD231SS (PB0)(LDB*1), X13, X4
	VFMADD231SS (PB0)(LDB*2), X14, X4
	VFMADD231SS (PB0)(LDB3*1), X15, X4
	VMOVSS      X4, (PY)
	ADDQ        $4, PB0
	ADDQ        $4, PY
	DECQ        N
	JNZ         loop1

done:
	VZEROUPPER
	RET

#undef N
#undef PB0
#undef LDB
#undef LDB3
#undef PY
#undef FLAGS
#undef XB0
#undef XB1
#undef XB2
#undef XB3
#undef COL8

// ---------------------------------------------------------------------
// func gemmPackA6AVX2(k8 int, src *float32, lda int, dst *float32)
// dst[p*6+r] = src[r*lda+p] for r < 6, p < 8*k8; see gemm_amd64.go.
// ---------------------------------------------------------------------

#define G     CX  // groups of eight steps left
#define SRC   SI  // row 0 at the current step
#define SRC3  R10 // row 3 at the current step
#define LDA   R8  // row stride in bytes
#define DST   DI  // packed step p (24 bytes each)
TEXT ·gemmPackA6AVX2(SB), NOSPLIT, $0-32
	MOVQ k8+0(FP), G
	MOVQ src+8(FP), SRC
	MOVQ lda+16(FP), LDA
	MOVQ dst+24(FP), DST
	SHLQ $2, LDA              // lda in bytes
	LEAQ (LDA)(LDA*2), SRC3   // 3*lda bytes
	ADDQ SRC, SRC3            // row 3

loop:
	PACK6X8(SRC, SRC3, 0, 24)

	ADDQ $32, SRC             // next eight steps of every row
	ADDQ $32, SRC3
	ADDQ $192, DST            // 8 steps × 6 floats
	DECQ G
	JNZ  loop
	VZEROUPPER
	RET

#undef G
#undef SRC
#undef SRC3
#undef LDA
#undef DST

// ---------------------------------------------------------------------
// func gemmPackB64AVX2(k int, src *float32, ld int, dst *float32, pstride int)
// Four 16-column panels at once: dst[q*pstride+p*16+j] = src[p*ld+16q+j]
// for q < 4, p < k, j < 16; see gemm_amd64.go.
// ---------------------------------------------------------------------

#define K    CX  // rows left
#define SRC  SI  // source row p, column 0 of the four panels
#define LD   R8  // source row stride in bytes
#define DST  DI  // row p of panel 0
#define PS   R9  // panel stride in bytes
#define PS3  R10 // 3 panel strides

TEXT ·gemmPackB64AVX2(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), K
	MOVQ src+8(FP), SRC
	MOVQ ld+16(FP), LD
	MOVQ dst+24(FP), DST
	MOVQ pstride+32(FP), PS
	SHLQ $2, LD               // ld in bytes
	SHLQ $2, PS               // panel stride in bytes
	LEAQ (PS)(PS*2), PS3

loop:
	// One source row: 64 floats (four lines read in order), then each
	// panel's 16 into its row p.
	PREFETCHT0 (SRC)(LD*4)    // four rows ahead
	PREFETCHT0 128(SRC)(LD*4)
	VMOVUPS    (SRC), Y0
	VMOVUPS    32(SRC), Y1
	VMOVUPS    64(SRC), Y2
	VMOVUPS    96(SRC), Y3
	VMOVUPS    128(SRC), Y4
	VMOVUPS    160(SRC), Y5
	VMOVUPS    192(SRC), Y6
	VMOVUPS    224(SRC), Y7
	VMOVUPS    Y0, (DST)
	VMOVUPS    Y1, 32(DST)
	VMOVUPS    Y2, (DST)(PS*1)
	VMOVUPS    Y3, 32(DST)(PS*1)
	VMOVUPS    Y4, (DST)(PS*2)
	VMOVUPS    Y5, 32(DST)(PS*2)
	VMOVUPS    Y6, (DST)(PS3*1)
	VMOVUPS    Y7, 32(DST)(PS3*1)
	ADDQ       LD, SRC        // next source row
	ADDQ       $64, DST       // next packed row
	DECQ       K
	JNZ        loop
	VZEROUPPER
	RET

#undef K
#undef SRC
#undef LD
#undef DST
#undef PS
#undef PS3

// ---------------------------------------------------------------------
// func gemmPackA12AVX2(k8 int, src *float32, lda int, dst *float32)
// dst[p*12+r] = src[r*lda+p] for r < 12, p < 8*k8; see gemm_amd64.go.
// ---------------------------------------------------------------------

#define G     CX  // groups of eight steps left
#define SRC   SI  // rows 0, 3, 6 and 9 at the current step
#define SRC3  R10
#define SRC6  R11
#define SRC9  R12
#define LDA   R8  // row stride in bytes
#define DST   DI  // packed step p (48 bytes each)

TEXT ·gemmPackA12AVX2(SB), NOSPLIT, $0-32
	MOVQ k8+0(FP), G
	MOVQ src+8(FP), SRC
	MOVQ lda+16(FP), LDA
	MOVQ dst+24(FP), DST
	SHLQ $2, LDA              // lda in bytes
	LEAQ (LDA)(LDA*2), SRC3   // 3*lda bytes
	LEAQ (SRC)(SRC3*2), SRC6  // row 6
	LEAQ (SRC6)(SRC3*1), SRC9 // row 9
	ADDQ SRC, SRC3            // row 3

loop:
	PACK6X8(SRC, SRC3, 0, 48)   // rows 0-5 at 48p
	PACK6X8(SRC6, SRC9, 24, 48) // rows 6-11 at 48p+24
	ADDQ $32, SRC             // next eight steps of every row
	ADDQ $32, SRC3
	ADDQ $32, SRC6
	ADDQ $32, SRC9
	ADDQ $384, DST            // 8 steps × 12 floats
	DECQ G
	JNZ  loop
	VZEROUPPER
	RET

#undef G
#undef SRC
#undef SRC3
#undef SRC6
#undef SRC9
#undef LDA
#undef DST
