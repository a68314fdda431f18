//go:build amd64 && !purego

#include "textflag.h"

// Row primitives, AVX-512: scale, norm, axpy and scaleAddMax (the
// exponentials are in row512_exp_amd64.s). See row512_amd64.go for each
// contract. Tails run under an opmask: nothing outside x[0:n] is read and
// nothing outside y[0:n] is written.

#define PY  DI // y
#define PX  SI // x (add for scaleAddMax)
#define N   CX // elements left
#define TMP AX

// TAILK sets opmask K to lanes 0..N-1 (1 <= N <= 15): (1<<N) - 1.
#define TAILK(K) \
	MOVL  $1, TMP; \
	SHLL  CX, TMP; \
	DECL  TMP;     \
	KMOVW TMP, K

// ---------------------------------------------------------------------
// func scaleF32AVX512(y *float32, n int, s float32)
// ---------------------------------------------------------------------
#define S Z31 // s in every lane

TEXT ·scaleF32AVX512(SB), NOSPLIT, $0-20
	MOVQ         y+0(FP), PY
	MOVQ         n+8(FP), N
	VBROADCASTSS s+16(FP), S

scale64:
	CMPQ    N, $64
	JB      scale16
	VMULPS  (PY), S, Z0
	VMULPS  64(PY), S, Z1
	VMULPS  128(PY), S, Z2
	VMULPS  192(PY), S, Z3
	VMOVUPS Z0, (PY)
	VMOVUPS Z1, 64(PY)
	VMOVUPS Z2, 128(PY)
	VMOVUPS Z3, 192(PY)
	ADDQ    $256, PY
	SUBQ    $64, N
	JMP     scale64

scale16:
	CMPQ    N, $16
	JB      scaleTail
	VMULPS  (PY), S, Z0
	VMOVUPS Z0, (PY)
	ADDQ    $64, PY
	SUBQ    $16, N
	JMP     scale16

scaleTail:
	TESTQ     N, N
	JZ        scaleDone
	TAILK(K1)
	VMOVUPS.Z (PY), K1, Z0
	VMULPS    Z0, S, Z0
	VMOVUPS   Z0, K1, (PY)

scaleDone:
	VZEROUPPER
	RET

#undef S

// ---------------------------------------------------------------------
// func axpyF32AVX512(y, x *float32, n int, a float32)
// ---------------------------------------------------------------------
#define A Z31 // a in every lane

TEXT ·axpyF32AVX512(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS a+24(FP), A

axpy64:
	CMPQ        N, $64
	JB          axpy16
	VMOVUPS     (PX), Z0
	VMOVUPS     64(PX), Z1
	VMOVUPS     128(PX), Z2
	VMOVUPS     192(PX), Z3
	VFMADD213PS (PY), A, Z0    // a·x + y
	VFMADD213PS 64(PY), A, Z1
	VFMADD213PS 128(PY), A, Z2
	VFMADD213PS 192(PY), A, Z3
	VMOVUPS     Z0, (PY)
	VMOVUPS     Z1, 64(PY)
	VMOVUPS     Z2, 128(PY)
	VMOVUPS     Z3, 192(PY)
	ADDQ        $256, PX
	ADDQ        $256, PY
	SUBQ        $64, N
	JMP         axpy64

axpy16:
	CMPQ        N, $16
	JB          axpyTail
	VMOVUPS     (PX), Z0
	VFMADD213PS (PY), A, Z0
	VMOVUPS     Z0, (PY)
	ADDQ        $64, PX
	ADDQ        $64, PY
	SUBQ        $16, N
	JMP         axpy16

axpyTail:
	TESTQ       N, N
	JZ          axpyDone
	TAILK(K1)
	VMOVUPS.Z   (PX), K1, Z0
	VMOVUPS.Z   (PY), K1, Z1
	VFMADD213PS Z1, A, Z0
	VMOVUPS     Z0, K1, (PY)

axpyDone:
	VZEROUPPER
	RET

#undef A

// ---------------------------------------------------------------------
// func normF32AVX512(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32)
// ---------------------------------------------------------------------
#define PS   R8  // scale
#define PB   R9  // bias
#define SS   R10 // bytes to advance scale per sixteen elements (0 or 64)
#define BS   R11 // same for bias
#define MHI  Z29
#define MLO  Z30
#define RSTD Z31

// NORM16(X, S, off) turns the sixteen x in X into y: ((x-mhi)-mlo)·r,
// then fma(·, scale, bias) with scale loaded into S; normF32AVX2's steps.
#define NORM16(X, S) \
	VSUBPS      MHI, X, X; \
	VSUBPS      MLO, X, X; \
	VMULPS      RSTD, X, X; \
	VMOVUPS     (PS), S;   \
	VFMADD213PS (PB), S, X

// The 128-byte frame holds scale[0] and bias[0] broadcast to sixteen
// lanes when their step is 0, so that the loops below read sixteen
// values either way (and nothing past element 0 of a step-0 operand).
TEXT ·normF32AVX512(SB), NOSPLIT, $128-68
	MOVQ  y+0(FP), PY
	MOVQ  x+8(FP), PX
	MOVQ  scale+16(FP), PS
	MOVQ  bias+24(FP), PB
	MOVQ  n+32(FP), N
	MOVQ  sstep+40(FP), SS
	MOVQ  bstep+48(FP), BS
	TESTQ N, N
	JZ    normDone0
	TESTQ SS, SS
	JNZ   normScaled
	VBROADCASTSS (PS), Z0
	VMOVUPS      Z0, 0(SP)
	LEAQ         0(SP), PS

normScaled:
	TESTQ BS, BS
	JNZ   normBiased
	VBROADCASTSS (PB), Z0
	VMOVUPS      Z0, 64(SP)
	LEAQ         64(SP), PB

normBiased:
	SHLQ         $6, SS
	SHLQ         $6, BS
	VBROADCASTSS mhi+56(FP), MHI
	VBROADCASTSS mlo+60(FP), MLO
	VBROADCASTSS r+64(FP), RSTD

norm32:
	CMPQ    N, $32
	JB      norm16
	VMOVUPS (PX), Z0
	VMOVUPS 64(PX), Z2
	NORM16(Z0, Z1)
	ADDQ    SS, PS
	ADDQ    BS, PB
	NORM16(Z2, Z3)
	ADDQ    SS, PS
	ADDQ    BS, PB
	VMOVUPS Z0, (PY)
	VMOVUPS Z2, 64(PY)
	ADDQ    $128, PX
	ADDQ    $128, PY
	SUBQ    $32, N
	JMP     norm32

norm16:
	CMPQ    N, $16
	JB      normTail
	VMOVUPS (PX), Z0
	NORM16(Z0, Z1)
	VMOVUPS Z0, (PY)
	ADDQ    SS, PS
	ADDQ    BS, PB
	ADDQ    $64, PX
	ADDQ    $64, PY
	SUBQ    $16, N

normTail:
	TESTQ       N, N
	JZ          normDone
	TAILK(K1)
	VMOVUPS.Z   (PX), K1, Z0
	VMOVUPS.Z   (PS), K1, Z1
	VMOVUPS.Z   (PB), K1, Z2
	VSUBPS      MHI, Z0, Z0
	VSUBPS      MLO, Z0, Z0
	VMULPS      RSTD, Z0, Z0
	VFMADD213PS Z2, Z1, Z0
	VMOVUPS     Z0, K1, (PY)

normDone:
	VZEROUPPER

normDone0:
	RET

#undef PS
#undef PB

// ---------------------------------------------------------------------
// func scaleAddMaxF32AVX512(y, add *float32, n int, s float32) float32
//
// y[i] = y[i]·s + add[i] (two roundings, as Scale then Axpy), returning
// their max with VRANGEPS (Go's max on numbers: -0 below +0) and, as in
// reduce512_amd64.s's EXTREME, NAN0 and NAN1 holding the unsigned max of
// the new y's bits shifted left by one, above an infinity's only after a
// NaN (which VRANGEPS passes over): NaN if any y is NaN, -Inf for n = 0.
// ---------------------------------------------------------------------
#define S   Z31
#define MX0 Z29 // running maxima
#define MX1 Z30
#define NAN0 Z27 // NaN trackers (see above)
#define NAN1 Z28

TEXT ·scaleAddMaxF32AVX512(SB), NOSPLIT, $0-36
	MOVQ         y+0(FP), PY
	MOVQ         add+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS s+24(FP), S
	MOVL         $0xff800000, TMP // -Inf
	VPBROADCASTD TMP, MX0
	VMOVAPS      MX0, MX1
	VPXORD       NAN0, NAN0, NAN0
	VPXORD       NAN1, NAN1, NAN1

sam32:
	CMPQ     N, $32
	JB       sam16
	VMULPS   (PY), S, Z0
	VMULPS   64(PY), S, Z1
	VADDPS   (PX), Z0, Z0
	VADDPS   64(PX), Z1, Z1
	VMOVUPS  Z0, (PY)
	VMOVUPS  Z1, 64(PY)
	VRANGEPS $5, Z0, MX0, MX0
	VRANGEPS $5, Z1, MX1, MX1
	VPSLLD   $1, Z0, Z2
	VPSLLD   $1, Z1, Z3
	VPMAXUD  Z2, NAN0, NAN0
	VPMAXUD  Z3, NAN1, NAN1
	ADDQ     $128, PY
	ADDQ     $128, PX
	SUBQ     $32, N
	JMP      sam32

sam16:
	CMPQ     N, $16
	JB       samTail
	VMULPS   (PY), S, Z0
	VADDPS   (PX), Z0, Z0
	VMOVUPS  Z0, (PY)
	VRANGEPS $5, Z0, MX0, MX0
	VPSLLD   $1, Z0, Z2
	VPMAXUD  Z2, NAN0, NAN0
	ADDQ     $64, PY
	ADDQ     $64, PX
	SUBQ     $16, N

samTail:
	TESTQ     N, N
	JZ        samFold
	TAILK(K1)
	VMOVUPS.Z (PY), K1, Z0
	VMOVUPS.Z (PX), K1, Z1
	VMULPS    Z0, S, Z0
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (PY)
	VRANGEPS  $5, Z0, MX1, K1, MX1 // lanes past n keep the max so far
	VPSLLD    $1, Z0, Z2             // lanes past n hold 0
	VPMAXUD   Z2, NAN1, NAN1

samFold:
	VRANGEPS      $5, MX1, MX0, Z0
	VEXTRACTF32X8 $1, Z0, Y1
	VRANGEPS      $5, Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VRANGEPS      $5, X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VRANGEPS      $5, X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VRANGEPS      $5, X1, X0, X0
	VPMAXUD       NAN1, NAN0, NAN0
	MOVL          $0xff000000, TMP
	VPBROADCASTD  TMP, Z2
	VPCMPUD       $6, Z2, NAN0, K2 // above an infinity's: a NaN
	KORTESTW      K2, K2
	JEQ           samDone
	MOVL          $0x7fc00000, TMP
	VMOVD         TMP, X0

samDone:
	VZEROUPPER
	MOVSS         X0, ret+32(FP)
	RET
