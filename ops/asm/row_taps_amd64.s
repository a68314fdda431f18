//go:build amd64 && !purego

#include "textflag.h"

// The lerpTaps primitive (see row_taps.go): blocks of 16 outputs, each
// reading its taps from the 32 sources at its base.

#define Y    DI
#define X    SI
#define BASE BX
#define MASK DX
#define R0   R8
#define R1   R9
#define W0   R10
#define W1   R11
#define NB   CX
#define B    AX
#define O    R13
#define S    R12
#define M    R14

// func lerpTapsPermAVX512(y, x *float32, base *int32, mask *uint32, r0, r1 *int32, w0, w1 *float32, blocks int)
TEXT ·lerpTapsPermAVX512(SB), NOSPLIT, $0-72
	MOVQ y+0(FP), Y
	MOVQ x+8(FP), X
	MOVQ base+16(FP), BASE
	MOVQ mask+24(FP), MASK
	MOVQ r0+32(FP), R0
	MOVQ r1+40(FP), R1
	MOVQ w0+48(FP), W0
	MOVQ w1+56(FP), W1
	MOVQ blocks+64(FP), NB
	XORQ B, B                        // block
	XORQ O, O                        // its first output
loop:
	MOVLQSX   (BASE)(B*4), S         // the block's first source
	MOVL      (MASK)(B*4), M
	CMPL      M, $-1
	JNE       part                   // not all 32 sources exist (the row's end)
	VMOVUPS   (X)(S*4), Z0           // unmasked where all exist: masked loads cost more
	VMOVUPS   64(X)(S*4), Z1
	JMP       taps
part:
	KMOVW     M, K1                  // sources base .. base+15 that exist
	SHRL      $16, M
	KMOVW     M, K2                  // and base+16 .. base+31
	VMOVUPS.Z (X)(S*4), K1, Z0       // masked: no read past the source
	VMOVUPS.Z 64(X)(S*4), K2, Z1
taps:
	VMOVDQU32 (R0)(O*4), Z2          // first taps, relative to base
	VMOVDQU32 (R1)(O*4), Z3          // second taps
	VPERMI2PS Z1, Z0, Z2             // Z2[j] = source base + r0[j]
	VPERMI2PS Z1, Z0, Z3
	VMULPS    (W0)(O*4), Z2, Z2      // rounded products, then their sum
	VMULPS    (W1)(O*4), Z3, Z3
	VADDPS    Z3, Z2, Z2
	VMOVUPS   Z2, (Y)(O*4)
	ADDQ      $16, O
	INCQ      B
	CMPQ      B, NB
	JLT       loop
	VZEROUPPER
	RET

// lerpTapsRows16AVX512 is the lerpTapsRows primitive: LerpTaps of rows
// source rows of w floats into rows output rows of ow, for narrow taps
// (every block within sixteen sources), blocks outer and rows inner, so
// each block's permute indices and tap weights are loaded once for the
// band rather than once per row: four whole blocks at a time from
// Z8-Z23 while groups last, then one block at a time, masked.
// Registers: SI the source row, DI the output row, CX the row, AX the
// block, BX its byte offset in the tables and the output rows, R8-R11
// the first sources of a group's blocks (bytes), R12 w·4, R13 ow·4, R14
// scratch.

// LROW(B, IA, IB, WA, WB, off) is one block of a row: the sources at
// byte offset B (already loaded into Z0 for B = none) picked by IA and
// IB, weighed by WA and WB, stored at off(DI)(BX).
#define LBLOCK(IA, IB, WA, WB, off) \
	VPERMPS Z0, IA, Z2;      \
	VPERMPS Z0, IB, Z3;      \
	VMULPS  WA, Z2, Z2;      \
	VMULPS  WB, Z3, Z3;      \
	VADDPS  Z3, Z2, Z2;      \
	VMOVUPS Z2, off(DI)(BX*1)

#define LTABLES(R, off, A, B, C, D) \
	VMOVUPS off(R)(BX*1), A;        \
	VMOVUPS off+64(R)(BX*1), B;     \
	VMOVUPS off+128(R)(BX*1), C;    \
	VMOVUPS off+192(R)(BX*1), D

// func lerpTapsRows16AVX512(y, x *float32, w, ow, rows int, base *int32, mask *uint32, r0, r1 *int32, w0, w1 *float32, blocks, groups int)
TEXT ·lerpTapsRows16AVX512(SB), NOSPLIT, $0-104
	MOVQ w+16(FP), R12
	SHLQ $2, R12
	MOVQ ow+24(FP), R13
	SHLQ $2, R13
	XORQ AX, AX
	XORQ BX, BX
	MOVQ groups+96(FP), R14
	SHLQ $2, R14
	MOVQ R14, groups+96(FP)  // now the blocks the groups cover
	CMPQ AX, R14
	JGE  single
group:
	MOVQ    r0+56(FP), R14
	LTABLES(R14, 0, Z8, Z9, Z10, Z11)
	MOVQ    r1+64(FP), R14
	LTABLES(R14, 0, Z12, Z13, Z14, Z15)
	MOVQ    w0+72(FP), R14
	LTABLES(R14, 0, Z16, Z17, Z18, Z19)
	MOVQ    w1+80(FP), R14
	LTABLES(R14, 0, Z20, Z21, Z22, Z23)
	MOVQ    base+40(FP), R14
	MOVLQSX (R14)(AX*4), R8
	MOVLQSX 4(R14)(AX*4), R9
	MOVLQSX 8(R14)(AX*4), R10
	MOVLQSX 12(R14)(AX*4), R11
	MOVQ    x+8(FP), SI
	MOVQ    y+0(FP), DI
	MOVQ    rows+32(FP), CX
grow:
	VMOVUPS (SI)(R8*4), Z0
	LBLOCK(Z8, Z12, Z16, Z20, 0)
	VMOVUPS (SI)(R9*4), Z0
	LBLOCK(Z9, Z13, Z17, Z21, 64)
	VMOVUPS (SI)(R10*4), Z0
	LBLOCK(Z10, Z14, Z18, Z22, 128)
	VMOVUPS (SI)(R11*4), Z0
	LBLOCK(Z11, Z15, Z19, Z23, 192)
	ADDQ    R12, SI
	ADDQ    R13, DI
	DECQ    CX
	JNZ     grow
	ADDQ    $4, AX
	ADDQ    $256, BX
	CMPQ    AX, groups+96(FP)
	JLT     group
single:
	CMPQ      AX, blocks+88(FP)
	JGE       done
	MOVQ      r0+56(FP), R14
	VMOVUPS   (R14)(BX*1), Z8
	MOVQ      r1+64(FP), R14
	VMOVUPS   (R14)(BX*1), Z12
	MOVQ      w0+72(FP), R14
	VMOVUPS   (R14)(BX*1), Z16
	MOVQ      w1+80(FP), R14
	VMOVUPS   (R14)(BX*1), Z20
	MOVQ      base+40(FP), R14
	MOVLQSX   (R14)(AX*4), R8
	MOVQ      mask+48(FP), R14
	KMOVW     (R14)(AX*4), K1   // sources base .. base+15 that exist
	MOVQ      x+8(FP), SI
	MOVQ      y+0(FP), DI
	MOVQ      rows+32(FP), CX
srow:
	VMOVUPS.Z (SI)(R8*4), K1, Z0
	LBLOCK(Z8, Z12, Z16, Z20, 0)
	ADDQ      R12, SI
	ADDQ      R13, DI
	DECQ      CX
	JNZ       srow
	INCQ      AX
	ADDQ      $64, BX
	JMP       single
done:
	VZEROUPPER
	RET
