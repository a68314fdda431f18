//go:build !purego

#include "textflag.h"

// NEON elementwise kernels without transcendental functions (those are in
// math_arm64.s), for n a multiple of 4 (checked in Go). The loops take 4
// vectors (16 floats) per step, then single vectors; every vector is
// loaded before its result is stored, so dst may be an input. Stores are
// plain: the stream flag of the x86 kernels (non-temporal stores) has no
// counterpart here. Go's assembler lacks the vector floating-point
// instructions, so they are WORDs with the GNU form in the comment
// (neon_words_test.go checks each against the disassembly).

// Binary loops: R0 = dst, R1 = a, R2 = b, R3/R4 = a/b bytes per 4
// vectors (64, or 0 for a splat), R8/R9 the same per vector, R5 = steps
// of 4 vectors, R7 = single vectors left. The operation itself sits
// between LOAD4 and STORE4 (v0..v3 = v0..v3 op v4..v7), and between
// LOAD1 and STORE1 (v0 = v0 op v4).
#define LOAD4 \
	VLD1.P (R1)(R3), [V0.S4, V1.S4, V2.S4, V3.S4] \
	VLD1.P (R2)(R4), [V4.S4, V5.S4, V6.S4, V7.S4]

#define STORE4(L) \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0) \
	SUB    $1, R5                               \
	CBNZ   R5, L

#define LOAD1 \
	VLD1.P (R1)(R8), [V0.S4] \
	VLD1.P (R2)(R9), [V4.S4]

#define STORE1(L) \
	VST1.P [V0.S4], 16(R0) \
	SUB    $1, R7          \
	B      L

// func ewBinaryNEON(dst, a, b *float32, sa, sb, n int, op EwBinary)
//
// FMAX and FMIN are Go's max and min: a NaN operand gives a NaN, and
// max(-0, +0) = +0, min(-0, +0) = -0.
TEXT ·ewBinaryNEON(SB), NOSPLIT, $0-56
	MOVD dst+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD sa+24(FP), R3
	MOVD sb+32(FP), R4
	MOVD n+40(FP), R5
	MOVD op+48(FP), R6
	LSR  $2, R3, R8
	LSR  $2, R4, R9
	LSR  $2, R5
	AND  $3, R5, R7
	LSR  $2, R5
	CMP  $1, R6
	BEQ  sub
	CMP  $2, R6
	BEQ  mul
	CMP  $3, R6
	BEQ  div
	CMP  $4, R6
	BEQ  max
	CMP  $5, R6
	BEQ  min

	CBZ R5, add1
add4:
	LOAD4
	WORD $0x4e24d400 // fadd v0.4s, v0.4s, v4.4s
	WORD $0x4e25d421 // fadd v1.4s, v1.4s, v5.4s
	WORD $0x4e26d442 // fadd v2.4s, v2.4s, v6.4s
	WORD $0x4e27d463 // fadd v3.4s, v3.4s, v7.4s
	STORE4(add4)
add1:
	CBZ R7, done
	LOAD1
	WORD $0x4e24d400 // fadd v0.4s, v0.4s, v4.4s
	STORE1(add1)

sub:
	CBZ R5, sub1
sub4:
	LOAD4
	WORD $0x4ea4d400 // fsub v0.4s, v0.4s, v4.4s
	WORD $0x4ea5d421 // fsub v1.4s, v1.4s, v5.4s
	WORD $0x4ea6d442 // fsub v2.4s, v2.4s, v6.4s
	WORD $0x4ea7d463 // fsub v3.4s, v3.4s, v7.4s
	STORE4(sub4)
sub1:
	CBZ R7, done
	LOAD1
	WORD $0x4ea4d400 // fsub v0.4s, v0.4s, v4.4s
	STORE1(sub1)

mul:
	CBZ R5, mul1
mul4:
	LOAD4
	WORD $0x6e24dc00 // fmul v0.4s, v0.4s, v4.4s
	WORD $0x6e25dc21 // fmul v1.4s, v1.4s, v5.4s
	WORD $0x6e26dc42 // fmul v2.4s, v2.4s, v6.4s
	WORD $0x6e27dc63 // fmul v3.4s, v3.4s, v7.4s
	STORE4(mul4)
mul1:
	CBZ R7, done
	LOAD1
	WORD $0x6e24dc00 // fmul v0.4s, v0.4s, v4.4s
	STORE1(mul1)

div:
	CBZ R5, div1
div4:
	LOAD4
	WORD $0x6e24fc00 // fdiv v0.4s, v0.4s, v4.4s
	WORD $0x6e25fc21 // fdiv v1.4s, v1.4s, v5.4s
	WORD $0x6e26fc42 // fdiv v2.4s, v2.4s, v6.4s
	WORD $0x6e27fc63 // fdiv v3.4s, v3.4s, v7.4s
	STORE4(div4)
div1:
	CBZ R7, done
	LOAD1
	WORD $0x6e24fc00 // fdiv v0.4s, v0.4s, v4.4s
	STORE1(div1)

max:
	CBZ R5, max1
max4:
	LOAD4
	WORD $0x4e24f400 // fmax v0.4s, v0.4s, v4.4s
	WORD $0x4e25f421 // fmax v1.4s, v1.4s, v5.4s
	WORD $0x4e26f442 // fmax v2.4s, v2.4s, v6.4s
	WORD $0x4e27f463 // fmax v3.4s, v3.4s, v7.4s
	STORE4(max4)
max1:
	CBZ R7, done
	LOAD1
	WORD $0x4e24f400 // fmax v0.4s, v0.4s, v4.4s
	STORE1(max1)

min:
	CBZ R5, min1
min4:
	LOAD4
	WORD $0x4ea4f400 // fmin v0.4s, v0.4s, v4.4s
	WORD $0x4ea5f421 // fmin v1.4s, v1.4s, v5.4s
	WORD $0x4ea6f442 // fmin v2.4s, v2.4s, v6.4s
	WORD $0x4ea7f463 // fmin v3.4s, v3.4s, v7.4s
	STORE4(min4)
min1:
	CBZ R7, done
	LOAD1
	WORD $0x4ea4f400 // fmin v0.4s, v0.4s, v4.4s
	STORE1(min1)

done:
	RET

// Bit-level loops: R0 = dst, R1 = x, R5 = steps of 4 vectors, R7 =
// single vectors left; v0..v3 = op(v0..v3) between LOADX4 and STORE4.
#define LOADX4 VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
#define LOADX1 VLD1.P 16(R1), [V0.S4]

// func ewBitsNEON(dst, x *float32, n int, op int)
//
// relu is x < 0 ? 0 : x, the lanes with x < 0 cleared (NaN and -0
// compare false and pass); neg and abs flip and clear the sign bit, NaNs
// included.
TEXT ·ewBitsNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R5
	MOVD op+24(FP), R6
	LSR  $2, R5
	AND  $3, R5, R7
	LSR  $2, R5
	CMP  $1, R6 // ewBitsNeg
	BEQ  neg
	CMP  $2, R6 // ewBitsAbs
	BEQ  abs

	CBZ R5, relu1
relu4:
	LOADX4
	WORD $0x4ea0e804 // fcmlt v4.4s, v0.4s, #0
	WORD $0x4ea0e825 // fcmlt v5.4s, v1.4s, #0
	WORD $0x4ea0e846 // fcmlt v6.4s, v2.4s, #0
	WORD $0x4ea0e867 // fcmlt v7.4s, v3.4s, #0
	WORD $0x4e641c00 // bic v0.16b, v0.16b, v4.16b
	WORD $0x4e651c21 // bic v1.16b, v1.16b, v5.16b
	WORD $0x4e661c42 // bic v2.16b, v2.16b, v6.16b
	WORD $0x4e671c63 // bic v3.16b, v3.16b, v7.16b
	STORE4(relu4)
relu1:
	CBZ R7, done
	LOADX1
	WORD $0x4ea0e804 // fcmlt v4.4s, v0.4s, #0
	WORD $0x4e641c00 // bic v0.16b, v0.16b, v4.16b
	STORE1(relu1)

neg:
	CBZ R5, neg1
neg4:
	LOADX4
	WORD $0x6ea0f800 // fneg v0.4s, v0.4s
	WORD $0x6ea0f821 // fneg v1.4s, v1.4s
	WORD $0x6ea0f842 // fneg v2.4s, v2.4s
	WORD $0x6ea0f863 // fneg v3.4s, v3.4s
	STORE4(neg4)
neg1:
	CBZ R7, done
	LOADX1
	WORD $0x6ea0f800 // fneg v0.4s, v0.4s
	STORE1(neg1)

abs:
	CBZ R5, abs1
abs4:
	LOADX4
	WORD $0x4ea0f800 // fabs v0.4s, v0.4s
	WORD $0x4ea0f821 // fabs v1.4s, v1.4s
	WORD $0x4ea0f842 // fabs v2.4s, v2.4s
	WORD $0x4ea0f863 // fabs v3.4s, v3.4s
	STORE4(abs4)
abs1:
	CBZ R7, done
	LOADX1
	WORD $0x4ea0f800 // fabs v0.4s, v0.4s
	STORE1(abs1)

done:
	RET
