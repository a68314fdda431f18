//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func convDirect6x16AVX2(k int, a, x *float32, off *int, bias, c *float32, ldc int, flags uint)
// func convDirect5x16AVX2(k int, a, x *float32, off *int, bias, c *float32, ldc int, flags uint)
// A 6 (5) row × 16 column tile of a stride-1 convolution read straight
// from the padded input: step s's sixteen positions are x[off[s]:+16].
// See convDirectKernel (conv_direct.go).
// ---------------------------------------------------------------------

#define K     CX  // steps left
#define PA    SI  // packed weights: 6 (5) floats per step
#define PX    DI  // the panel's first input cell
#define POFF  BX  // tap offsets, one int per step
#define PBIAS AX  // bias rows, or nil
#define PC    DX  // C row 0
#define LDC   R8  // C row stride in bytes
#define FLAGS R9  // bit 0: accumulate into C
#define PC3   R10 // C row 3
#define K4    R11 // groups of four steps
#define T0    R12 // the step's offset

// KSTEP6(u) is step u of a group of four: the tap's offset, its two
// vectors of sixteen positions, then each of the 6 weights broadcast
// and fused-multiply-added into its row's two accumulators.
#define KSTEP6(u) \
	MOVQ         (8*u)(POFF), T0; \
	VMOVUPS      (PX)(T0*4), Y0; \
	VMOVUPS      32(PX)(T0*4), Y1; \
	VBROADCASTSS (24*u+0)(PA), Y2; \
	VFMADD231PS  Y0, Y2, Y4; \
	VFMADD231PS  Y1, Y2, Y5; \
	VBROADCASTSS (24*u+4)(PA), Y3; \
	VFMADD231PS  Y0, Y3, Y6; \
	VFMADD231PS  Y1, Y3, Y7; \
	VBROADCASTSS (24*u+8)(PA), Y2; \
	VFMADD231PS  Y0, Y2, Y8; \
	VFMADD231PS  Y1, Y2, Y9; \
	VBROADCASTSS (24*u+12)(PA), Y3; \
	VFMADD231PS  Y0, Y3, Y10; \
	VFMADD231PS  Y1, Y3, Y11; \
	VBROADCASTSS (24*u+16)(PA), Y2; \
	VFMADD231PS  Y0, Y2, Y12; \
	VFMADD231PS  Y1, Y2, Y13; \
	VBROADCASTSS (24*u+20)(PA), Y3; \
	VFMADD231PS  Y0, Y3, Y14; \
	VFMADD231PS  Y1, Y3, Y15

TEXT ·convDirect6x16AVX2(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), K
	MOVQ a+8(FP), PA
	MOVQ x+16(FP), PX
	MOVQ off+24(FP), POFF
	MOVQ bias+32(FP), PBIAS
	MOVQ c+40(FP), PC
	MOVQ ldc+48(FP), LDC
	MOVQ flags+56(FP), FLAGS
	SHLQ $2, LDC
	LEAQ (LDC)(LDC*2), PC3
	ADDQ PC, PC3

	// Start from the bias, or from zero.
	TESTQ PBIAS, PBIAS
	JZ    zero6
	VBROADCASTSS 0(PBIAS), Y4
	VMOVAPS      Y4, Y5
	VBROADCASTSS 4(PBIAS), Y6
	VMOVAPS      Y6, Y7
	VBROADCASTSS 8(PBIAS), Y8
	VMOVAPS      Y8, Y9
	VBROADCASTSS 12(PBIAS), Y10
	VMOVAPS      Y10, Y11
	VBROADCASTSS 16(PBIAS), Y12
	VMOVAPS      Y12, Y13
	VBROADCASTSS 20(PBIAS), Y14
	VMOVAPS      Y14, Y15
	JMP          steps6

zero6:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

steps6:
	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail6

loop6:
	PREFETCHT0 384(PA) // the weights stream from L2
	KSTEP6(0)
	KSTEP6(1)
	KSTEP6(2)
	KSTEP6(3)
	ADDQ $96, PA
	ADDQ $32, POFF
	DECQ K4
	JNZ  loop6

tail6:
	TESTQ K, K
	JZ    store6

one6:
	KSTEP6(0)
	ADDQ $24, PA
	ADDQ $8, POFF
	DECQ K
	JNZ  one6

store6:
	TESTQ $1, FLAGS
	JZ    write6
	VADDPS (PC), Y4, Y4
	VADDPS 32(PC), Y5, Y5
	VADDPS (PC)(LDC*1), Y6, Y6
	VADDPS 32(PC)(LDC*1), Y7, Y7
	VADDPS (PC)(LDC*2), Y8, Y8
	VADDPS 32(PC)(LDC*2), Y9, Y9
	VADDPS (PC3), Y10, Y10
	VADDPS 32(PC3), Y11, Y11
	VADDPS (PC3)(LDC*1), Y12, Y12
	VADDPS 32(PC3)(LDC*1), Y13, Y13
	VADDPS (PC3)(LDC*2), Y14, Y14
	VADDPS 32(PC3)(LDC*2), Y15, Y15

write6:
	VMOVUPS Y4, (PC)
	VMOVUPS Y5, 32(PC)
	VMOVUPS Y6, (PC)(LDC*1)
	VMOVUPS Y7, 32(PC)(LDC*1)
	VMOVUPS Y8, (PC)(LDC*2)
	VMOVUPS Y9, 32(PC)(LDC*2)
	VMOVUPS Y10, (PC3)
	VMOVUPS Y11, 32(PC3)
	VMOVUPS Y12, (PC3)(LDC*1)
	VMOVUPS Y13, 32(PC3)(LDC*1)
	VMOVUPS Y14, (PC3)(LDC*2)
	VMOVUPS Y15, 32(PC3)(LDC*2)
	VZEROUPPER
	RET

// KSTEP5(u) is step u of a group of four: the tap's offset, its two
// vectors of sixteen positions, then each of the 5 weights broadcast
// and fused-multiply-added into its row's two accumulators.
#define KSTEP5(u) \
	MOVQ         (8*u)(POFF), T0; \
	VMOVUPS      (PX)(T0*4), Y0; \
	VMOVUPS      32(PX)(T0*4), Y1; \
	VBROADCASTSS (20*u+0)(PA), Y2; \
	VFMADD231PS  Y0, Y2, Y4; \
	VFMADD231PS  Y1, Y2, Y5; \
	VBROADCASTSS (20*u+4)(PA), Y3; \
	VFMADD231PS  Y0, Y3, Y6; \
	VFMADD231PS  Y1, Y3, Y7; \
	VBROADCASTSS (20*u+8)(PA), Y2; \
	VFMADD231PS  Y0, Y2, Y8; \
	VFMADD231PS  Y1, Y2, Y9; \
	VBROADCASTSS (20*u+12)(PA), Y3; \
	VFMADD231PS  Y0, Y3, Y10; \
	VFMADD231PS  Y1, Y3, Y11; \
	VBROADCASTSS (20*u+16)(PA), Y2; \
	VFMADD231PS  Y0, Y2, Y12; \
	VFMADD231PS  Y1, Y2, Y13

TEXT ·convDirect5x16AVX2(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), K
	MOVQ a+8(FP), PA
	MOVQ x+16(FP), PX
	MOVQ off+24(FP), POFF
	MOVQ bias+32(FP), PBIAS
	MOVQ c+40(FP), PC
	MOVQ ldc+48(FP), LDC
	MOVQ flags+56(FP), FLAGS
	SHLQ $2, LDC
	LEAQ (LDC)(LDC*2), PC3
	ADDQ PC, PC3

	// Start from the bias, or from zero.
	TESTQ PBIAS, PBIAS
	JZ    zero5
	VBROADCASTSS 0(PBIAS), Y4
	VMOVAPS      Y4, Y5
	VBROADCASTSS 4(PBIAS), Y6
	VMOVAPS      Y6, Y7
	VBROADCASTSS 8(PBIAS), Y8
	VMOVAPS      Y8, Y9
	VBROADCASTSS 12(PBIAS), Y10
	VMOVAPS      Y10, Y11
	VBROADCASTSS 16(PBIAS), Y12
	VMOVAPS      Y12, Y13
	JMP          steps5

zero5:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13

steps5:
	MOVQ  K, K4
	SHRQ  $2, K4
	ANDQ  $3, K
	TESTQ K4, K4
	JZ    tail5

loop5:
	PREFETCHT0 320(PA) // the weights stream from L2
	KSTEP5(0)
	KSTEP5(1)
	KSTEP5(2)
	KSTEP5(3)
	ADDQ $80, PA
	ADDQ $32, POFF
	DECQ K4
	JNZ  loop5

tail5:
	TESTQ K, K
	JZ    store5

one5:
	KSTEP5(0)
	ADDQ $20, PA
	ADDQ $8, POFF
	DECQ K
	JNZ  one5

store5:
	TESTQ $1, FLAGS
	JZ    write5
	VADDPS (PC), Y4, Y4
	VADDPS 32(PC), Y5, Y5
	VADDPS (PC)(LDC*1), Y6, Y6
	VADDPS 32(PC)(LDC*1), Y7, Y7
	VADDPS (PC)(LDC*2), Y8, Y8
	VADDPS 32(PC)(LDC*2), Y9, Y9
	VADDPS (PC3), Y10, Y10
	VADDPS 32(PC3), Y11, Y11
	VADDPS (PC3)(LDC*1), Y12, Y12
	VADDPS 32(PC3)(LDC*1), Y13, Y13

write5:
	VMOVUPS Y4, (PC)
	VMOVUPS Y5, 32(PC)
	VMOVUPS Y6, (PC)(LDC*1)
	VMOVUPS Y7, 32(PC)(LDC*1)
	VMOVUPS Y8, (PC)(LDC*2)
	VMOVUPS Y9, 32(PC)(LDC*2)
	VMOVUPS Y10, (PC3)
	VMOVUPS Y11, 32(PC3)
	VMOVUPS Y12, (PC3)(LDC*1)
	VMOVUPS Y13, 32(PC3)(LDC*1)
	VZEROUPPER
	RET
