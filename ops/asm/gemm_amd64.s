//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func gemmKernel6x16AVX2(k int, a, b, c *float32, ldc int, flags uint)
// C[6×16] (+)= Apanel[k×6]ᵀ-interleaved · Bpanel[k×16]; see gemm_amd64.go.
// ---------------------------------------------------------------------

#define K     CX  // steps of k left
#define PA    SI  // packed A: 6 floats (24 bytes) per step
#define PB    DI  // packed B: 16 floats (64 bytes) per step
#define PC    DX  // C row 0
#define LDC   R8  // C row stride in bytes
#define FLAGS R9  // bit 0: accumulate into C
#define PC3   R10 // C row 3
#define K4    R11 // groups of four steps

#define B0  Y0  // B row, columns 0-7
#define B1  Y1  // B row, columns 8-15
#define A0  Y2  // broadcast A value (even rows)
#define A1  Y3  // broadcast A value (odd rows)
#define C00 Y4  // accumulators: row r, columns 0-7 (Cr0) and 8-15 (Cr1)
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

// KSTEP(u) is step u of an unrolled group: load the B row, then broadcast
// each of the six A values and fuse-multiply-add it into its row's two
// accumulators. Alternating A0/A1 lets a broadcast issue while the
// previous row's FMAs still read the other register.
#define KSTEP(u) \
	VMOVUPS      (64*u)(PB), B0;    \
	VMOVUPS      (64*u+32)(PB), B1; \
	VBROADCASTSS (24*u)(PA), A0;    \
	VFMADD231PS  B0, A0, C00;       \
	VFMADD231PS  B1, A0, C01;       \
	VBROADCASTSS (24*u+4)(PA), A1;  \
	VFMADD231PS  B0, A1, C10;       \
	VFMADD231PS  B1, A1, C11;       \
	VBROADCASTSS (24*u+8)(PA), A0;  \
	VFMADD231PS  B0, A0, C20;       \
	VFMADD231PS  B1, A0, C21;       \
	VBROADCASTSS (24*u+12)(PA), A1; \
	VFMADD231PS  B0, A1, C30;       \
	VFMADD231PS  B1, A1, C31;       \
	VBROADCASTSS (24*u+16)(PA), A0; \
	VFMADD231PS  B0, A0, C40;       \
	VFMADD231PS  B1, A0, C41;       \
	VBROADCASTSS (24*u+20)(PA), A1; \
	VFMADD231PS  B0, A1, C50;       \
	VFMADD231PS  B1, A1, C51

TEXT ·gemmKernel6x16AVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), K
	MOVQ a+8(FP), PA
	MOVQ b+16(FP), PB
	MOVQ c+24(FP), PC
	MOVQ ldc+32(FP), LDC
	MOVQ flags+40(FP), FLAGS
	SHLQ $2, LDC              // ldc in bytes
	LEAQ (LDC)(LDC*2), PC3    // 3*ldc bytes
	ADDQ PC, PC3              // address of C row 3

	// Fetch the tile's six C lines now, so the write-back after the
	// k loop finds them in L1.
	PREFETCHT0 (PC)
	PREFETCHT0 (PC)(LDC*1)
	PREFETCHT0 (PC)(LDC*2)
	PREFETCHT0 (PC3)
	PREFETCHT0 (PC3)(LDC*1)
	PREFETCHT0 (PC3)(LDC*2)

	// Zero the accumulators.
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

	// Split k into groups of four steps and a remainder of 0-3.
	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail

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
	// Accumulate mode adds the old C tile; overwrite mode never reads C
	// (so garbage or NaN already there cannot leak in).
	TESTQ $1, FLAGS
	JZ    write
	VADDPS (PC), C00, C00
	VADDPS 32(PC), C01, C01
	VADDPS (PC)(LDC*1), C10, C10
	VADDPS 32(PC)(LDC*1), C11, C11
	VADDPS (PC)(LDC*2), C20, C20
	VADDPS 32(PC)(LDC*2), C21, C21
	VADDPS (PC3), C30, C30
	VADDPS 32(PC3), C31, C31
	VADDPS (PC3)(LDC*1), C40, C40
	VADDPS 32(PC3)(LDC*1), C41, C41
	VADDPS (PC3)(LDC*2), C50, C50
	VADDPS 32(PC3)(LDC*2), C51, C51

write:
	// Store the six rows.
	VMOVUPS C00, (PC)
	VMOVUPS C01, 32(PC)
	VMOVUPS C10, (PC)(LDC*1)
	VMOVUPS C11, 32(PC)(LDC*1)
	VMOVUPS C20, (PC)(LDC*2)
	VMOVUPS C21, 32(PC)(LDC*2)
	VMOVUPS C30, (PC3)
	VMOVUPS C31, 32(PC3)
	VMOVUPS C40, (PC3)(LDC*1)
	VMOVUPS C41, 32(PC3)(LDC*1)
	VMOVUPS C50, (PC3)(LDC*2)
	VMOVUPS C51, 32(PC3)(LDC*2)
	VZEROUPPER                // leave no dirty upper halves for SSE code
	RET

#undef K
#undef PA
#undef PB
#undef PC
#undef LDC
#undef FLAGS
#undef PC3
#undef K4
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
	// Rows p..p+3: broadcast x[p+i], multiply-add row p+i into sums i.
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
