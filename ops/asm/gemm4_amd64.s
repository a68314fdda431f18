//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func gemmKernel4x16AVX2(k int, a, b, c *float32, ldc int, flags uint)
// C[4×16] (+)= rows 0-3 of a six-row packed A panel · Bpanel[k×16]; see
// gemm4_amd64.go. Each element's sum is the 6×16 kernel's, step for step.
// ---------------------------------------------------------------------

#define K     CX  // steps of k left
#define PA    SI  // packed A: 6 floats (24 bytes) per step, rows 4-5 unread
#define PB    DI  // packed B: 16 floats (64 bytes) per step
#define PC    DX  // C row 0
#define LDC   R8  // C row stride in bytes
#define FLAGS R9  // bit 0: accumulate into C; bit 1: fetch the next B panel
#define PC3   R10 // C row 3
#define K4    R11 // groups of four steps
#define PN    R12 // two B panels on, 2*k*64 bytes past PB

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

#define KSTEP4(u) \
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
	VFMADD231PS  B1, A1, C31

TEXT ·gemmKernel4x16AVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), K
	MOVQ a+8(FP), PA
	MOVQ b+16(FP), PB
	MOVQ c+24(FP), PC
	MOVQ ldc+32(FP), LDC
	MOVQ flags+40(FP), FLAGS
	SHLQ $2, LDC
	LEAQ (LDC)(LDC*2), PC3
	ADDQ PC, PC3

	PREFETCHT0 (PC)
	PREFETCHT0 (PC)(LDC*1)
	PREFETCHT0 (PC)(LDC*2)
	PREFETCHT0 (PC3)

	VXORPS C00, C00, C00
	VXORPS C01, C01, C01
	VXORPS C10, C10, C10
	VXORPS C11, C11, C11
	VXORPS C20, C20, C20
	VXORPS C21, C21, C21
	VXORPS C30, C30, C30
	VXORPS C31, C31, C31

	MOVQ  K, K4
	SHLQ  $7, K4
	LEAQ  (PB)(K4*1), PN
	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail
	TESTQ $2, FLAGS
	JNZ   loop4pf

loop4:
	PREFETCHT0 384(PA)
	KSTEP4(0)
	KSTEP4(1)
	KSTEP4(2)
	KSTEP4(3)
	ADDQ $96, PA
	ADDQ $256, PB
	DECQ K4
	JNZ  loop4
	JMP  tail

loop4pf:
	PREFETCHT0 384(PA)
	PREFETCHT0 (PN)
	KSTEP4(0)
	PREFETCHT0 64(PN)
	KSTEP4(1)
	PREFETCHT0 128(PN)
	KSTEP4(2)
	PREFETCHT0 192(PN)
	KSTEP4(3)
	ADDQ $96, PA
	ADDQ $256, PB
	ADDQ $256, PN
	DECQ K4
	JNZ  loop4pf

tail:
	TESTQ K, K
	JZ    store

loop1:
	KSTEP4(0)
	ADDQ $24, PA
	ADDQ $64, PB
	DECQ K
	JNZ  loop1

store:
	// Accumulate mode adds the old C tile; overwrite mode never reads C.
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

write:
	VMOVUPS C00, (PC)
	VMOVUPS C01, 32(PC)
	VMOVUPS C10, (PC)(LDC*1)
	VMOVUPS C11, 32(PC)(LDC*1)
	VMOVUPS C20, (PC)(LDC*2)
	VMOVUPS C21, 32(PC)(LDC*2)
	VMOVUPS C30, (PC3)
	VMOVUPS C31, 32(PC3)
	VZEROUPPER
	RET
