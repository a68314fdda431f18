//go:build !purego

#include "textflag.h"

// Upsampling row primitives, NEON: see row_resize_arm64.go. n is a
// whole number of 4-lane vectors, at least one; the Go wrappers run the
// rest. Vector arithmetic is WORDs with their GNU form beside them (see
// row_arm64.s); products and sums are separate instructions, never
// fused, so every lane has the Go twin's bits.

// func repeat2NEON(y, x *float32, n int)
TEXT ·repeat2NEON(SB), NOSPLIT, $0-24
	MOVD y+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
rep2:
	VLD1.P 16(R1), [V0.S4]
	VMOV   V0.B16, V1.B16
	VST2.P [V0.S4, V1.S4], 32(R0)  // interleaved: x0 x0 x1 x1 ...
	SUBS   $4, R2
	BNE    rep2
	RET

// func repeat4NEON(y, x *float32, n int)
TEXT ·repeat4NEON(SB), NOSPLIT, $0-24
	MOVD y+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
rep4:
	VLD1.P 16(R1), [V0.S4]
	VMOV   V0.B16, V1.B16
	VMOV   V0.B16, V2.B16
	VMOV   V0.B16, V3.B16
	VST4.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)
	SUBS   $4, R2
	BNE    rep4
	RET

// func lerp2BodyNEON(y, x *float32, n int, a, b float32)
// p = a·x[i] + b·x[i+1] in V2, q = b·x[i] + a·x[i+1] in V3, stored
// interleaved by VST2; a and b in every lane of V16 and V17.
TEXT ·lerp2BodyNEON(SB), NOSPLIT, $0-32
	MOVD  y+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  n+16(FP), R2
	MOVWU a+24(FP), R3
	VDUP  R3, V16.S4
	MOVWU b+28(FP), R3
	VDUP  R3, V17.S4
	ADD   $4, R1, R4               // x + 1
lerp:
	VLD1.P 16(R1), [V0.S4]
	VLD1.P 16(R4), [V1.S4]
	WORD   $0x6e30dc02 // fmul v2.4s, v0.4s, v16.4s
	WORD   $0x6e31dc24 // fmul v4.4s, v1.4s, v17.4s
	WORD   $0x4e24d442 // fadd v2.4s, v2.4s, v4.4s
	WORD   $0x6e31dc03 // fmul v3.4s, v0.4s, v17.4s
	WORD   $0x6e30dc25 // fmul v5.4s, v1.4s, v16.4s
	WORD   $0x4e25d463 // fadd v3.4s, v3.4s, v5.4s
	VST2.P [V2.S4, V3.S4], 32(R0)
	SUBS   $4, R2
	BNE    lerp
	RET

// func blendBodyNEON(y, x0, x1 *float32, n int, a, b float32)
TEXT ·blendBodyNEON(SB), NOSPLIT, $0-40
	MOVD  y+0(FP), R0
	MOVD  x0+8(FP), R1
	MOVD  x1+16(FP), R4
	MOVD  n+24(FP), R2
	MOVWU a+32(FP), R3
	VDUP  R3, V16.S4
	MOVWU b+36(FP), R3
	VDUP  R3, V17.S4
blend:
	VLD1.P 16(R1), [V0.S4]
	VLD1.P 16(R4), [V1.S4]
	WORD   $0x6e30dc02 // fmul v2.4s, v0.4s, v16.4s
	WORD   $0x6e31dc23 // fmul v3.4s, v1.4s, v17.4s
	WORD   $0x4e23d442 // fadd v2.4s, v2.4s, v3.4s
	VST1.P [V2.S4], 16(R0)
	SUBS   $4, R2
	BNE    blend
	RET
