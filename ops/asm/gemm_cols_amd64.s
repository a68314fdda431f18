//go:build amd64 && !purego

#include "textflag.h"

// See gemm_cols_amd64.go.

// func gemmCols12AVX512(k int, a, b, c *float32)
TEXT ·gemmCols12AVX512(SB), NOSPLIT, $0-32
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   c+24(FP), DI
	MOVL   $0x0fff, AX
	KMOVW  AX, K1              // the twelve rows
	VPXORD Z0, Z0, Z0          // columns 0-3
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TESTQ  CX, CX
	JZ     store

step:
	PREFETCHT0       4096(SI)  // A, which streams from memory where the weights are cold (gemm_cols.go)
	VMOVUPS.Z        (SI), K1, Z8
	VFMADD231PS.BCST (DX), Z8, Z0
	VFMADD231PS.BCST 4(DX), Z8, Z1
	VFMADD231PS.BCST 8(DX), Z8, Z2
	VFMADD231PS.BCST 12(DX), Z8, Z3
	ADDQ             $48, SI
	ADDQ             $64, DX
	DECQ             CX
	JNZ              step

store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VZEROUPPER
	RET

// cols6Mask selects a step's six rows of A.
DATA cols6Mask<>+0(SB)/4, $0xffffffff
DATA cols6Mask<>+4(SB)/4, $0xffffffff
DATA cols6Mask<>+8(SB)/4, $0xffffffff
DATA cols6Mask<>+12(SB)/4, $0xffffffff
DATA cols6Mask<>+16(SB)/4, $0xffffffff
DATA cols6Mask<>+20(SB)/4, $0xffffffff
DATA cols6Mask<>+24(SB)/4, $0
DATA cols6Mask<>+28(SB)/4, $0
GLOBL cols6Mask<>(SB), RODATA|NOPTR, $32

// func gemmCols6AVX2(k int, a, b, c *float32)
TEXT ·gemmCols6AVX2(SB), NOSPLIT, $0-32
	MOVQ    k+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DX
	MOVQ    c+24(FP), DI
	VMOVUPS cols6Mask<>(SB), Y15
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	TESTQ   CX, CX
	JZ      store

step:
	PREFETCHT0   2048(SI)      // as in gemmCols12AVX512
	VMASKMOVPS   (SI), Y15, Y8
	VBROADCASTSS (DX), Y9
	VFMADD231PS  Y9, Y8, Y0
	VBROADCASTSS 4(DX), Y10
	VFMADD231PS  Y10, Y8, Y1
	VBROADCASTSS 8(DX), Y11
	VFMADD231PS  Y11, Y8, Y2
	VBROADCASTSS 12(DX), Y12
	VFMADD231PS  Y12, Y8, Y3
	ADDQ         $24, SI
	ADDQ         $64, DX
	DECQ         CX
	JNZ          step

store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 64(DI)
	VMOVUPS Y2, 128(DI)
	VMOVUPS Y3, 192(DI)
	VZEROUPPER
	RET
