//go:build amd64 && !purego

#include "textflag.h"

// The blendRows primitive (see row_blendrows.go): output row r is
// w0[r]·(row i0[r] of h) + w1[r]·(row i1[r] of h), rows counted from
// base, each product rounded (VMULPS) and then summed (VADDPS): Blend's
// steps.
//
// Registers: DI the output row, R8 h less base rows (an address only
// ever offset back into h), R9 a row's bytes, R10 its bytes in whole
// vectors, R11..R14 i0, i1, w0, w1, BX the byte offset of row r in them,
// CX its end, SI and DX the two source rows, AX the offset in a row.

#define SETUP(VEC) \
	MOVQ  y+0(FP), DI          \
	MOVQ  h+8(FP), R8          \
	MOVQ  width+16(FP), R9     \
	MOVQ  base+24(FP), AX      \
	IMULQ R9, AX               \
	SHLQ  $2, AX               \
	SUBQ  AX, R8               \
	MOVQ  R9, R10              \
	ANDQ  $-VEC, R10           \
	SHLQ  $2, R10              \
	SHLQ  $2, R9               \
	MOVQ  i0+32(FP), R11       \
	MOVQ  i1+40(FP), R12       \
	MOVQ  w0+48(FP), R13       \
	MOVQ  w1+56(FP), R14       \
	MOVQ  rows+64(FP), CX      \
	SHLQ  $2, CX               \
	XORQ  BX, BX

// ROWPTRS points SI and DX at row r's two source rows.
#define ROWPTRS \
	MOVLQSX (R11)(BX*1), SI \
	IMULQ   R9, SI          \
	ADDQ    R8, SI          \
	MOVLQSX (R12)(BX*1), DX \
	IMULQ   R9, DX          \
	ADDQ    R8, DX

// func blendRowsAVX2(y, h *float32, width, base int, i0, i1 *int32, w0, w1 *float32, rows int)
TEXT ·blendRowsAVX2(SB), NOSPLIT, $0-72
	SETUP(8)
row:
	ROWPTRS
	VBROADCASTSS (R13)(BX*1), Y14
	VBROADCASTSS (R14)(BX*1), Y15
	XORQ         AX, AX
	CMPQ         AX, R10
	JGE          tail
vec:
	VMULPS  (SI)(AX*1), Y14, Y0
	VMULPS  (DX)(AX*1), Y15, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, R10
	JLT     vec
tail:
	CMPQ   AX, R9
	JGE    next
	VMOVSS (SI)(AX*1), X0
	VMOVSS (DX)(AX*1), X1
	VMULSS X14, X0, X0
	VMULSS X15, X1, X1
	VADDSS X1, X0, X0
	VMOVSS X0, (DI)(AX*1)
	ADDQ   $4, AX
	JMP    tail
next:
	ADDQ R9, DI
	ADDQ $4, BX
	CMPQ BX, CX
	JLT  row
	VZEROUPPER
	RET

// func blendRowsAVX512(y, h *float32, width, base int, i0, i1 *int32, w0, w1 *float32, rows int)
TEXT ·blendRowsAVX512(SB), NOSPLIT, $0-72
	SETUP(16)
	MOVQ  R9, AX               // K1: the lanes of a row's last partial vector
	SUBQ  R10, AX
	SHRQ  $2, AX
	MOVL  $1, DX
	SHLXL AX, DX, DX
	DECL  DX
	KMOVW DX, K1
row:
	ROWPTRS
	VBROADCASTSS (R13)(BX*1), Z30
	VBROADCASTSS (R14)(BX*1), Z31
	XORQ         AX, AX
	CMPQ         AX, R10
	JGE          tail
vec:
	VMULPS  (SI)(AX*1), Z30, Z0
	VMULPS  (DX)(AX*1), Z31, Z1
	VADDPS  Z1, Z0, Z0
	VMOVUPS Z0, (DI)(AX*1)
	ADDQ    $64, AX
	CMPQ    AX, R10
	JLT     vec
tail:
	CMPQ      AX, R9
	JGE       next
	VMOVUPS.Z (SI)(AX*1), K1, Z0 // masked: nothing read or written past the row
	VMOVUPS.Z (DX)(AX*1), K1, Z1
	VMULPS    Z30, Z0, Z0
	VMULPS    Z31, Z1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)(AX*1)
next:
	ADDQ R9, DI
	ADDQ $4, BX
	CMPQ BX, CX
	JLT  row
	VZEROUPPER
	RET
