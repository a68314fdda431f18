//go:build amd64 && !purego

#include "textflag.h"

// ---------------------------------------------------------------------
// func convRows16S1AVX512(dst, src *float32, off *int, n, nseg int, segs convSegs)
// func convRows16S2AVX512(dst, src *float32, off *int, n, nseg int, segs convSegs)
// Patch panels whose sixteen positions span output rows (conv_rows.go):
// for every tap s < n, a zeroed vector takes each segment's lanes with
// one masked load (stride 1) or two masked loads of the 32-float window
// and a permute of its even floats (stride 2), then is stored to
// dst[16s:]. Masked-off lanes are never read, so a segment's load may
// start before src; the caller checks every lane that is read.
// ---------------------------------------------------------------------

#define DST   DI
#define SRC   SI
#define OFF   R8
#define N     CX
#define SEGS  R9
#define NSEG  R10
#define SEG   R11 // the segment being loaded
#define LEFT  R12 // segments left for this tap
#define TAP   AX  // src + off[s]
#define DELTA BX  // the segment's delta
#define ROW   Z0  // the panel row being gathered

// A convSeg is {delta int64; out, lo, hi uint16} padded to 16 bytes.
#define SEG_DELTA 0
#define SEG_OUT   8
#define SEG_LO    10
#define SEG_HI    12
#define SEG_SIZE  16

TEXT ·convRows16S1AVX512(SB), NOSPLIT, $0-296
	MOVQ dst+0(FP), DST
	MOVQ src+8(FP), SRC
	MOVQ off+16(FP), OFF
	MOVQ n+24(FP), N
	MOVQ nseg+32(FP), NSEG
	LEAQ segs+40(FP), SEGS // the segments, by value in the frame

rows1Tap:
	MOVQ   (OFF), TAP
	LEAQ   (SRC)(TAP*4), TAP
	VXORPS ROW, ROW, ROW
	MOVQ   SEGS, SEG
	MOVQ   NSEG, LEFT

rows1Seg:
	MOVQ    SEG_DELTA(SEG), DELTA
	KMOVW   SEG_OUT(SEG), K1
	VMOVUPS (TAP)(DELTA*4), K1, ROW // lanes [at, at+n) from src[off+src_i+t-at]
	ADDQ    $SEG_SIZE, SEG
	DECQ    LEFT
	JNZ     rows1Seg

	VMOVUPS ROW, (DST)
	ADDQ    $64, DST
	ADDQ    $8, OFF
	DECQ    N
	JNZ     rows1Tap
	VZEROUPPER
	RET

#define EVEN Z31 // permute indices 0, 2, …, 30
#define WLO  Z1  // the segment's 32-float window
#define WHI  Z2

TEXT ·convRows16S2AVX512(SB), NOSPLIT, $0-296
	MOVQ      dst+0(FP), DST
	MOVQ      src+8(FP), SRC
	MOVQ      off+16(FP), OFF
	MOVQ      n+24(FP), N
	MOVQ      nseg+32(FP), NSEG
	LEAQ      segs+40(FP), SEGS // the segments, by value in the frame
	VMOVDQU32 ·evenLanes16(SB), EVEN

rows2Tap:
	MOVQ   (OFF), TAP
	LEAQ   (SRC)(TAP*4), TAP
	VXORPS ROW, ROW, ROW
	MOVQ   SEGS, SEG
	MOVQ   NSEG, LEFT

rows2Seg:
	MOVQ      SEG_DELTA(SEG), DELTA
	LEAQ      (TAP)(DELTA*4), DELTA
	KMOVW     SEG_LO(SEG), K2
	KMOVW     SEG_HI(SEG), K3
	KMOVW     SEG_OUT(SEG), K1
	VMOVUPS   (DELTA), K2, WLO  // only the even floats the segment reads
	VMOVUPS   64(DELTA), K3, WHI
	VPERMT2PS WHI, EVEN, WLO    // lane t: window[2t]
	VMOVAPS   WLO, K1, ROW      // the segment's lanes
	ADDQ      $SEG_SIZE, SEG
	DECQ      LEFT
	JNZ       rows2Seg

	VMOVUPS ROW, (DST)
	ADDQ    $64, DST
	ADDQ    $8, OFF
	DECQ    N
	JNZ     rows2Tap
	VZEROUPPER
	RET
