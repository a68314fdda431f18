//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func axpyF32AVX2(y, x *float32, n int, a float32)
// y[i] += a·x[i]; see conv_amd64.go. The tail uses masked loads and a
// masked store, so nothing past y[n-1] is touched.
// ---------------------------------------------------------------------

#define PY   DI
#define PX   SI
#define N    CX
#define TMP  AX
#define NEG  BX
#define A    Y15 // a in every lane
#define MASK Y14

TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         n+16(FP), N
	VBROADCASTSS a+24(FP), A

axpy32:
	CMPQ        N, $32
	JB          axpy8
	VMOVUPS     (PX), Y0
	VMOVUPS     32(PX), Y1
	VMOVUPS     64(PX), Y2
	VMOVUPS     96(PX), Y3
	VFMADD213PS (PY), A, Y0   // a·x + y
	VFMADD213PS 32(PY), A, Y1
	VFMADD213PS 64(PY), A, Y2
	VFMADD213PS 96(PY), A, Y3
	VMOVUPS     Y0, (PY)
	VMOVUPS     Y1, 32(PY)
	VMOVUPS     Y2, 64(PY)
	VMOVUPS     Y3, 96(PY)
	ADDQ        $128, PX
	ADDQ        $128, PY
	SUBQ        $32, N
	JMP         axpy32

axpy8:
	CMPQ        N, $8
	JB          axpyTail
	VMOVUPS     (PX), Y0
	VFMADD213PS (PY), A, Y0
	VMOVUPS     Y0, (PY)
	ADDQ        $32, PX
	ADDQ        $32, PY
	SUBQ        $8, N
	JMP         axpy8

axpyTail:
	TESTQ       N, N
	JZ          axpyDone
	LEAQ        ·rowTailMask+32(SB), TMP // lanes 0..N-1 (see row_amd64.s)
	MOVQ        N, NEG
	NEGQ        NEG
	VMOVDQU     (TMP)(NEG*4), MASK
	VMASKMOVPS  (PX), MASK, Y0
	VMASKMOVPS  (PY), MASK, Y1
	VFMADD213PS Y1, A, Y0
	VMASKMOVPS  Y0, MASK, (PY)

axpyDone:
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func convTaps16S1AVX2(dst, src *float32, off *int, n int)
// func convTaps16S2AVX2(dst, src *float32, off *int, n int)
// dst[16s+t] = src[off[s] + t·stride] for s < n, t < 16; see conv_amd64.go.
// ---------------------------------------------------------------------

TEXT ·convTaps16S1AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ off+16(FP), BX
	MOVQ n+24(FP), CX

taps1:
	MOVQ    (BX), AX
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $8, BX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     taps1
	VZEROUPPER
	RET

TEXT ·convTaps16S2AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ off+16(FP), BX
	MOVQ n+24(FP), CX

taps2:
	MOVQ    (BX), AX
	LEAQ    (SI)(AX*4), DX
	VMOVUPS (DX), Y0            // cells 0-7
	VMOVUPS 32(DX), Y1          // 8-15
	VMOVUPS 64(DX), Y2          // 16-23
	VMOVUPS 92(DX), Y3          // 23-30
	VSHUFPS $0x88, Y1, Y0, Y0   // per lane: 0 2 8 10 | 4 6 12 14
	VSHUFPS $0xD8, Y3, Y2, Y2   // per lane: 16 18 24 26 | 20 22 28 30
	VPERMPD $0xD8, Y0, Y0       // 64-bit pairs in order 0 2 1 3
	VPERMPD $0xD8, Y2, Y2
	VMOVUPS Y0, (DI)
	VMOVUPS Y2, 32(DI)
	ADDQ    $8, BX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     taps2
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func maxPairs8AVX2(y, x0, x1 *float32, n int)
// y[i] = max(x0[2i], x0[2i+1], x1[2i], x1[2i+1]) for i < n, n a multiple
// of 8; see conv_amd64.go.
// ---------------------------------------------------------------------

// MAXEXACT(a, b, dst) sets dst = max(a, b) as Go's builtin: NaN if either
// is NaN, +0 for ±0. VMAXPS alone returns its second source for NaNs and
// equal values, so take both orders and AND them (±0 → +0, otherwise the
// same value), then put a+b (a NaN) where the pair is unordered. Y12-Y15
// are scratch.
#define MAXEXACT(a, b, dst) \
	VMAXPS    b, a, Y12;          \
	VMAXPS    a, b, Y13;          \
	VANDPS    Y13, Y12, Y12;      \
	VCMPPS    $3, b, a, Y14;      \
	VADDPS    b, a, Y15;          \
	VBLENDVPS Y14, Y15, Y12, dst

TEXT ·maxPairs8AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x0+8(FP), SI
	MOVQ x1+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   pairsDone

pairs8:
	VMOVUPS (SI), Y0               // row 0, columns 0-7
	VMOVUPS 32(SI), Y1             // row 0, columns 8-15
	VMOVUPS (DX), Y2               // row 1
	VMOVUPS 32(DX), Y3
	MAXEXACT(Y0, Y2, Y0)
	MAXEXACT(Y1, Y3, Y1)
	VSHUFPS $0x88, Y1, Y0, Y2      // even columns, per lane: 0 2 8 10 | 4 6 12 14
	VSHUFPS $0xDD, Y1, Y0, Y3      // odd columns:            1 3 9 11 | 5 7 13 15
	MAXEXACT(Y2, Y3, Y2)
	VPERMPD $0xD8, Y2, Y2          // 64-bit pairs in order 0 2 1 3
	VMOVUPS Y2, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     pairs8

pairsDone:
	VZEROUPPER
	RET
