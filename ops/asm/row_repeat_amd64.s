//go:build amd64 && !purego

#include "textflag.h"

// REPEATWIDE(vec, bytes): each of n values of x over s floats of y, as
// whole vectors of bytes, the last of each group ending at the group's
// end. n >= 1, s >= bytes/4.
#define REPEATWIDE(VEC, BYTES) \
	MOVQ y+0(FP), DI           \
	MOVQ x+8(FP), SI           \
	MOVQ n+16(FP), CX          \
	MOVQ s+24(FP), R8          \
	SHLQ $2, R8                \
	LEAQ -BYTES(R8), R9        \
group:                         \
	VBROADCASTSS (SI), VEC     \
	XORQ AX, AX                \
	CMPQ AX, R9                \
	JGE  last                  \
whole:                         \
	VMOVUPS VEC, (DI)(AX*1)    \
	ADDQ    $BYTES, AX         \
	CMPQ    AX, R9             \
	JLT     whole              \
last:                          \
	VMOVUPS VEC, (DI)(R9*1)    \
	ADDQ    R8, DI             \
	ADDQ    $4, SI             \
	DECQ    CX                 \
	JNZ     group              \
	VZEROUPPER                 \
	RET

// func repeatWideAVX512(y, x *float32, n, s int)
TEXT ·repeatWideAVX512(SB), NOSPLIT, $0-32
	REPEATWIDE(Z0, 64)

// func repeatWideAVX2(y, x *float32, n, s int)
TEXT ·repeatWideAVX2(SB), NOSPLIT, $0-32
	REPEATWIDE(Y0, 32)
