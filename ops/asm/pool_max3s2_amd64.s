//go:build amd64 && !purego

#include "textflag.h"

// maxRows3S2AVX512, the maxRows3S2Kernel (pool_max3s2.go) on zmm. Per
// output row, pair j of vectors (columns 32j-pl to 32j-pl+31 of each of
// the three rows, loaded under the masks table's opmasks) folds the rows
// into two vectors, sets the lanes outside the row to -Inf and splits the
// even columns (E) from the odd ones (O) with VPERMT2PS. Output vector j
// is then max(E_j, O_j, E_j shifted down a lane with lane 0 of E_{j+1}
// on top: VALIGND), so each input vector is loaded once and the next
// pair's E carries over; after the last output vector, pair nv is loaded
// only where its masks have a lane (else E is -Inf). Every max is exact
// as Go's builtin: VRANGEPS $5 (the larger number, +0 over -0), then the
// lanes where either operand is NaN set to their sum, a NaN.

#define PY     DI  // output row
#define P0     SI  // the three input rows, moved back pl columns
#define P1     DX
#define P2     R8
#define ROWS   R9
#define XS     R10 // input row step, bytes
#define OWB    R11 // output row step, bytes
#define MASKS  R12
#define LAST   R13 // 128·nv: the offset of pair nv
#define OFF    AX  // the current pair's byte offset in the rows
#define MP     BX  // its masks
#define QY     CX  // the current output vector
#define PF     R14 // a row two output rows on, to prefetch
#define EVEN   Z28 // lane t: 2t
#define ODD    Z29 // lane t: 2t+1
#define NEGINF Z30

// XMAX sets R to max(A, X) (R neither of them).
#define XMAX(X, A, R) \
	VRANGEPS $5, X, A, R; \
	VCMPPS   $3, X, A, K5; \
	VADDPS   X, A, K5, R

// PREFETCH asks for the pair at OFF of the rows two output rows on from
// x1 and x2 (the rows an output row has that the one before it had not,
// where the window is three rows high at row stride 2): the hardware
// prefetchers alone left the stem's pooling 20% slower from L3.
#define PREFETCH \
	LEAQ       (P1)(XS*2), PF;   \
	PREFETCHT0 (PF)(OFF*1);      \
	PREFETCHT0 64(PF)(OFF*1);    \
	LEAQ       (P2)(XS*2), PF;   \
	PREFETCHT0 (PF)(OFF*1);      \
	PREFETCHT0 64(PF)(OFF*1)

// PAIR loads the pair at OFF under the masks at MP and sets E to its
// rows' maxima at the even columns, O at the odd ones.
#define PAIR(E, O) \
	KMOVW     (MP), K2;                 \
	KMOVW     2(MP), K3;                \
	VMOVUPS.Z (P0)(OFF*1), K2, Z0;      \
	VMOVUPS.Z 64(P0)(OFF*1), K3, Z1;    \
	VMOVUPS.Z (P1)(OFF*1), K2, Z2;      \
	VMOVUPS.Z 64(P1)(OFF*1), K3, Z3;    \
	VMOVUPS.Z (P2)(OFF*1), K2, Z4;      \
	VMOVUPS.Z 64(P2)(OFF*1), K3, Z5;    \
	XMAX(Z2, Z0, Z6);                   \
	XMAX(Z3, Z1, Z7);                   \
	XMAX(Z4, Z6, E);                    \
	XMAX(Z5, Z7, Z1);                   \
	VBLENDMPS E, NEGINF, K2, E;         \
	VBLENDMPS Z1, NEGINF, K3, Z1;       \
	VMOVAPS   E, O;                     \
	VPERMT2PS Z1, EVEN, E;              \
	VPERMT2PS Z1, ODD, O

// OUT sets R to the output vector of E0, O0 and the next pair's E1.
#define OUT(E0, O0, E1, R) \
	VALIGND $1, E0, E1, Z8; \
	XMAX(O0, E0, Z9);       \
	XMAX(Z8, Z9, R)

// func maxRows3S2AVX512(y, x0, x1, x2 *float32, rows, w, pl, ow, xstride int, masks *uint16)
TEXT ·maxRows3S2AVX512(SB), NOSPLIT, $0-80
	MOVQ y+0(FP), PY
	MOVQ x0+8(FP), P0
	MOVQ x1+16(FP), P1
	MOVQ x2+24(FP), P2
	MOVQ rows+32(FP), ROWS
	MOVQ pl+48(FP), OFF
	SHLQ $2, OFF
	SUBQ OFF, P0
	SUBQ OFF, P1
	SUBQ OFF, P2
	MOVQ ow+56(FP), OWB
	LEAQ 15(OWB), LAST
	SHRQ $4, LAST
	SHLQ $7, LAST
	SHLQ $2, OWB
	MOVQ xstride+64(FP), XS
	SHLQ $2, XS
	MOVQ masks+72(FP), MASKS
	VMOVDQU32    ·evenLanes16(SB), EVEN
	MOVL         $1, OFF
	VPBROADCASTD OFF, ODD
	VPADDD       EVEN, ODD, ODD
	MOVL         $0xff800000, OFF
	VPBROADCASTD OFF, NEGINF

row:
	XORQ OFF, OFF
	MOVQ MASKS, MP
	MOVQ PY, QY
	PAIR(Z20, Z21)
	PREFETCH

vec:
	ADDQ    $128, OFF
	ADDQ    $4, MP
	CMPQ    OFF, LAST
	JEQ     last
	PAIR(Z22, Z23)
	PREFETCH
	OUT(Z20, Z21, Z22, Z24)
	VMOVUPS Z24, (QY)
	ADDQ    $64, QY
	VMOVAPS Z22, Z20
	VMOVAPS Z23, Z21
	JMP     vec

last:
	KMOVW    (MP), K2
	KMOVW    2(MP), K3
	KORTESTW K2, K3
	JEQ      noextra
	PAIR(Z22, Z23)
	JMP      store

noextra:
	VMOVAPS NEGINF, Z22

store:
	KMOVW   4(MP), K4
	OUT(Z20, Z21, Z22, Z24)
	VMOVUPS Z24, K4, (QY)
	ADDQ    XS, P0
	ADDQ    XS, P1
	ADDQ    XS, P2
	ADDQ    OWB, PY
	DECQ    ROWS
	JNZ     row
	VZEROUPPER
	RET
