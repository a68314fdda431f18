//go:build amd64 && !purego

#include "textflag.h"

// See gemm_colsp_amd64.go.

// COLSP_LOAD(ptr, z): a step's twelve rows of one panel (mask K1).
#define COLSP_LOAD(ptr, z) VMOVUPS.Z (ptr), K1, z

// COLSP_ZERO4: four sums start at zero.
#define COLSP_ZERO4(z0, z1, z2, z3) \
	VPXORD z0, z0, z0; \
	VPXORD z1, z1, z1; \
	VPXORD z2, z2, z2; \
	VPXORD z3, z3, z3

// COLSP_ARGS: k in CX, A in SI, the bytes between panels in R8, B in DX,
// the sums in DI, and K1 the twelve rows of a step.
#define COLSP_ARGS \
	MOVQ  k+0(FP), CX;        \
	MOVQ  a+8(FP), SI;        \
	MOVQ  astride+16(FP), R8; \
	SHLQ  $2, R8;             \
	MOVQ  b+24(FP), DX;       \
	MOVQ  c+32(FP), DI;       \
	MOVL  $0x0fff, AX;        \
	KMOVW AX, K1

// func gemmColsPanels4AVX512(k int, a *float32, astride int, b, c *float32)
TEXT ·gemmColsPanels4AVX512(SB), NOSPLIT, $0-40
	COLSP_ARGS
	LEAQ (SI)(R8*1), R9  // panel 1
	LEAQ (SI)(R8*2), R10 // panel 2
	LEAQ (R9)(R8*2), R11 // panel 3
	// Z(4p+j): panel p, column j
	COLSP_ZERO4(Z0, Z1, Z2, Z3)
	COLSP_ZERO4(Z4, Z5, Z6, Z7)
	COLSP_ZERO4(Z8, Z9, Z10, Z11)
	COLSP_ZERO4(Z12, Z13, Z14, Z15)
	TESTQ  CX, CX
	JZ     store4

step4:
	PREFETCHT0   4096(SI)       // A streams from memory where the weights are cold
	PREFETCHT0   4096(R9)
	PREFETCHT0   4096(R10)
	PREFETCHT0   4096(R11)
	COLSP_LOAD(SI, Z16)
	COLSP_LOAD(R9, Z17)
	COLSP_LOAD(R10, Z18)
	COLSP_LOAD(R11, Z19)
	VBROADCASTSS (DX), Z20
	VBROADCASTSS 4(DX), Z21
	VBROADCASTSS 8(DX), Z22
	VBROADCASTSS 12(DX), Z23
	VFMADD231PS  Z20, Z16, Z0
	VFMADD231PS  Z21, Z16, Z1
	VFMADD231PS  Z22, Z16, Z2
	VFMADD231PS  Z23, Z16, Z3
	VFMADD231PS  Z20, Z17, Z4
	VFMADD231PS  Z21, Z17, Z5
	VFMADD231PS  Z22, Z17, Z6
	VFMADD231PS  Z23, Z17, Z7
	VFMADD231PS  Z20, Z18, Z8
	VFMADD231PS  Z21, Z18, Z9
	VFMADD231PS  Z22, Z18, Z10
	VFMADD231PS  Z23, Z18, Z11
	VFMADD231PS  Z20, Z19, Z12
	VFMADD231PS  Z21, Z19, Z13
	VFMADD231PS  Z22, Z19, Z14
	VFMADD231PS  Z23, Z19, Z15
	ADDQ         $48, SI
	ADDQ         $48, R9
	ADDQ         $48, R10
	ADDQ         $48, R11
	ADDQ         $64, DX
	DECQ         CX
	JNZ          step4

store4:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	VMOVUPS Z8, 512(DI)
	VMOVUPS Z9, 576(DI)
	VMOVUPS Z10, 640(DI)
	VMOVUPS Z11, 704(DI)
	VMOVUPS Z12, 768(DI)
	VMOVUPS Z13, 832(DI)
	VMOVUPS Z14, 896(DI)
	VMOVUPS Z15, 960(DI)
	VZEROUPPER
	RET

// func gemmColsPanels8x1AVX512(k int, a *float32, astride int, b, c *float32)
TEXT ·gemmColsPanels8x1AVX512(SB), NOSPLIT, $0-40
	COLSP_ARGS
	LEAQ (SI)(R8*4), R9  // panels 4-7 from R9
	LEAQ (R8)(R8*2), R10 // three panels' bytes
	// Zp: panel p's column 0
	COLSP_ZERO4(Z0, Z1, Z2, Z3)
	COLSP_ZERO4(Z4, Z5, Z6, Z7)
	TESTQ  CX, CX
	JZ     store8

step8:
	PREFETCHT0       4096(SI)
	PREFETCHT0       4096(SI)(R8*1)
	PREFETCHT0       4096(SI)(R8*2)
	PREFETCHT0       4096(SI)(R10*1)
	PREFETCHT0       4096(R9)
	PREFETCHT0       4096(R9)(R8*1)
	PREFETCHT0       4096(R9)(R8*2)
	PREFETCHT0       4096(R9)(R10*1)
	VBROADCASTSS     (DX), Z20
	VMOVUPS.Z        (SI), K1, Z8
	VMOVUPS.Z        (SI)(R8*1), K1, Z9
	VMOVUPS.Z        (SI)(R8*2), K1, Z10
	VMOVUPS.Z        (SI)(R10*1), K1, Z11
	VMOVUPS.Z        (R9), K1, Z12
	VMOVUPS.Z        (R9)(R8*1), K1, Z13
	VMOVUPS.Z        (R9)(R8*2), K1, Z14
	VMOVUPS.Z        (R9)(R10*1), K1, Z15
	VFMADD231PS      Z20, Z8, Z0
	VFMADD231PS      Z20, Z9, Z1
	VFMADD231PS      Z20, Z10, Z2
	VFMADD231PS      Z20, Z11, Z3
	VFMADD231PS      Z20, Z12, Z4
	VFMADD231PS      Z20, Z13, Z5
	VFMADD231PS      Z20, Z14, Z6
	VFMADD231PS      Z20, Z15, Z7
	ADDQ             $48, SI
	ADDQ             $48, R9
	ADDQ             $64, DX
	DECQ             CX
	JNZ              step8

store8:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 256(DI)
	VMOVUPS Z2, 512(DI)
	VMOVUPS Z3, 768(DI)
	VMOVUPS Z4, 1024(DI)
	VMOVUPS Z5, 1280(DI)
	VMOVUPS Z6, 1536(DI)
	VMOVUPS Z7, 1792(DI)
	VZEROUPPER
	RET
