//go:build amd64 && !purego

#include "textflag.h"

// func scaleAddMaxF32AVX2(y, add *float32, n int, s float32) float32
//
// y[i] = y[i]·s + add[i] (two roundings, as Scale then Axpy), returning
// the max of the new y: NaN if any is NaN, -Inf for n = 0. One pass
// where the attention kernel's masked scores took three.

#define PY   DI
#define PA   SI
#define N    CX
#define TMP  AX
#define NEG  BX
#define S    Y15
#define MX0  Y14 // running maxima
#define MX1  Y13
#define NAN  Y12 // all-ones in lanes that met a NaN
#define MASK Y11

TEXT ·scaleAddMaxF32AVX2(SB), NOSPLIT, $0-36
	MOVQ         y+0(FP), PY
	MOVQ         add+8(FP), PA
	MOVQ         n+16(FP), N
	VBROADCASTSS s+24(FP), S
	MOVL         $0xff800000, TMP // -Inf
	VMOVD        TMP, X14         // VEX: no SSE write with dirty upper halves
	VBROADCASTSS X14, MX0
	VMOVAPS      MX0, MX1
	VXORPS       NAN, NAN, NAN

sam16:
	CMPQ    N, $16
	JB      sam8
	VMULPS  (PY), S, Y0
	VMULPS  32(PY), S, Y1
	VADDPS  (PA), Y0, Y0
	VADDPS  32(PA), Y1, Y1
	VMOVUPS Y0, (PY)
	VMOVUPS Y1, 32(PY)
	VMAXPS  Y0, MX0, MX0
	VMAXPS  Y1, MX1, MX1
	VCMPPS  $3, Y0, Y1, Y2 // unordered: either is NaN
	VORPS   Y2, NAN, NAN
	ADDQ    $64, PY
	ADDQ    $64, PA
	SUBQ    $16, N
	JMP     sam16

sam8:
	CMPQ    N, $8
	JB      samTail
	VMULPS  (PY), S, Y0
	VADDPS  (PA), Y0, Y0
	VMOVUPS Y0, (PY)
	VMAXPS  Y0, MX0, MX0
	VCMPPS  $3, Y0, Y0, Y2
	VORPS   Y2, NAN, NAN
	ADDQ    $32, PY
	ADDQ    $32, PA
	SUBQ    $8, N

samTail:
	TESTQ      N, N
	JZ         samFold
	LEAQ       ·rowTailMask+32(SB), TMP
	MOVQ       N, NEG
	NEGQ       NEG
	VMOVDQU    (TMP)(NEG*4), MASK
	VMASKMOVPS (PY), MASK, Y0
	VMASKMOVPS (PA), MASK, Y1
	VMULPS     Y0, S, Y0
	VADDPS     Y1, Y0, Y0
	VMASKMOVPS Y0, MASK, (PY)
	VBLENDVPS  MASK, Y0, MX1, Y0 // lanes past n: the max so far
	VMAXPS     Y0, MX1, MX1
	VCMPPS     $3, Y0, Y0, Y2
	VORPS      Y2, NAN, NAN

samFold:
	VMAXPS       MX1, MX0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVMSKPS    NAN, TMP
	TESTL        TMP, TMP
	JZ           samDone
	MOVL         $0x7fc00000, TMP
	VMOVD        TMP, X0

samDone:
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET
