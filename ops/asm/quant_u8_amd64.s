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
