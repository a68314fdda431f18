//go:build amd64 && !purego

#include "textflag.h"

// quantizeU8AVX512 (quant_u8.go): sixteen values a step, the tail under an
// opmask. r = x/s (VDIVPS, the float32 division), rounded half to even
// (VRNDSCALEPS $0), plus z, clamped to [0, 255]; the lanes whose quotient
// is NaN take z; then converted (exact integers) and narrowed to bytes.

#define PQ  DI
#define PX  SI
#define N   CX
#define TMP AX

// QUANT16 maps Z0 (x) to the bytes in X1, under load mask K.
#define QUANT16 \
	VDIVPS      Z30, Z0, Z0;  \ // r = x / s
	VRNDSCALEPS $0, Z0, Z1;   \ // nearest, ties to even
	VADDPS      Z31, Z1, Z1;  \ // + z
	VMAXPS      Z28, Z1, Z1;  \ // >= 0
	VMINPS      Z29, Z1, Z1;  \ // <= 255
	VCMPPS      $3, Z0, Z0, K3; \ // r is NaN
	VMOVAPS     Z31, K3, Z1;  \ // then z
	VCVTPS2DQ   Z1, Z1;       \
	VPMOVDB     Z1, X1

// func quantizeU8AVX512(q *uint8, x *float32, n int, s, z float32)
TEXT ·quantizeU8AVX512(SB), NOSPLIT, $0-32
	MOVQ         q+0(FP), PQ
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS s+24(FP), Z30
	VBROADCASTSS z+28(FP), Z31
	VXORPS       Z28, Z28, Z28
	MOVL         $0x437f0000, TMP // 255.0
	VPBROADCASTD TMP, Z29

loop16:
	CMPQ    N, $16
	JLT     tail
	VMOVUPS (PX), Z0
	QUANT16
	VMOVDQU X1, (PQ)
	ADDQ    $64, PX
	ADDQ    $16, PQ
	SUBQ    $16, N
	JMP     loop16

tail:
	TESTQ   N, N
	JZ      done
	MOVL    $1, TMP
	SHLL    CX, TMP
	DECL    TMP
	KMOVW   TMP, K2
	VMOVUPS.Z (PX), K2, Z0
	QUANT16
	VMOVDQU8 X1, K2, (PQ)

done:
	VZEROUPPER
	RET

// quantizeU8AVX2 (quant_u8.go): eight values a step, n a multiple of 8
// (the caller runs the rest through the twin). The same steps as
// quantizeU8AVX512 on ymm: VROUNDPS $0 rounds half to even, VBLENDVPS
// puts z in the NaN lanes, and the saturating packs narrow the exact
// integers in [0, 255] to bytes.

// func quantizeU8AVX2(q *uint8, x *float32, n int, s, z float32)
TEXT ·quantizeU8AVX2(SB), NOSPLIT, $0-32
	MOVQ         q+0(FP), PQ
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS s+24(FP), Y14
	VBROADCASTSS z+28(FP), Y15
	VXORPS       Y12, Y12, Y12
	MOVL         $0x437f0000, TMP // 255.0
	MOVL         TMP, X13
	VBROADCASTSS X13, Y13

loop8:
	CMPQ         N, $8
	JLT          done8
	VMOVUPS      (PX), Y0
	VDIVPS       Y14, Y0, Y0      // r = x / s
	VROUNDPS     $0, Y0, Y1       // nearest, ties to even
	VADDPS       Y15, Y1, Y1      // + z
	VMAXPS       Y12, Y1, Y1      // >= 0
	VMINPS       Y13, Y1, Y1      // <= 255
	VCMPPS       $3, Y0, Y0, Y2   // r is NaN
	VBLENDVPS    Y2, Y15, Y1, Y1  // then z
	VCVTPS2DQ    Y1, Y1
	VEXTRACTI128 $1, Y1, X3
	VPACKUSDW    X3, X1, X1       // eight words
	VPACKUSWB    X1, X1, X1       // eight bytes
	MOVQ         X1, (PQ)
	ADDQ         $32, PX
	ADDQ         $8, PQ
	SUBQ         $8, N
	JMP          loop8

done8:
	VZEROUPPER
	RET

// dequantRowAVX512 (quant_u8.go): sixteen sums a step, the tail under an
// opmask: v + ct − cz·ra in int32 (VPADDD, VPMULLD, VPSUBD wrap as Go's
// int32 does), VCVTDQ2PS (round to nearest even, as Go's conversion),
// times sc, plus b when b is not nil. y may be acc's memory: each step
// loads before it stores.

#define DY  DI
#define DA  SI
#define DT  DX
#define DZ  R8
#define DS  R9
#define DB  R10
#define DN  CX

// DEQ16(K) computes Z0 from the operands under load mask K (zeroing).
#define DEQ16(K) \
	VMOVDQU32.Z (DA), K, Z0;   \
	VMOVDQU32.Z (DT), K, Z1;   \
	VMOVDQU32.Z (DZ), K, Z2;   \
	VPADDD      Z1, Z0, Z0;    \
	VPMULLD     Z31, Z2, Z2;   \
	VPSUBD      Z2, Z0, Z0;    \
	VCVTDQ2PS   Z0, Z0;        \
	VMOVUPS.Z   (DS), K, Z1;   \
	VMULPS      Z1, Z0, Z0

// func dequantRowAVX512(y *float32, acc, ct, cz *int32, ra int32, sc, b *float32, n int)
TEXT ·dequantRowAVX512(SB), NOSPLIT, $0-64
	MOVQ         y+0(FP), DY
	MOVQ         acc+8(FP), DA
	MOVQ         ct+16(FP), DT
	MOVQ         cz+24(FP), DZ
	MOVL         ra+32(FP), AX
	VPBROADCASTD AX, Z31
	MOVQ         sc+40(FP), DS
	MOVQ         b+48(FP), DB
	MOVQ         n+56(FP), DN
	KXNORW       K1, K1, K1

dloop16:
	CMPQ    DN, $16
	JLT     dtail
	DEQ16(K1)
	TESTQ   DB, DB
	JZ      dstore
	VADDPS  (DB), Z0, Z0
	ADDQ    $64, DB

dstore:
	VMOVUPS Z0, (DY)
	ADDQ    $64, DY
	ADDQ    $64, DA
	ADDQ    $64, DT
	ADDQ    $64, DZ
	ADDQ    $64, DS
	SUBQ    $16, DN
	JMP     dloop16

dtail:
	TESTQ   DN, DN
	JZ      ddone
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K2
	DEQ16(K2)
	TESTQ   DB, DB
	JZ      dtstore
	VMOVUPS.Z (DB), K2, Z1
	VADDPS  Z1, Z0, Z0

dtstore:
	VMOVUPS Z0, K2, (DY)

ddone:
	VZEROUPPER
	RET

// dequantRowAVX2 (quant_u8.go): dequantRowAVX512's steps on ymm, eight
// sums a step, n a multiple of 8 (the caller runs the rest through the
// twin).

// func dequantRowAVX2(y *float32, acc, ct, cz *int32, ra int32, sc, b *float32, n int)
TEXT ·dequantRowAVX2(SB), NOSPLIT, $0-64
	MOVQ         y+0(FP), DY
	MOVQ         acc+8(FP), DA
	MOVQ         ct+16(FP), DT
	MOVQ         cz+24(FP), DZ
	MOVL         ra+32(FP), AX
	MOVL         AX, X15
	VPBROADCASTD X15, Y15
	MOVQ         sc+40(FP), DS
	MOVQ         b+48(FP), DB
	MOVQ         n+56(FP), DN

aloop8:
	CMPQ      DN, $8
	JLT       adone
	VMOVDQU   (DA), Y0
	VPADDD    (DT), Y0, Y0
	VPMULLD   (DZ), Y15, Y2
	VPSUBD    Y2, Y0, Y0
	VCVTDQ2PS Y0, Y0
	VMULPS    (DS), Y0, Y0
	TESTQ     DB, DB
	JZ        astore
	VADDPS    (DB), Y0, Y0
	ADDQ      $32, DB

astore:
	VMOVUPS   Y0, (DY)
	ADDQ      $32, DY
	ADDQ      $32, DA
	ADDQ      $32, DT
	ADDQ      $32, DZ
	ADDQ      $32, DS
	SUBQ      $8, DN
	JMP       aloop8

adone:
	VZEROUPPER
	RET
