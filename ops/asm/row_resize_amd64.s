//go:build amd64 && !purego

#include "textflag.h"

// Upsampling row primitives: see row_resize_amd64.go for each contract.
// n is a whole number of vectors (8 inputs for AVX2, 16 for AVX-512) and
// at least one vector; the Go wrappers run what is left.

// rsRep4 holds VPERMPS indices repeating each of eight lanes four times,
// a vector of indices per 8 outputs.
DATA rsRep4<>+0(SB)/4, $0
DATA rsRep4<>+4(SB)/4, $0
DATA rsRep4<>+8(SB)/4, $0
DATA rsRep4<>+12(SB)/4, $0
DATA rsRep4<>+16(SB)/4, $1
DATA rsRep4<>+20(SB)/4, $1
DATA rsRep4<>+24(SB)/4, $1
DATA rsRep4<>+28(SB)/4, $1
DATA rsRep4<>+32(SB)/4, $2
DATA rsRep4<>+36(SB)/4, $2
DATA rsRep4<>+40(SB)/4, $2
DATA rsRep4<>+44(SB)/4, $2
DATA rsRep4<>+48(SB)/4, $3
DATA rsRep4<>+52(SB)/4, $3
DATA rsRep4<>+56(SB)/4, $3
DATA rsRep4<>+60(SB)/4, $3
DATA rsRep4<>+64(SB)/4, $4
DATA rsRep4<>+68(SB)/4, $4
DATA rsRep4<>+72(SB)/4, $4
DATA rsRep4<>+76(SB)/4, $4
DATA rsRep4<>+80(SB)/4, $5
DATA rsRep4<>+84(SB)/4, $5
DATA rsRep4<>+88(SB)/4, $5
DATA rsRep4<>+92(SB)/4, $5
DATA rsRep4<>+96(SB)/4, $6
DATA rsRep4<>+100(SB)/4, $6
DATA rsRep4<>+104(SB)/4, $6
DATA rsRep4<>+108(SB)/4, $6
DATA rsRep4<>+112(SB)/4, $7
DATA rsRep4<>+116(SB)/4, $7
DATA rsRep4<>+120(SB)/4, $7
DATA rsRep4<>+124(SB)/4, $7
GLOBL rsRep4<>(SB), RODATA|NOPTR, $128

// rsZRep2 and rsZRep4: VPERMPS indices repeating each of sixteen lanes
// two (four) times, a vector of indices per 16 outputs.
DATA rsZRep2<>+0(SB)/4, $0
DATA rsZRep2<>+4(SB)/4, $0
DATA rsZRep2<>+8(SB)/4, $1
DATA rsZRep2<>+12(SB)/4, $1
DATA rsZRep2<>+16(SB)/4, $2
DATA rsZRep2<>+20(SB)/4, $2
DATA rsZRep2<>+24(SB)/4, $3
DATA rsZRep2<>+28(SB)/4, $3
DATA rsZRep2<>+32(SB)/4, $4
DATA rsZRep2<>+36(SB)/4, $4
DATA rsZRep2<>+40(SB)/4, $5
DATA rsZRep2<>+44(SB)/4, $5
DATA rsZRep2<>+48(SB)/4, $6
DATA rsZRep2<>+52(SB)/4, $6
DATA rsZRep2<>+56(SB)/4, $7
DATA rsZRep2<>+60(SB)/4, $7
DATA rsZRep2<>+64(SB)/4, $8
DATA rsZRep2<>+68(SB)/4, $8
DATA rsZRep2<>+72(SB)/4, $9
DATA rsZRep2<>+76(SB)/4, $9
DATA rsZRep2<>+80(SB)/4, $10
DATA rsZRep2<>+84(SB)/4, $10
DATA rsZRep2<>+88(SB)/4, $11
DATA rsZRep2<>+92(SB)/4, $11
DATA rsZRep2<>+96(SB)/4, $12
DATA rsZRep2<>+100(SB)/4, $12
DATA rsZRep2<>+104(SB)/4, $13
DATA rsZRep2<>+108(SB)/4, $13
DATA rsZRep2<>+112(SB)/4, $14
DATA rsZRep2<>+116(SB)/4, $14
DATA rsZRep2<>+120(SB)/4, $15
DATA rsZRep2<>+124(SB)/4, $15
GLOBL rsZRep2<>(SB), RODATA|NOPTR, $128
DATA rsZRep4<>+0(SB)/4, $0
DATA rsZRep4<>+4(SB)/4, $0
DATA rsZRep4<>+8(SB)/4, $0
DATA rsZRep4<>+12(SB)/4, $0
DATA rsZRep4<>+16(SB)/4, $1
DATA rsZRep4<>+20(SB)/4, $1
DATA rsZRep4<>+24(SB)/4, $1
DATA rsZRep4<>+28(SB)/4, $1
DATA rsZRep4<>+32(SB)/4, $2
DATA rsZRep4<>+36(SB)/4, $2
DATA rsZRep4<>+40(SB)/4, $2
DATA rsZRep4<>+44(SB)/4, $2
DATA rsZRep4<>+48(SB)/4, $3
DATA rsZRep4<>+52(SB)/4, $3
DATA rsZRep4<>+56(SB)/4, $3
DATA rsZRep4<>+60(SB)/4, $3
DATA rsZRep4<>+64(SB)/4, $4
DATA rsZRep4<>+68(SB)/4, $4
DATA rsZRep4<>+72(SB)/4, $4
DATA rsZRep4<>+76(SB)/4, $4
DATA rsZRep4<>+80(SB)/4, $5
DATA rsZRep4<>+84(SB)/4, $5
DATA rsZRep4<>+88(SB)/4, $5
DATA rsZRep4<>+92(SB)/4, $5
DATA rsZRep4<>+96(SB)/4, $6
DATA rsZRep4<>+100(SB)/4, $6
DATA rsZRep4<>+104(SB)/4, $6
DATA rsZRep4<>+108(SB)/4, $6
DATA rsZRep4<>+112(SB)/4, $7
DATA rsZRep4<>+116(SB)/4, $7
DATA rsZRep4<>+120(SB)/4, $7
DATA rsZRep4<>+124(SB)/4, $7
DATA rsZRep4<>+128(SB)/4, $8
DATA rsZRep4<>+132(SB)/4, $8
DATA rsZRep4<>+136(SB)/4, $8
DATA rsZRep4<>+140(SB)/4, $8
DATA rsZRep4<>+144(SB)/4, $9
DATA rsZRep4<>+148(SB)/4, $9
DATA rsZRep4<>+152(SB)/4, $9
DATA rsZRep4<>+156(SB)/4, $9
DATA rsZRep4<>+160(SB)/4, $10
DATA rsZRep4<>+164(SB)/4, $10
DATA rsZRep4<>+168(SB)/4, $10
DATA rsZRep4<>+172(SB)/4, $10
DATA rsZRep4<>+176(SB)/4, $11
DATA rsZRep4<>+180(SB)/4, $11
DATA rsZRep4<>+184(SB)/4, $11
DATA rsZRep4<>+188(SB)/4, $11
DATA rsZRep4<>+192(SB)/4, $12
DATA rsZRep4<>+196(SB)/4, $12
DATA rsZRep4<>+200(SB)/4, $12
DATA rsZRep4<>+204(SB)/4, $12
DATA rsZRep4<>+208(SB)/4, $13
DATA rsZRep4<>+212(SB)/4, $13
DATA rsZRep4<>+216(SB)/4, $13
DATA rsZRep4<>+220(SB)/4, $13
DATA rsZRep4<>+224(SB)/4, $14
DATA rsZRep4<>+228(SB)/4, $14
DATA rsZRep4<>+232(SB)/4, $14
DATA rsZRep4<>+236(SB)/4, $14
DATA rsZRep4<>+240(SB)/4, $15
DATA rsZRep4<>+244(SB)/4, $15
DATA rsZRep4<>+248(SB)/4, $15
DATA rsZRep4<>+252(SB)/4, $15
GLOBL rsZRep4<>(SB), RODATA|NOPTR, $256

// rsZIlv interleaves two vectors p and q (VPERMT2PS, q's lanes 16..31):
// p0 q0 p1 q1 ... p7 q7, then p8 q8 ... p15 q15.
DATA rsZIlv<>+0(SB)/4, $0
DATA rsZIlv<>+4(SB)/4, $16
DATA rsZIlv<>+8(SB)/4, $1
DATA rsZIlv<>+12(SB)/4, $17
DATA rsZIlv<>+16(SB)/4, $2
DATA rsZIlv<>+20(SB)/4, $18
DATA rsZIlv<>+24(SB)/4, $3
DATA rsZIlv<>+28(SB)/4, $19
DATA rsZIlv<>+32(SB)/4, $4
DATA rsZIlv<>+36(SB)/4, $20
DATA rsZIlv<>+40(SB)/4, $5
DATA rsZIlv<>+44(SB)/4, $21
DATA rsZIlv<>+48(SB)/4, $6
DATA rsZIlv<>+52(SB)/4, $22
DATA rsZIlv<>+56(SB)/4, $7
DATA rsZIlv<>+60(SB)/4, $23
DATA rsZIlv<>+64(SB)/4, $8
DATA rsZIlv<>+68(SB)/4, $24
DATA rsZIlv<>+72(SB)/4, $9
DATA rsZIlv<>+76(SB)/4, $25
DATA rsZIlv<>+80(SB)/4, $10
DATA rsZIlv<>+84(SB)/4, $26
DATA rsZIlv<>+88(SB)/4, $11
DATA rsZIlv<>+92(SB)/4, $27
DATA rsZIlv<>+96(SB)/4, $12
DATA rsZIlv<>+100(SB)/4, $28
DATA rsZIlv<>+104(SB)/4, $13
DATA rsZIlv<>+108(SB)/4, $29
DATA rsZIlv<>+112(SB)/4, $14
DATA rsZIlv<>+116(SB)/4, $30
DATA rsZIlv<>+120(SB)/4, $15
DATA rsZIlv<>+124(SB)/4, $31
GLOBL rsZIlv<>(SB), RODATA|NOPTR, $128

// The blendLerp2 primitive (see BlendLerp2): per output row, v = wy0·s0
// + wy1·s1 from its two source rows, at i and again at i+1 (the same
// steps, so the same bits), then lerp2's p and q from them, stored
// interleaved at elements 1 + 2i of the row. Registers: DI the output
// row, R8 x, R9 a source row's bytes, R10 the pairs' bytes in whole
// vectors, R11..R14 i0, i1, wy0, wy1, BX the byte offset of row r in
// them, CX its end, SI and DX the source rows, AX the offset in them.
#define BL2SETUP(VEC) \
	MOVQ  y+0(FP), DI      \
	MOVQ  x+8(FP), R8      \
	MOVQ  w+16(FP), R9     \
	LEAQ  -1(R9), R10      \
	ANDQ  $-VEC, R10       \
	SHLQ  $2, R10          \
	SHLQ  $2, R9           \
	MOVQ  i0+24(FP), R11   \
	MOVQ  i1+32(FP), R12   \
	MOVQ  wy0+40(FP), R13  \
	MOVQ  wy1+48(FP), R14  \
	MOVQ  rows+56(FP), CX  \
	SHLQ  $2, CX           \
	XORQ  BX, BX

// BL2ENDS writes the row's two end outputs (ei, ew: Lerp2Ends) from v
// at their taps, v = WY0·s0 + WY1·s1 lane 0 of those registers.
#define BL2V(OFF, WY0, WY1, V, T) \
	MOVQ    ei+72(FP), AX  \
	MOVLQSX OFF(AX), AX    \
	VMOVSS  (SI)(AX*4), V  \
	VMULSS  WY0, V, V      \
	VMOVSS  (DX)(AX*4), T  \
	VMULSS  WY1, T, T      \
	VADDSS  T, V, V

#define BL2ENDS(WY0, WY1) \
	BL2V(0, WY0, WY1, X0, X2)   \
	BL2V(4, WY0, WY1, X1, X2)   \
	MOVQ   ew+80(FP), AX        \
	VMULSS (AX), X0, X0         \
	VMULSS 4(AX), X1, X1        \
	VADDSS X1, X0, X0           \
	VMOVSS X0, (DI)             \
	BL2V(8, WY0, WY1, X0, X2)   \
	BL2V(12, WY0, WY1, X1, X2)  \
	MOVQ   ew+80(FP), AX        \
	VMULSS 8(AX), X0, X0        \
	VMULSS 12(AX), X1, X1       \
	VADDSS X1, X0, X0           \
	VMOVSS X0, -4(DI)(R9*2)

#define BL2ROW \
	MOVLQSX (R11)(BX*1), SI \
	IMULQ   R9, SI          \
	ADDQ    R8, SI          \
	MOVLQSX (R12)(BX*1), DX \
	IMULQ   R9, DX          \
	ADDQ    R8, DX

// func repeat2AVX2(y, x *float32, n int)
TEXT ·repeat2AVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VMOVUPS    (SI), Y0
	VUNPCKLPS  Y0, Y0, Y1          // x0 x0 x1 x1 | x4 x4 x5 x5
	VUNPCKHPS  Y0, Y0, Y2          // x2 x2 x3 x3 | x6 x6 x7 x7
	VPERM2F128 $0x20, Y2, Y1, Y3   // x0 .. x3, each twice
	VPERM2F128 $0x31, Y2, Y1, Y4   // x4 .. x7
	VMOVUPS    Y3, (DI)
	VMOVUPS    Y4, 32(DI)
	ADDQ       $32, SI
	ADDQ       $64, DI
	SUBQ       $8, CX
	JNZ        loop
	VZEROUPPER
	RET

// func repeat4AVX2(y, x *float32, n int)
TEXT ·repeat4AVX2(SB), NOSPLIT, $0-24
	MOVQ    y+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVDQU rsRep4<>+0(SB), Y12
	VMOVDQU rsRep4<>+32(SB), Y13
	VMOVDQU rsRep4<>+64(SB), Y14
	VMOVDQU rsRep4<>+96(SB), Y15
loop:
	VMOVUPS (SI), Y0
	VPERMPS Y0, Y12, Y1
	VPERMPS Y0, Y13, Y2
	VPERMPS Y0, Y14, Y3
	VPERMPS Y0, Y15, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ    $32, SI
	ADDQ    $128, DI
	SUBQ    $8, CX
	JNZ     loop
	VZEROUPPER
	RET

// func lerp2BodyAVX2(y, x *float32, n int, a, b float32)
// p = a·x[i] + b·x[i+1] and q = b·x[i] + a·x[i+1], each product rounded
// (VMULPS, then VADDPS: the twin's steps), stored interleaved.
TEXT ·lerp2BodyAVX2(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS a+24(FP), Y14
	VBROADCASTSS b+28(FP), Y15
loop:
	VMOVUPS    (SI), Y0            // x[i .. i+8)
	VMOVUPS    4(SI), Y1           // x[i+1 .. i+9)
	VMULPS     Y14, Y0, Y2
	VMULPS     Y15, Y1, Y3
	VADDPS     Y3, Y2, Y2          // p
	VMULPS     Y15, Y0, Y4
	VMULPS     Y14, Y1, Y5
	VADDPS     Y5, Y4, Y4          // q
	VUNPCKLPS  Y4, Y2, Y6          // p0 q0 p1 q1 | p4 q4 p5 q5
	VUNPCKHPS  Y4, Y2, Y7          // p2 q2 p3 q3 | p6 q6 p7 q7
	VPERM2F128 $0x20, Y7, Y6, Y8
	VPERM2F128 $0x31, Y7, Y6, Y9
	VMOVUPS    Y8, (DI)
	VMOVUPS    Y9, 32(DI)
	ADDQ       $32, SI
	ADDQ       $64, DI
	SUBQ       $8, CX
	JNZ        loop
	VZEROUPPER
	RET

// func repeat2AVX512(y, x *float32, n int)
TEXT ·repeat2AVX512(SB), NOSPLIT, $0-24
	MOVQ      y+0(FP), DI
	MOVQ      x+8(FP), SI
	MOVQ      n+16(FP), CX
	VMOVDQU32 rsZRep2<>+0(SB), Z30
	VMOVDQU32 rsZRep2<>+64(SB), Z31
loop:
	VMOVUPS (SI), Z0
	VPERMPS Z0, Z30, Z1
	VPERMPS Z0, Z31, Z2
	VMOVUPS Z1, (DI)
	VMOVUPS Z2, 64(DI)
	ADDQ    $64, SI
	ADDQ    $128, DI
	SUBQ    $16, CX
	JNZ     loop
	VZEROUPPER
	RET

// func repeat4AVX512(y, x *float32, n int)
TEXT ·repeat4AVX512(SB), NOSPLIT, $0-24
	MOVQ      y+0(FP), DI
	MOVQ      x+8(FP), SI
	MOVQ      n+16(FP), CX
	VMOVDQU32 rsZRep4<>+0(SB), Z28
	VMOVDQU32 rsZRep4<>+64(SB), Z29
	VMOVDQU32 rsZRep4<>+128(SB), Z30
	VMOVDQU32 rsZRep4<>+192(SB), Z31
loop:
	VMOVUPS (SI), Z0
	VPERMPS Z0, Z28, Z1
	VPERMPS Z0, Z29, Z2
	VPERMPS Z0, Z30, Z3
	VPERMPS Z0, Z31, Z4
	VMOVUPS Z1, (DI)
	VMOVUPS Z2, 64(DI)
	VMOVUPS Z3, 128(DI)
	VMOVUPS Z4, 192(DI)
	ADDQ    $64, SI
	ADDQ    $256, DI
	SUBQ    $16, CX
	JNZ     loop
	VZEROUPPER
	RET

// func lerp2BodyAVX512(y, x *float32, n int, a, b float32)
// lerp2BodyAVX2's steps sixteen lanes wide; VPERMT2PS interleaves.
TEXT ·lerp2BodyAVX512(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS a+24(FP), Z28
	VBROADCASTSS b+28(FP), Z29
	VMOVDQU32    rsZIlv<>+0(SB), Z30
	VMOVDQU32    rsZIlv<>+64(SB), Z31
loop:
	VMOVUPS    (SI), Z0
	VMOVUPS    4(SI), Z1
	VMULPS     Z28, Z0, Z2
	VMULPS     Z29, Z1, Z3
	VADDPS     Z3, Z2, Z2          // p
	VMULPS     Z29, Z0, Z4
	VMULPS     Z28, Z1, Z5
	VADDPS     Z5, Z4, Z4          // q
	VMOVAPS    Z2, Z6
	VPERMT2PS  Z4, Z30, Z6         // p0 q0 .. p7 q7
	VPERMT2PS  Z4, Z31, Z2         // p8 q8 .. p15 q15
	VMOVUPS    Z6, (DI)
	VMOVUPS    Z2, 64(DI)
	ADDQ       $64, SI
	ADDQ       $128, DI
	SUBQ       $16, CX
	JNZ        loop
	VZEROUPPER
	RET

// func blendBodyAVX2(y, x0, x1 *float32, n int, a, b float32)
// y = a·x0 + b·x1, each product rounded (the twin's steps). y may be x0
// or x1: each vector is loaded before its store.
TEXT ·blendBodyAVX2(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), DI
	MOVQ         x0+8(FP), SI
	MOVQ         x1+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS a+32(FP), Y14
	VBROADCASTSS b+36(FP), Y15
	XORQ         AX, AX
	MOVQ         CX, BX
	SUBQ         $16, BX           // the last start of a 16-element step
	JLT          tail
loop:
	VMULPS  (SI)(AX*4), Y14, Y0
	VMULPS  (DX)(AX*4), Y15, Y1
	VMULPS  32(SI)(AX*4), Y14, Y2
	VMULPS  32(DX)(AX*4), Y15, Y3
	VADDPS  Y1, Y0, Y0
	VADDPS  Y3, Y2, Y2
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y2, 32(DI)(AX*4)
	ADDQ    $16, AX
	CMPQ    AX, BX
	JLE     loop
tail:
	CMPQ    AX, CX                 // 0 or 8 elements left
	JEQ     done
	VMULPS  (SI)(AX*4), Y14, Y0
	VMULPS  (DX)(AX*4), Y15, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
done:
	VZEROUPPER
	RET

// func blendBodyAVX512(y, x0, x1 *float32, n int, a, b float32)
TEXT ·blendBodyAVX512(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), DI
	MOVQ         x0+8(FP), SI
	MOVQ         x1+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS a+32(FP), Z30
	VBROADCASTSS b+36(FP), Z31
	XORQ         AX, AX
loop:
	VMULPS  (SI)(AX*4), Z30, Z0
	VMULPS  (DX)(AX*4), Z31, Z1
	VADDPS  Z1, Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JLT     loop
	VZEROUPPER
	RET

// func blendLerp2AVX2(y, x *float32, w int, i0, i1 *int32, wy0, wy1 *float32, rows int, a, b float32, ei *int32, ew *float32)
TEXT ·blendLerp2AVX2(SB), NOSPLIT, $0-88
	BL2SETUP(8)
	LEAQ         -4(R9), AX
	MOVQ         AX, w+16(FP)      // the slot now holds the pairs' bytes
	VBROADCASTSS a+64(FP), Y12
	VBROADCASTSS b+68(FP), Y13
row:
	BL2ROW
	VBROADCASTSS (R13)(BX*1), Y14
	VBROADCASTSS (R14)(BX*1), Y15
	XORQ         AX, AX
	CMPQ         AX, R10
	JGE          tail
vec:
	VMULPS     (SI)(AX*1), Y14, Y0
	VMULPS     (DX)(AX*1), Y15, Y1
	VADDPS     Y1, Y0, Y0          // v[i .. i+8)
	VMULPS     4(SI)(AX*1), Y14, Y1
	VMULPS     4(DX)(AX*1), Y15, Y2
	VADDPS     Y2, Y1, Y1          // v[i+1 .. i+9)
	VMULPS     Y12, Y0, Y2
	VMULPS     Y13, Y1, Y3
	VADDPS     Y3, Y2, Y2          // p
	VMULPS     Y13, Y0, Y4
	VMULPS     Y12, Y1, Y5
	VADDPS     Y5, Y4, Y4          // q
	VUNPCKLPS  Y4, Y2, Y6
	VUNPCKHPS  Y4, Y2, Y7
	VPERM2F128 $0x20, Y7, Y6, Y8
	VPERM2F128 $0x31, Y7, Y6, Y9
	VMOVUPS    Y8, 4(DI)(AX*2)
	VMOVUPS    Y9, 36(DI)(AX*2)
	ADDQ       $32, AX
	CMPQ       AX, R10
	JLT        vec
tail:
	CMPQ   AX, w+16(FP)
	JGE    next
	VMOVSS (SI)(AX*1), X0
	VMULSS X14, X0, X0
	VMOVSS (DX)(AX*1), X1
	VMULSS X15, X1, X1
	VADDSS X1, X0, X0
	VMOVSS 4(SI)(AX*1), X1
	VMULSS X14, X1, X1
	VMOVSS 4(DX)(AX*1), X2
	VMULSS X15, X2, X2
	VADDSS X2, X1, X1
	VMULSS X12, X0, X2
	VMULSS X13, X1, X3
	VADDSS X3, X2, X2
	VMOVSS X2, 4(DI)(AX*2)
	VMULSS X13, X0, X4
	VMULSS X12, X1, X5
	VADDSS X5, X4, X4
	VMOVSS X4, 8(DI)(AX*2)
	ADDQ   $4, AX
	JMP    tail
next:
	BL2ENDS(X14, X15)
	LEAQ (DI)(R9*2), DI
	ADDQ $4, BX
	CMPQ BX, CX
	JLT  row
	VZEROUPPER
	RET

// func blendLerp2AVX512(y, x *float32, w int, i0, i1 *int32, wy0, wy1 *float32, rows int, a, b float32, ei *int32, ew *float32)
// The last w-1 mod 16 pairs go as one masked step: K1 their lanes of
// the sources, K2 and K3 the two stores' lanes of their 2·(w-1 mod 16)
// outputs.
TEXT ·blendLerp2AVX512(SB), NOSPLIT, $0-88
	BL2SETUP(16)
	VBROADCASTSS a+64(FP), Z28
	VBROADCASTSS b+68(FP), Z29
	VMOVDQU32    rsZIlv<>+0(SB), Z30
	VMOVDQU32    rsZIlv<>+64(SB), Z31
	MOVQ         w+16(FP), AX
	DECQ         AX
	ANDQ         $15, AX           // t: pairs in the masked step
	MOVL         $1, DX
	SHLXL        AX, DX, SI
	DECL         SI
	KMOVW        SI, K1
	SHLL         $1, AX
	SHLXL        AX, DX, SI
	DECL         SI
	KMOVW        SI, K2
	SHRL         $16, SI
	KMOVW        SI, K3
row:
	BL2ROW
	VBROADCASTSS (R13)(BX*1), Z26
	VBROADCASTSS (R14)(BX*1), Z27
	XORQ         AX, AX
	CMPQ         AX, R10
	JGE          tail
vec:
	VMULPS    (SI)(AX*1), Z26, Z0
	VMULPS    (DX)(AX*1), Z27, Z1
	VADDPS    Z1, Z0, Z0           // v[i .. i+16)
	VMULPS    4(SI)(AX*1), Z26, Z1
	VMULPS    4(DX)(AX*1), Z27, Z2
	VADDPS    Z2, Z1, Z1           // v[i+1 .. i+17)
	VMULPS    Z28, Z0, Z2
	VMULPS    Z29, Z1, Z3
	VADDPS    Z3, Z2, Z2           // p
	VMULPS    Z29, Z0, Z4
	VMULPS    Z28, Z1, Z5
	VADDPS    Z5, Z4, Z4           // q
	VMOVAPS   Z2, Z6
	VPERMT2PS Z4, Z30, Z6
	VPERMT2PS Z4, Z31, Z2
	VMOVUPS   Z6, 4(DI)(AX*2)
	VMOVUPS   Z2, 68(DI)(AX*2)
	ADDQ      $64, AX
	CMPQ      AX, R10
	JLT       vec
tail:
	KORTESTW  K1, K1               // no pairs left over
	JZ        next
	VMOVUPS.Z (SI)(AX*1), K1, Z0   // masked: nothing read past the row
	VMOVUPS.Z (DX)(AX*1), K1, Z1
	VMOVUPS.Z 4(SI)(AX*1), K1, Z2
	VMOVUPS.Z 4(DX)(AX*1), K1, Z3
	VMULPS    Z26, Z0, Z0
	VMULPS    Z27, Z1, Z1
	VADDPS    Z1, Z0, Z0
	VMULPS    Z26, Z2, Z2
	VMULPS    Z27, Z3, Z3
	VADDPS    Z3, Z2, Z1
	VMULPS    Z28, Z0, Z2
	VMULPS    Z29, Z1, Z3
	VADDPS    Z3, Z2, Z2
	VMULPS    Z29, Z0, Z4
	VMULPS    Z28, Z1, Z5
	VADDPS    Z5, Z4, Z4
	VMOVAPS   Z2, Z6
	VPERMT2PS Z4, Z30, Z6
	VPERMT2PS Z4, Z31, Z2
	VMOVUPS   Z6, K2, 4(DI)(AX*2)
	VMOVUPS   Z2, K3, 68(DI)(AX*2)
next:
	BL2ENDS(X26, X27)
	LEAQ (DI)(R9*2), DI
	ADDQ $4, BX
	CMPQ BX, CX
	JLT  row
	VZEROUPPER
	RET
