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
