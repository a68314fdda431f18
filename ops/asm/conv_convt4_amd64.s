//go:build amd64 && !purego

#include "textflag.h"

// The 4×4-input transposed convolution of conv_convt4.go (kernel 4×4,
// stride 2, pad 1): tap sums as a GEMM whose vectors are the sixteen taps
// of one output channel, then each channel's 8×8 plane from its sums.

// ---------------------------------------------------------------------
// func convT4SumsAVX512(k int, x, w *float32, ldw int, c *float32)
// For cell < 16, v < 3, t < 16 (convT4SumsGo):
//
//	c[256v + 16·cell + t] = sum over q < k of x[16q + cell] · w[q·ldw + 16v + t]
//
// Eight cells at a time: each step loads the three channels' tap vectors
// once and broadcasts each cell's input into three FMAs (24
// accumulators, 11 loads per 24 FMAs).
// ---------------------------------------------------------------------

// CELL(r, B, A0, A1, A2): cell r's input broadcast into B, times the
// step's three tap vectors (Z24-Z26) into its accumulators.
#define CELL(r, B, A0, A1, A2) \
	VBROADCASTSS (4*r)(R9), B; \
	VFMADD231PS  Z24, B, A0;   \
	VFMADD231PS  Z25, B, A1;   \
	VFMADD231PS  Z26, B, A2

// STORE_CELL(r, A0, A1, A2): cell r's sums of the three channels.
#define STORE_CELL(r, A0, A1, A2) \
	VMOVUPS A0, (64*r)(DX);      \
	VMOVUPS A1, (1024+64*r)(DX); \
	VMOVUPS A2, (2048+64*r)(DX)

TEXT ·convT4SumsAVX512(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DI
	MOVQ ldw+24(FP), R8
	SHLQ $2, R8
	MOVQ c+32(FP), DX
	MOVQ $2, R11 // the two halves of the cells

half:
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
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ SI, R9  // the step's inputs (this half's cells)
	MOVQ DI, R10 // the step's tap vectors
	MOVQ CX, BX

step:
	VMOVUPS (R10), Z24
	VMOVUPS 64(R10), Z25
	VMOVUPS 128(R10), Z26
	CELL(0, Z27, Z0, Z1, Z2)
	CELL(1, Z28, Z3, Z4, Z5)
	CELL(2, Z27, Z6, Z7, Z8)
	CELL(3, Z28, Z9, Z10, Z11)
	CELL(4, Z27, Z12, Z13, Z14)
	CELL(5, Z28, Z15, Z16, Z17)
	CELL(6, Z27, Z18, Z19, Z20)
	CELL(7, Z28, Z21, Z22, Z23)
	ADDQ $64, R9
	ADDQ R8, R10
	DECQ BX
	JNZ  step

	STORE_CELL(0, Z0, Z1, Z2)
	STORE_CELL(1, Z3, Z4, Z5)
	STORE_CELL(2, Z6, Z7, Z8)
	STORE_CELL(3, Z9, Z10, Z11)
	STORE_CELL(4, Z12, Z13, Z14)
	STORE_CELL(5, Z15, Z16, Z17)
	STORE_CELL(6, Z18, Z19, Z20)
	STORE_CELL(7, Z21, Z22, Z23)
	ADDQ $32, SI  // the next eight cells
	ADDQ $512, DX
	DECQ R11
	JNZ  half
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func convT4PlanesAVX512(n int, p, bias, o *float32)
// For each of n channels, its 8×8 output plane o[64c:] from its tap sums
// p[256c:] (cell-major, sixteen taps a cell) and bias[c]
// (convT4PlanesGo). The sums transpose (T4, L4) into one register per
// tap (ky, kx), lanes by cell (iy, ix). Output cell (2j+py, 2i+px) takes
// taps (1, 3) of rows j and j-1 at py = 0, (2, 0) of rows j and j+1 at
// py = 1, and the same of columns: cells beyond the plane's edge are
// zeros, shifted in by VALIGND (an opmask clears the lanes a column
// shift carries across rows). Then the four phases interleave into the
// plane's rows.
// ---------------------------------------------------------------------

#include "transpose512_amd64.h"

// COLS(ky, ODD, EVEN): row ky of the taps summed over the columns:
// EVEN = tap (ky, 1) + tap (ky, 3) of the cell to the left,
// ODD = tap (ky, 2) + tap (ky, 0) of the cell to the right.
#define COLS(T0, T1, T2, T3, EVEN, ODD) \
	VALIGND.Z $15, Z16, T3, K1, Z25; \
	VADDPS    Z25, T1, EVEN;         \
	VALIGND.Z $1, T0, Z16, K2, Z25;  \
	VADDPS    Z25, T2, ODD

TEXT ·convT4PlanesAVX512(SB), NOSPLIT, $0-32
	MOVQ  n+0(FP), CX
	MOVQ  p+8(FP), SI
	MOVQ  bias+16(FP), R8
	MOVQ  o+24(FP), DI
	MOVL  $0xEEEE, AX
	KMOVW AX, K1 // lanes with a cell to their left (ix > 0)
	MOVL  $0x7777, AX
	KMOVW AX, K2 // lanes with a cell to their right (ix < 3)

plane:
	VMOVUPS 0(SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMOVUPS 256(SI), Z4
	VMOVUPS 320(SI), Z5
	VMOVUPS 384(SI), Z6
	VMOVUPS 448(SI), Z7
	VMOVUPS 512(SI), Z8
	VMOVUPS 576(SI), Z9
	VMOVUPS 640(SI), Z10
	VMOVUPS 704(SI), Z11
	VMOVUPS 768(SI), Z12
	VMOVUPS 832(SI), Z13
	VMOVUPS 896(SI), Z14
	VMOVUPS 960(SI), Z15
	TRANSPOSE16
	VPXORD Z16, Z16, Z16

	// Kernel row ky's column sums: Z(17+2ky) for even output columns,
	// Z(18+2ky) for odd ones.
	COLS(Z0, Z1, Z2, Z3, Z17, Z18)
	COLS(Z4, Z5, Z6, Z7, Z19, Z20)
	COLS(Z8, Z9, Z10, Z11, Z21, Z22)
	COLS(Z12, Z13, Z14, Z15, Z23, Z24)

	// The phases (py, px) in Z26 + 2py + px: even rows take kernel row 1
	// and row 3 of the cell above, odd rows row 2 and row 0 of the cell
	// below; then the bias.
	VALIGND      $12, Z16, Z23, Z25
	VADDPS       Z25, Z19, Z26
	VALIGND      $12, Z16, Z24, Z25
	VADDPS       Z25, Z20, Z27
	VALIGND      $4, Z17, Z16, Z25
	VADDPS       Z25, Z21, Z28
	VALIGND      $4, Z18, Z16, Z25
	VADDPS       Z25, Z22, Z29
	VBROADCASTSS (R8), Z30
	VADDPS       Z30, Z26, Z26
	VADDPS       Z30, Z27, Z27
	VADDPS       Z30, Z28, Z28
	VADDPS       Z30, Z29, Z29

	// Even rows' columns interleaved (rows 0, 2 in Z30; 4, 6 in Z31), odd
	// rows' (1, 3 in Z24; 5, 7 in Z25); then pairs of rows.
	VMOVUPS    convT4Zip<>+0(SB), Z30
	VPERMI2PS  Z27, Z26, Z30
	VMOVUPS    convT4Zip<>+64(SB), Z31
	VPERMI2PS  Z27, Z26, Z31
	VMOVUPS    convT4Zip<>+0(SB), Z24
	VPERMI2PS  Z29, Z28, Z24
	VMOVUPS    convT4Zip<>+64(SB), Z25
	VPERMI2PS  Z29, Z28, Z25
	VSHUFF32X4 $0x44, Z24, Z30, Z0
	VSHUFF32X4 $0xee, Z24, Z30, Z1
	VSHUFF32X4 $0x44, Z25, Z31, Z2
	VSHUFF32X4 $0xee, Z25, Z31, Z3
	VMOVUPS    Z0, (DI)
	VMOVUPS    Z1, 64(DI)
	VMOVUPS    Z2, 128(DI)
	VMOVUPS    Z3, 192(DI)

	ADDQ $1024, SI
	ADDQ $4, R8
	ADDQ $256, DI
	DECQ CX
	JNZ  plane
	VZEROUPPER
	RET

// convT4Zip: lanes 0-7 of two registers interleaved (a0 b0 a1 b1 ...),
// then lanes 8-15.
DATA convT4Zip<>+0(SB)/4, $0
DATA convT4Zip<>+4(SB)/4, $16
DATA convT4Zip<>+8(SB)/4, $1
DATA convT4Zip<>+12(SB)/4, $17
DATA convT4Zip<>+16(SB)/4, $2
DATA convT4Zip<>+20(SB)/4, $18
DATA convT4Zip<>+24(SB)/4, $3
DATA convT4Zip<>+28(SB)/4, $19
DATA convT4Zip<>+32(SB)/4, $4
DATA convT4Zip<>+36(SB)/4, $20
DATA convT4Zip<>+40(SB)/4, $5
DATA convT4Zip<>+44(SB)/4, $21
DATA convT4Zip<>+48(SB)/4, $6
DATA convT4Zip<>+52(SB)/4, $22
DATA convT4Zip<>+56(SB)/4, $7
DATA convT4Zip<>+60(SB)/4, $23
DATA convT4Zip<>+64(SB)/4, $8
DATA convT4Zip<>+68(SB)/4, $24
DATA convT4Zip<>+72(SB)/4, $9
DATA convT4Zip<>+76(SB)/4, $25
DATA convT4Zip<>+80(SB)/4, $10
DATA convT4Zip<>+84(SB)/4, $26
DATA convT4Zip<>+88(SB)/4, $11
DATA convT4Zip<>+92(SB)/4, $27
DATA convT4Zip<>+96(SB)/4, $12
DATA convT4Zip<>+100(SB)/4, $28
DATA convT4Zip<>+104(SB)/4, $13
DATA convT4Zip<>+108(SB)/4, $29
DATA convT4Zip<>+112(SB)/4, $14
DATA convT4Zip<>+116(SB)/4, $30
DATA convT4Zip<>+120(SB)/4, $15
DATA convT4Zip<>+124(SB)/4, $31
GLOBL convT4Zip<>(SB), RODATA|NOPTR, $128
