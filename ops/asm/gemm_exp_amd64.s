//go:build amd64 && !purego

#include "textflag.h"

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

TEXT ·gemmExpNoPf(SB), NOSPLIT, $0-48
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
#undef C00
#undef C01
#undef C10
#undef C11
#undef C20
#undef C21
#undef C30
#undef C31
#undef C40
#undef C41
#undef C50
#undef C51
#undef KSTEP
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

TEXT ·gemmExpPfB(SB), NOSPLIT, $0-48
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
	PREFETCHT0 768(PA)
	PREFETCHT0 1024(PB)
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


// func gemmExpPack64(k int, src *float32, ld int, dst *float32, pstride int)
TEXT ·gemmExpPack64(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	MOVQ pstride+32(FP), R9
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS 128(SI), Y4
	VMOVUPS 160(SI), Y5
	VMOVUPS 192(SI), Y6
	VMOVUPS 224(SI), Y7
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R9*1)
	VMOVUPS Y3, 32(DI)(R9*1)
	VMOVUPS Y4, (DI)(R9*2)
	VMOVUPS Y5, 32(DI)(R9*2)
	VMOVUPS Y6, (DI)(R10*1)
	VMOVUPS Y7, 32(DI)(R10*1)
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET
