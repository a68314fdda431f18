//go:build amd64 && !purego

#include "textflag.h"

// ZIPSUMARGS(BVEC): zipSum's arguments: DI y, R13 ldd in bytes, SI x,
// DX offs, R8 ne, R9 nt, R10 lds in bytes, R11 rows, R12 w, BVEC b in
// every lane.
#define ZIPSUMARGS(BVEC) \
	MOVQ         y+0(FP), DI    \
	MOVQ         ldd+8(FP), R13 \
	SHLQ         $2, R13        \
	MOVQ         x+16(FP), SI   \
	MOVQ         offs+24(FP), DX \
	MOVQ         ne+32(FP), R8  \
	MOVQ         nt+40(FP), R9  \
	MOVQ         lds+48(FP), R10 \
	SHLQ         $2, R10        \
	MOVQ         rows+56(FP), R11 \
	MOVQ         w+64(FP), R12  \
	VBROADCASTSS b+72(FP), BVEC

// SUMSOURCES(LOOP, DONE, LIMIT, ACC) adds sources BX .. LIMIT-1 at pair
// AX into ACC (BX ends at LIMIT); SUMSOURCESMASK the lanes of K only.
#define SUMSOURCES(LOOP, DONE, LIMIT, ACC) \
	CMPQ   BX, LIMIT               \
	JGE    DONE                    \
LOOP:                              \
	MOVQ   (DX)(BX*8), CX          \
	ADDQ   AX, CX                  \
	VADDPS (SI)(CX*4), ACC, ACC    \
	INCQ   BX                      \
	CMPQ   BX, LIMIT               \
	JLT    LOOP                    \
DONE:

#define SUMSOURCESMASK(LOOP, DONE, LIMIT, ACC, K) \
	CMPQ   BX, LIMIT               \
	JGE    DONE                    \
LOOP:                              \
	MOVQ   (DX)(BX*8), CX          \
	ADDQ   AX, CX                  \
	VADDPS (SI)(CX*4), ACC, K, ACC \
	INCQ   BX                      \
	CMPQ   BX, LIMIT               \
	JLT    LOOP                    \
DONE:

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

// func zipSumAVX512(y *float32, ldd int, x *float32, offs *int, ne, nt, lds, rows, w int, b float32)
// rows >= 1, w >= 1; every source's reads checked by the caller. Each sum
// starts at b and adds its sources in list order.
TEXT ·zipSumAVX512(SB), NOSPLIT, $0-76
	ZIPSUMARGS(Z31)
	VMOVDQU32    zipLo<>(SB), Z29
	VMOVDQU32    zipHi<>(SB), Z30
	// The masked step: t = w mod 32 outputs, (t+1)/2 even sources' lanes
	// (K1), t/2 odd ones' (K2), the two stores' lanes (K3, K4).
	MOVQ         R12, AX
	ANDQ         $31, AX
	MOVL         $1, BX
	LEAQ         1(AX), CX
	SHRQ         $1, CX
	SHLXL        CX, BX, CX
	DECL         CX
	KMOVW        CX, K1
	MOVQ         AX, CX
	SHRQ         $1, CX
	SHLXL        CX, BX, CX
	DECL         CX
	KMOVW        CX, K2
	SHLXL        AX, BX, CX
	DECL         CX
	KMOVW        CX, K3
	SHRL         $16, CX
	KMOVW        CX, K4
	MOVQ         R12, R14
	ANDQ         $-32, R14
	SHRQ         $1, R14              // pairs before the masked step
row:
	XORQ AX, AX                       // j: pairs done
	CMPQ AX, R14
	JGE  tail
block:
	VMOVAPS Z31, Z0
	XORQ    BX, BX
	SUMSOURCES(even, evenDone, R8, Z0)
	VMOVAPS Z31, Z1
	SUMSOURCES(odd, oddDone, R9, Z1)
	VMOVAPS   Z29, Z2
	VPERMI2PS Z1, Z0, Z2              // even0 odd0 .. even7 odd7
	VMOVAPS   Z30, Z3
	VPERMI2PS Z1, Z0, Z3              // even8 odd8 .. even15 odd15
	VMOVUPS   Z2, (DI)(AX*8)
	VMOVUPS   Z3, 64(DI)(AX*8)
	ADDQ      $16, AX
	CMPQ      AX, R14
	JLT       block
tail:
	KORTESTW K3, K3
	JZ       next
	VMOVAPS  Z31, Z0
	XORQ     BX, BX
	// Lanes past the row's outputs keep b, their sources unread.
	SUMSOURCESMASK(tEven, tEvenDone, R8, Z0, K1)
	VMOVAPS  Z31, Z1
	SUMSOURCESMASK(tOdd, tOddDone, R9, Z1, K2)
	VMOVAPS   Z29, Z2
	VPERMI2PS Z1, Z0, Z2
	VMOVAPS   Z30, Z3
	VPERMI2PS Z1, Z0, Z3
	VMOVUPS   Z2, K3, (DI)(AX*8)
	VMOVUPS   Z3, K4, 64(DI)(AX*8)
next:
	ADDQ R13, DI
	ADDQ R10, SI
	DECQ R11
	JNZ  row
	VZEROUPPER
	RET

// func zipSum16AVX2(y *float32, ldd int, x *float32, offs *int, ne, nt, lds, rows, w int, b float32)
// rows >= 1, w a multiple of 16, at least 16.
TEXT ·zipSum16AVX2(SB), NOSPLIT, $0-76
	ZIPSUMARGS(Y15)
	MOVQ         R12, R14
	SHRQ         $1, R14              // pairs a row
row16:
	XORQ AX, AX
block16:
	VMOVAPS Y15, Y0
	XORQ    BX, BX
	SUMSOURCES(even16, even16Done, R8, Y0)
	VMOVAPS Y15, Y1
	SUMSOURCES(odd16, odd16Done, R9, Y1)
	VUNPCKLPS  Y1, Y0, Y2             // e0 o0 e1 o1 | e4 o4 e5 o5
	VUNPCKHPS  Y1, Y0, Y3             // e2 o2 e3 o3 | e6 o6 e7 o7
	VPERM2F128 $0x20, Y3, Y2, Y4      // e0 o0 .. e3 o3
	VPERM2F128 $0x31, Y3, Y2, Y5      // e4 o4 .. e7 o7
	VMOVUPS    Y4, (DI)(AX*8)
	VMOVUPS    Y5, 32(DI)(AX*8)
	ADDQ       $8, AX
	CMPQ       AX, R14
	JLT        block16
	ADDQ       R13, DI
	ADDQ       R10, SI
	DECQ       R11
	JNZ        row16
	VZEROUPPER
	RET
