//go:build amd64 && !purego

#include "textflag.h"

// func prefetchWriteAVX512(p *float32, lines int)
// PREFETCHW of lines cache lines from p on (lines >= 1). Go's assembler
// has no PREFETCHW mnemonic: it is 0F 0D /1, here with ModRM 0x0E,
// (SI). Every CPU with AVX-512 has it (CPUID PRFCHW), hence the name:
// only the AVX-512 kernels' plans call it.
TEXT ·prefetchWriteAVX512(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ lines+8(FP), CX

loop:
	BYTE $0x0F; BYTE $0x0D; BYTE $0x0E // prefetchw (%rsi)
	ADDQ $64, SI
	DECQ CX
	JNZ  loop
	RET

// func prefetchWriteStridedAVX512(p *float32, stride, n int)
// PREFETCHW of the line holding p[i·stride] for i < n (n >= 1): a
// column of a row-major matrix, stride floats a row.
TEXT ·prefetchWriteStridedAVX512(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ stride+8(FP), DX
	SHLQ $2, DX
	MOVQ n+16(FP), CX

column:
	BYTE $0x0F; BYTE $0x0D; BYTE $0x0E // prefetchw (%rsi)
	ADDQ DX, SI
	DECQ CX
	JNZ  column
	RET
