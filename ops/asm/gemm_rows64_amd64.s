//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func gemmRows64AVX512(rows, k int, a *float32, rs, ps int, b, c *float32, ldc int, flags uint)
// C [rows×64] (+)= A [rows×k] · B, for 1 <= rows <= 4 and k >= 1: A read
// where it is (row r's step p at a + r·rs + p·ps bytes: in place, stored
// either way round), B four packed 16-column panels of k steps back to
// back (panel q's step p at b + (q·k + p)·64 bytes). Each step loads the
// four B rows once and broadcasts each row's A value into four FMAs; the
// sums start at zero and go over p in order, then (flags bit 0) add the
// old C: the FMAs of the other micro-kernels in the same order, so the
// same bits. See gemm_rows.go.
// ---------------------------------------------------------------------

#define ROWS AX
#define K    CX
#define PS   DX  // step stride of A, bytes
#define A0   R8  // A rows
#define A1   R9
#define A2   R10
#define A3   R11
#define PB   SI  // panels 0 and 1 (the second at PB + PSTR)
#define PB2  DI  // panels 2 and 3
#define PSTR BX  // panel stride, bytes
#define PC   R12
#define LDC  R13

// ROW4(A, T, C0, C1, C2, C3): one row's step: its A value broadcast
// into T, then into the four panels' sums.
#define ROW4(A, T, C0, C1, C2, C3) \
	VBROADCASTSS (A), T;     \
	VFMADD231PS  T, Z16, C0; \
	VFMADD231PS  T, Z17, C1; \
	VFMADD231PS  T, Z18, C2; \
	VFMADD231PS  T, Z19, C3

#define LOAD_B \
	VMOVUPS (PB), Z16;          \
	VMOVUPS (PB)(PSTR*1), Z17;  \
	VMOVUPS (PB2), Z18;         \
	VMOVUPS (PB2)(PSTR*1), Z19

#define NEXT_STEP \
	ADDQ $64, PB;  \
	ADDQ $64, PB2; \
	DECQ K

// OUT(C0, C1, C2, C3): a row of sums to PC (added to the old C with
// flags bit 0), then the next row; done after the last.
#define OUT(C0, C1, C2, C3) \
	VMOVUPS C0, (PC);         \
	VMOVUPS C1, 64(PC);       \
	VMOVUPS C2, 128(PC);      \
	VMOVUPS C3, 192(PC);      \
	ADDQ    LDC, PC;          \
	DECQ    ROWS;             \
	JZ      done
#define ADD_OLD(C0, C1, C2, C3, AT) \
	VADDPS (AT), C0, C0;      \
	VADDPS 64(AT), C1, C1;    \
	VADDPS 128(AT), C2, C2;   \
	VADDPS 192(AT), C3, C3

TEXT ·gemmRows64AVX512(SB), NOSPLIT, $0-72
	MOVQ rows+0(FP), ROWS
	MOVQ k+8(FP), K
	MOVQ a+16(FP), A0
	MOVQ rs+24(FP), R14
	LEAQ (A0)(R14*1), A1
	LEAQ (A1)(R14*1), A2
	LEAQ (A2)(R14*1), A3
	MOVQ ps+32(FP), PS
	MOVQ b+40(FP), PB
	MOVQ K, PSTR
	SHLQ $6, PSTR // k·64 bytes
	LEAQ (PB)(PSTR*2), PB2
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	CMPQ ROWS, $2
	JLT  loop1
	JEQ  loop2
	CMPQ ROWS, $3
	JEQ  loop3

loop4:
	LOAD_B
	ROW4(A0, Z20, Z0, Z1, Z2, Z3)
	ROW4(A1, Z21, Z4, Z5, Z6, Z7)
	ROW4(A2, Z22, Z8, Z9, Z10, Z11)
	ROW4(A3, Z23, Z12, Z13, Z14, Z15)
	ADDQ PS, A0
	ADDQ PS, A1
	ADDQ PS, A2
	ADDQ PS, A3
	NEXT_STEP
	JNZ  loop4
	JMP  store

loop3:
	LOAD_B
	ROW4(A0, Z20, Z0, Z1, Z2, Z3)
	ROW4(A1, Z21, Z4, Z5, Z6, Z7)
	ROW4(A2, Z22, Z8, Z9, Z10, Z11)
	ADDQ PS, A0
	ADDQ PS, A1
	ADDQ PS, A2
	NEXT_STEP
	JNZ  loop3
	JMP  store

loop2:
	LOAD_B
	ROW4(A0, Z20, Z0, Z1, Z2, Z3)
	ROW4(A1, Z21, Z4, Z5, Z6, Z7)
	ADDQ PS, A0
	ADDQ PS, A1
	NEXT_STEP
	JNZ  loop2
	JMP  store

loop1:
	LOAD_B
	ROW4(A0, Z20, Z0, Z1, Z2, Z3)
	ADDQ PS, A0
	NEXT_STEP
	JNZ  loop1

store:
	MOVQ c+48(FP), PC
	MOVQ ldc+56(FP), LDC
	SHLQ $2, LDC
	TESTQ $1, flags+64(FP)
	JZ    plain
	// Accumulate: each row's old C added first (rows past the count are
	// not read: the row count ends the stores below).
	MOVQ  PC, R14
	ADD_OLD(Z0, Z1, Z2, Z3, R14)
	CMPQ  ROWS, $1
	JEQ   plain
	ADDQ  LDC, R14
	ADD_OLD(Z4, Z5, Z6, Z7, R14)
	CMPQ  ROWS, $2
	JEQ   plain
	ADDQ  LDC, R14
	ADD_OLD(Z8, Z9, Z10, Z11, R14)
	CMPQ  ROWS, $3
	JEQ   plain
	ADDQ  LDC, R14
	ADD_OLD(Z12, Z13, Z14, Z15, R14)

plain:
	OUT(Z0, Z1, Z2, Z3)
	OUT(Z4, Z5, Z6, Z7)
	OUT(Z8, Z9, Z10, Z11)
	OUT(Z12, Z13, Z14, Z15)

done:
	VZEROUPPER
	RET
