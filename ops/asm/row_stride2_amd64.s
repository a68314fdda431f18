//go:build amd64 && !purego

#include "textflag.h"

// The addStride2 primitive (see AddStride2): per row, each source value
// is added to every other destination value. The sources are spread to
// the even lanes of two vectors (each repeated, VPERMPS), the even lanes
// of the destination loaded, added and stored under a mask: the odd
// lanes are neither read nor written (another worker may own them), and
// each sum is the scalar d + s.

// s2Rep holds VPERMPS indices putting source i of 16 in lanes 2i and
// 2i+1: the first vector for sources 0..7, the second for 8..15.
DATA s2Rep<>+0(SB)/4, $0
DATA s2Rep<>+4(SB)/4, $0
DATA s2Rep<>+8(SB)/4, $1
DATA s2Rep<>+12(SB)/4, $1
DATA s2Rep<>+16(SB)/4, $2
DATA s2Rep<>+20(SB)/4, $2
DATA s2Rep<>+24(SB)/4, $3
DATA s2Rep<>+28(SB)/4, $3
DATA s2Rep<>+32(SB)/4, $4
DATA s2Rep<>+36(SB)/4, $4
DATA s2Rep<>+40(SB)/4, $5
DATA s2Rep<>+44(SB)/4, $5
DATA s2Rep<>+48(SB)/4, $6
DATA s2Rep<>+52(SB)/4, $6
DATA s2Rep<>+56(SB)/4, $7
DATA s2Rep<>+60(SB)/4, $7
DATA s2Rep<>+64(SB)/4, $8
DATA s2Rep<>+68(SB)/4, $8
DATA s2Rep<>+72(SB)/4, $9
DATA s2Rep<>+76(SB)/4, $9
DATA s2Rep<>+80(SB)/4, $10
DATA s2Rep<>+84(SB)/4, $10
DATA s2Rep<>+88(SB)/4, $11
DATA s2Rep<>+92(SB)/4, $11
DATA s2Rep<>+96(SB)/4, $12
DATA s2Rep<>+100(SB)/4, $12
DATA s2Rep<>+104(SB)/4, $13
DATA s2Rep<>+108(SB)/4, $13
DATA s2Rep<>+112(SB)/4, $14
DATA s2Rep<>+116(SB)/4, $14
DATA s2Rep<>+120(SB)/4, $15
DATA s2Rep<>+124(SB)/4, $15
GLOBL s2Rep<>(SB), RODATA|NOPTR, $128

// func addStride2AVX512(y *float32, ldd int, x *float32, lds, rows, n int)
TEXT ·addStride2AVX512(SB), NOSPLIT, $0-48
	MOVQ      y+0(FP), DI
	MOVQ      ldd+8(FP), R8
	SHLQ      $2, R8
	MOVQ      x+16(FP), SI
	MOVQ      lds+24(FP), R9
	SHLQ      $2, R9
	MOVQ      rows+32(FP), CX
	MOVQ      n+40(FP), R10
	MOVQ      R10, R11
	ANDQ      $-16, R11            // sources in whole vectors
	VMOVDQU32 s2Rep<>+0(SB), Z30
	VMOVDQU32 s2Rep<>+64(SB), Z31
	MOVL      $0x5555, AX
	KMOVW     AX, K1               // the even lanes
row:
	XORQ AX, AX                    // source index j
	CMPQ AX, R11
	JGE  tail
vec:
	VMOVUPS   (SI)(AX*4), Z0
	VPERMPS   Z0, Z30, Z1
	VPERMPS   Z0, Z31, Z2
	VMOVUPS.Z (DI)(AX*8), K1, Z3
	VADDPS    Z1, Z3, Z3
	VMOVUPS   Z3, K1, (DI)(AX*8)
	VMOVUPS.Z 64(DI)(AX*8), K1, Z4
	VADDPS    Z2, Z4, Z4
	VMOVUPS   Z4, K1, 64(DI)(AX*8)
	ADDQ      $16, AX
	CMPQ      AX, R11
	JLT       vec
tail:
	CMPQ   AX, R10
	JGE    next
	VMOVSS (DI)(AX*8), X0
	VADDSS (SI)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*8)
	INCQ   AX
	JMP    tail
next:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ CX
	JNZ  row
	VZEROUPPER
	RET

// func addStride2AVX2(y *float32, ldd int, x *float32, lds, rows, n int)
// Eight sources a step, spread by unpacking; VMASKMOVPS loads and stores
// the even lanes.
TEXT ·addStride2AVX2(SB), NOSPLIT, $0-48
	MOVQ     y+0(FP), DI
	MOVQ     ldd+8(FP), R8
	SHLQ     $2, R8
	MOVQ     x+16(FP), SI
	MOVQ     lds+24(FP), R9
	SHLQ     $2, R9
	MOVQ     rows+32(FP), CX
	MOVQ     n+40(FP), R10
	MOVQ     R10, R11
	ANDQ     $-8, R11
	VPCMPEQD Y15, Y15, Y15
	VPSRLQ   $32, Y15, Y15          // the even lanes' mask
row:
	XORQ AX, AX
	CMPQ AX, R11
	JGE  tail
vec:
	VMOVUPS    (SI)(AX*4), Y0
	VUNPCKLPS  Y0, Y0, Y1           // s0 s0 s1 s1 | s4 s4 s5 s5
	VUNPCKHPS  Y0, Y0, Y2           // s2 s2 s3 s3 | s6 s6 s7 s7
	VPERM2F128 $0x20, Y2, Y1, Y3
	VPERM2F128 $0x31, Y2, Y1, Y4
	VMASKMOVPS (DI)(AX*8), Y15, Y5
	VADDPS     Y3, Y5, Y5
	VMASKMOVPS Y5, Y15, (DI)(AX*8)
	VMASKMOVPS 32(DI)(AX*8), Y15, Y6
	VADDPS     Y4, Y6, Y6
	VMASKMOVPS Y6, Y15, 32(DI)(AX*8)
	ADDQ       $8, AX
	CMPQ       AX, R11
	JLT        vec
tail:
	CMPQ   AX, R10
	JGE    next
	VMOVSS (DI)(AX*8), X0
	VADDSS (SI)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*8)
	INCQ   AX
	JMP    tail
next:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ CX
	JNZ  row
	VZEROUPPER
	RET
