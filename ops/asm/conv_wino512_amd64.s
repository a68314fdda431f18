//go:build amd64 && !purego

#include "textflag.h"

// Winograd F(2×2, 3×3) transforms for sixteen tiles on zmm; see
// winoIn16Kernel and winoOut16Kernel (conv_wino_kernels.go) and their
// twins winoIn16Go and winoOut16Go for the exact arithmetic, which these
// follow operation for operation.

// winoOdd16<>: lane j takes element 2j+1 of the 32 in two registers
// (·evenLanes16, conv_depthwise_amd64.s, the even ones).
DATA winoOdd16<>+0(SB)/4, $1
DATA winoOdd16<>+4(SB)/4, $3
DATA winoOdd16<>+8(SB)/4, $5
DATA winoOdd16<>+12(SB)/4, $7
DATA winoOdd16<>+16(SB)/4, $9
DATA winoOdd16<>+20(SB)/4, $11
DATA winoOdd16<>+24(SB)/4, $13
DATA winoOdd16<>+28(SB)/4, $15
DATA winoOdd16<>+32(SB)/4, $17
DATA winoOdd16<>+36(SB)/4, $19
DATA winoOdd16<>+40(SB)/4, $21
DATA winoOdd16<>+44(SB)/4, $23
DATA winoOdd16<>+48(SB)/4, $25
DATA winoOdd16<>+52(SB)/4, $27
DATA winoOdd16<>+56(SB)/4, $29
DATA winoOdd16<>+60(SB)/4, $31
GLOBL winoOdd16<>(SB), RODATA|NOPTR, $64

// winoZipLo16<> and winoZipHi16<>: the interleave of two registers a, b
// as a0 b0 a1 b1 ... (lanes 0-7 of each, then 8-15).
DATA winoZipLo16<>+0(SB)/4, $0
DATA winoZipLo16<>+4(SB)/4, $16
DATA winoZipLo16<>+8(SB)/4, $1
DATA winoZipLo16<>+12(SB)/4, $17
DATA winoZipLo16<>+16(SB)/4, $2
DATA winoZipLo16<>+20(SB)/4, $18
DATA winoZipLo16<>+24(SB)/4, $3
DATA winoZipLo16<>+28(SB)/4, $19
DATA winoZipLo16<>+32(SB)/4, $4
DATA winoZipLo16<>+36(SB)/4, $20
DATA winoZipLo16<>+40(SB)/4, $5
DATA winoZipLo16<>+44(SB)/4, $21
DATA winoZipLo16<>+48(SB)/4, $6
DATA winoZipLo16<>+52(SB)/4, $22
DATA winoZipLo16<>+56(SB)/4, $7
DATA winoZipLo16<>+60(SB)/4, $23
GLOBL winoZipLo16<>(SB), RODATA|NOPTR, $64
DATA winoZipHi16<>+0(SB)/4, $8
DATA winoZipHi16<>+4(SB)/4, $24
DATA winoZipHi16<>+8(SB)/4, $9
DATA winoZipHi16<>+12(SB)/4, $25
DATA winoZipHi16<>+16(SB)/4, $10
DATA winoZipHi16<>+20(SB)/4, $26
DATA winoZipHi16<>+24(SB)/4, $11
DATA winoZipHi16<>+28(SB)/4, $27
DATA winoZipHi16<>+32(SB)/4, $12
DATA winoZipHi16<>+36(SB)/4, $28
DATA winoZipHi16<>+40(SB)/4, $13
DATA winoZipHi16<>+44(SB)/4, $29
DATA winoZipHi16<>+48(SB)/4, $14
DATA winoZipHi16<>+52(SB)/4, $30
DATA winoZipHi16<>+56(SB)/4, $15
DATA winoZipHi16<>+60(SB)/4, $31
GLOBL winoZipHi16<>(SB), RODATA|NOPTR, $64

// ROWU16(row, u0, u1, u2, u3, rs): the column transform of one patch
// row: columns 0-15, 16-31, 2-17 and 18-33 loaded, rs = (|c0-15| +
// |c16-31|) + (|c2-17| + |c18-33|) lane by lane, the even and odd
// columns of each pair of loads dealt out by two permutes (x0, x1 from
// the first pair, x2, x3 from the second), then u0 = x0-x2, u1 = x1+x2,
// u2 = x2-x1, u3 = x1-x3. Z31 holds the |x| mask, Z30 and Z29 the even
// and odd indices; uses Z20-Z27.
#define ROWU16(row, u0, u1, u2, u3, rs) \
	VMOVUPS   (row), Z24;     \
	VMOVUPS   64(row), Z25;   \
	VMOVUPS   8(row), Z26;    \
	VMOVUPS   72(row), Z27;   \
	VPANDD    Z24, Z31, Z20;  \
	VPANDD    Z25, Z31, Z21;  \
	VPANDD    Z26, Z31, Z22;  \
	VPANDD    Z27, Z31, Z23;  \
	VADDPS    Z21, Z20, Z20;  \
	VADDPS    Z23, Z22, Z22;  \
	VADDPS    Z22, Z20, rs;   \
	VMOVAPS   Z24, u0;        \
	VPERMT2PS Z25, Z30, u0;   \
	VPERMT2PS Z25, Z29, Z24;  \
	VMOVAPS   Z26, u2;        \
	VPERMT2PS Z27, Z30, u2;   \
	VPERMT2PS Z27, Z29, Z26;  \
	VSUBPS    u2, u0, u0;     \
	VSUBPS    Z26, Z24, u3;   \
	VADDPS    u2, Z24, u1;    \
	VSUBPS    Z24, u2, u2

// STOREZ(x): store x at DI, then move DI to the next value.
#define STOREZ(x) \
	VMOVUPS x, (DI); \
	ADDQ    DX, DI

// func winoIn16AVX512(src *float32, wp int, dst *float32, dstride int, acc *[16]float32)
TEXT ·winoIn16AVX512(SB), NOSPLIT, $0-40
	MOVQ src+0(FP), SI
	MOVQ wp+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ dstride+24(FP), DX
	MOVQ acc+32(FP), AX
	SHLQ $2, BX                // row stride in bytes
	SHLQ $2, DX                // value stride in bytes
	MOVL         $0x7fffffff, R8
	VPBROADCASTD R8, Z31
	VMOVDQU32    ·evenLanes16(SB), Z30
	VMOVDQU32    winoOdd16<>(SB), Z29

	// Row r's u in Z(4r)-Z(4r+3), its |x| sums in Z(16+r).
	ROWU16(SI, Z0, Z1, Z2, Z3, Z16)
	LEAQ (SI)(BX*1), CX
	ROWU16(CX, Z4, Z5, Z6, Z7, Z17)
	LEAQ (SI)(BX*2), CX
	ROWU16(CX, Z8, Z9, Z10, Z11, Z18)
	ADDQ BX, CX
	ROWU16(CX, Z12, Z13, Z14, Z15, Z19)

	// acc += (r1 + r2) + (r0 + r3)
	VADDPS  Z18, Z17, Z17
	VADDPS  Z19, Z16, Z16
	VADDPS  Z16, Z17, Z17
	VADDPS  (AX), Z17, Z17
	VMOVUPS Z17, (AX)

	// V[0][b] = u0[b] - u2[b]
	VSUBPS Z8, Z0, Z20
	STOREZ(Z20)
	VSUBPS Z9, Z1, Z21
	STOREZ(Z21)
	VSUBPS Z10, Z2, Z22
	STOREZ(Z22)
	VSUBPS Z11, Z3, Z23
	STOREZ(Z23)

	// V[1][b] = u1[b] + u2[b]
	VADDPS Z8, Z4, Z20
	STOREZ(Z20)
	VADDPS Z9, Z5, Z21
	STOREZ(Z21)
	VADDPS Z10, Z6, Z22
	STOREZ(Z22)
	VADDPS Z11, Z7, Z23
	STOREZ(Z23)

	// V[2][b] = u2[b] - u1[b]
	VSUBPS Z4, Z8, Z20
	STOREZ(Z20)
	VSUBPS Z5, Z9, Z21
	STOREZ(Z21)
	VSUBPS Z6, Z10, Z22
	STOREZ(Z22)
	VSUBPS Z7, Z11, Z23
	STOREZ(Z23)

	// V[3][b] = u1[b] - u3[b]
	VSUBPS  Z12, Z4, Z20
	STOREZ(Z20)
	VSUBPS  Z13, Z5, Z21
	STOREZ(Z21)
	VSUBPS  Z14, Z6, Z22
	STOREZ(Z22)
	VSUBPS  Z15, Z7, Z23
	VMOVUPS Z23, (DI)
	VZEROUPPER
	RET

// SROW16(s0, s1): the column transform of one row a of product values
// at SI, the lanes of K1 loaded, the rest zero (then SI moves to the
// next row): s0 = (M0+M1)+M2, s1 = (M1-M2)-M3. Uses Z20-Z23.
#define SROW16(s0, s1) \
	VMOVUPS.Z (SI), K1, Z20; \
	ADDQ      DX, SI;        \
	VMOVUPS.Z (SI), K1, Z21; \
	ADDQ      DX, SI;        \
	VMOVUPS.Z (SI), K1, Z22; \
	ADDQ      DX, SI;        \
	VMOVUPS.Z (SI), K1, Z23; \
	ADDQ      DX, SI;        \
	VADDPS    Z21, Z20, s0;  \
	VADDPS    Z22, s0, s0;   \
	VSUBPS    Z22, Z21, s1;  \
	VSUBPS    Z23, s1, s1

// ZIPSTORE(c0, c1, row): store the 32 outputs of one row, column 2i
// from c0 and 2i+1 from c1, those of K2 (0-15) and K3 (16-31). Z29 and
// Z30 hold the interleave indices; uses Z20-Z21.
#define ZIPSTORE(c0, c1, row) \
	VMOVAPS   c0, Z20;         \
	VPERMT2PS c1, Z30, Z20;    \
	VPERMT2PS c1, Z29, c0;     \
	VMOVUPS   Z20, K2, (row);  \
	VMOVUPS   c0, K3, 64(row)

// MASK(k): k = the low CX bits set (CX <= 16). Uses AX.
#define MASK(k) \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX;     \
	KMOVW AX, k

// func winoOut16AVX512(src *float32, sstride int, y *float32, ldy int, bias float32, cols int)
TEXT ·winoOut16AVX512(SB), NOSPLIT, $0-48
	MOVQ src+0(FP), SI
	MOVQ sstride+8(FP), DX
	MOVQ y+16(FP), DI
	MOVQ ldy+24(FP), BX
	MOVQ cols+40(FP), R8
	SHLQ $2, DX
	SHLQ $2, BX
	VBROADCASTSS bias+32(FP), Z28
	VMOVDQU32    winoZipLo16<>(SB), Z30
	VMOVDQU32    winoZipHi16<>(SB), Z29

	// K1: the (cols+1)/2 tiles; K2, K3: columns 0-15 and 16-31 of cols.
	LEAQ    1(R8), CX
	SHRQ    $1, CX
	MASK(K1)
	MOVQ    R8, CX
	MOVQ    $16, R9
	CMPQ    CX, R9
	CMOVQGT R9, CX
	MASK(K2)
	MOVQ    R8, CX
	SUBQ    $16, CX
	MOVQ    $0, R9
	CMPQ    CX, R9
	CMOVQLT R9, CX
	MASK(K3)

	SROW16(Z0, Z1) // a = 0
	SROW16(Z2, Z3) // a = 1
	SROW16(Z4, Z5) // a = 2
	SROW16(Z6, Z7) // a = 3

	// Row 0: ((s0 + s1) + s2) + bias; row 1: ((s1 - s2) - s3) + bias.
	VADDPS Z2, Z0, Z8
	VADDPS Z4, Z8, Z8
	VADDPS Z28, Z8, Z8   // row 0, column 2i
	VADDPS Z3, Z1, Z9
	VADDPS Z5, Z9, Z9
	VADDPS Z28, Z9, Z9   // row 0, column 2i+1
	VSUBPS Z4, Z2, Z10
	VSUBPS Z6, Z10, Z10
	VADDPS Z28, Z10, Z10 // row 1, column 2i
	VSUBPS Z5, Z3, Z11
	VSUBPS Z7, Z11, Z11
	VADDPS Z28, Z11, Z11 // row 1, column 2i+1

	ZIPSTORE(Z8, Z9, DI)
	ADDQ BX, DI
	ZIPSTORE(Z10, Z11, DI)
	VZEROUPPER
	RET
