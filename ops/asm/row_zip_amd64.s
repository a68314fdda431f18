//go:build amd64 && !purego

#include "textflag.h"

// zipLo and zipHi are VPERMI2PS indices interleaving two vectors: lane
// 2j of zipLo takes lane j of the first (index j), lane 2j+1 lane j of
// the second (index 16+j); zipHi the same for lanes 8..15.
DATA zipLo<>+0(SB)/4, $0
DATA zipLo<>+4(SB)/4, $16
DATA zipLo<>+8(SB)/4, $1
DATA zipLo<>+12(SB)/4, $17
DATA zipLo<>+16(SB)/4, $2
DATA zipLo<>+20(SB)/4, $18
DATA zipLo<>+24(SB)/4, $3
DATA zipLo<>+28(SB)/4, $19
DATA zipLo<>+32(SB)/4, $4
DATA zipLo<>+36(SB)/4, $20
DATA zipLo<>+40(SB)/4, $5
DATA zipLo<>+44(SB)/4, $21
DATA zipLo<>+48(SB)/4, $6
DATA zipLo<>+52(SB)/4, $22
DATA zipLo<>+56(SB)/4, $7
DATA zipLo<>+60(SB)/4, $23
GLOBL zipLo<>(SB), RODATA|NOPTR, $64
DATA zipHi<>+0(SB)/4, $8
DATA zipHi<>+4(SB)/4, $24
DATA zipHi<>+8(SB)/4, $9
DATA zipHi<>+12(SB)/4, $25
DATA zipHi<>+16(SB)/4, $10
DATA zipHi<>+20(SB)/4, $26
DATA zipHi<>+24(SB)/4, $11
DATA zipHi<>+28(SB)/4, $27
DATA zipHi<>+32(SB)/4, $12
DATA zipHi<>+36(SB)/4, $28
DATA zipHi<>+40(SB)/4, $13
DATA zipHi<>+44(SB)/4, $29
DATA zipHi<>+48(SB)/4, $14
DATA zipHi<>+52(SB)/4, $30
DATA zipHi<>+56(SB)/4, $15
DATA zipHi<>+60(SB)/4, $31
GLOBL zipHi<>(SB), RODATA|NOPTR, $64

// func zip2AddAVX512(y, a, c *float32, n int, b float32)
// n a multiple of 16, at least 16.
TEXT ·zip2AddAVX512(SB), NOSPLIT, $0-36
	MOVQ         y+0(FP), DI
	MOVQ         a+8(FP), SI
	MOVQ         c+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS b+32(FP), Z31
	VMOVDQU32    zipLo<>(SB), Z29
	VMOVDQU32    zipHi<>(SB), Z30
	XORQ         AX, AX
loop:
	VADDPS     (SI)(AX*4), Z31, Z0 // a + b
	VADDPS     (DX)(AX*4), Z31, Z1 // c + b
	VMOVAPS    Z29, Z2
	VPERMI2PS  Z1, Z0, Z2          // Z2 (indices zipLo): a0 c0 a1 c1 .. a7 c7
	VMOVAPS    Z30, Z3
	VPERMI2PS  Z1, Z0, Z3          // Z3 (indices zipHi): a8 c8 .. a15 c15
	VMOVUPS    Z2, (DI)(AX*8)
	VMOVUPS    Z3, 64(DI)(AX*8)
	ADDQ       $16, AX
	CMPQ       AX, CX
	JLT        loop
	VZEROUPPER
	RET
