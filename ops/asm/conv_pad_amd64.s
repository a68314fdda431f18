//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func padRowsAVX512(dst, src *float32, rows, w, wp, pl int, masks *uint32, chunks int)
// For r < rows, j < wp (padRowsGo): dst[r·wp + j] = src[r·w + j - pl]
// where 0 <= j - pl < w, else 0. Row r is written in chunks of sixteen
// floats; chunk c loads src[r·w + 16c - pl + l] for the lanes l in the
// low half of masks[c] (zeros elsewhere: lanes before or past the input
// row read nothing, so a chunk may start before src) and stores the
// lanes in its high half (the last chunk's end at wp).
// ---------------------------------------------------------------------
TEXT ·padRowsAVX512(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ w+24(FP), R8
	SHLQ $2, R8          // src row, bytes
	MOVQ wp+32(FP), R9
	SHLQ $2, R9          // dst row, bytes
	MOVQ pl+40(FP), R10
	SHLQ $2, R10
	SUBQ R10, SI         // chunk 0 of row 0 reads from src - pl
	MOVQ masks+48(FP), R11
	MOVQ chunks+56(FP), R12

row:
	MOVQ SI, AX
	MOVQ DI, DX
	XORQ BX, BX

chunk:
	MOVL      (R11)(BX*4), R10
	KMOVW     R10, K1
	SHRL      $16, R10
	KMOVW     R10, K2
	VMOVUPS.Z (AX), K1, Z0
	VMOVUPS   Z0, K2, (DX)
	ADDQ      $64, AX
	ADDQ      $64, DX
	INCQ      BX
	CMPQ      BX, R12
	JLT       chunk

	ADDQ R8, SI
	ADDQ R9, DI
	DECQ CX
	JNZ  row
	VZEROUPPER
	RET
