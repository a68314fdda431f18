//go:build amd64 && !purego

#include "textflag.h"

// maxRow3S2AVX512, the maxRow3S2Kernel (pool_max3.go) on zmm: sixteen
// outputs per step from 33 columns of each row. The three rows fold into
// columns 0-31 (two vectors) and column 32 (a scalar); the even and odd
// columns split out by VPERMI2PS, and columns 2, 4, ..., 32 are the even
// ones shifted down a lane with column 32 entering at the top (VALIGND).
// Every max is exact as Go's builtin: VRANGEPS $5 (the larger number,
// +0 over -0), then the lanes where either operand is NaN set to their
// sum, a NaN.

#define PY  DI
#define P0  SI
#define P1  DX
#define P2  R8
#define N   CX
#define TMP AX
#define EVEN Z28 // lane t: 2t
#define ODD  Z29 // lane t: 2t+1

// XMAX sets A to max(A, X) (R scratch, K an opmask).
#define XMAX(X, A, R, K) \
	VRANGEPS $5, X, A, R; \
	VCMPPS   $3, X, A, K; \
	VADDPS   X, A, K, R;  \
	VMOVAPS  R, A

// ROWS3 loads columns 0-31 of the three rows under opmasks KLO, KHI
// (zeroing) and folds them into Z0 (columns 0-15) and Z1 (16-31).
#define ROWS3(KLO, KHI) \
	VMOVUPS.Z (P0), KLO, Z0;   \
	VMOVUPS.Z 64(P0), KHI, Z1; \
	VMOVUPS.Z (P1), KLO, Z2;   \
	VMOVUPS.Z 64(P1), KHI, Z3; \
	VMOVUPS.Z (P2), KLO, Z4;   \
	VMOVUPS.Z 64(P2), KHI, Z5; \
	XMAX(Z2, Z0, Z9, K5);      \
	XMAX(Z4, Z0, Z9, K5);      \
	XMAX(Z3, Z1, Z9, K5);      \
	XMAX(Z5, Z1, Z9, K5)

// WINDOWS sets Z7 to the windows' maxima from Z0:Z1 (columns 0-31) and
// Z6 (column 32 in lane 0): Z7 the even columns 0-30, Z8 the odd ones,
// Z2 columns 2-32.
#define WINDOWS \
	VMOVAPS   EVEN, Z7;          \
	VPERMI2PS Z1, Z0, Z7;        \
	VMOVAPS   ODD, Z8;           \
	VPERMI2PS Z1, Z0, Z8;        \
	VALIGND   $1, Z7, Z6, Z2;    \
	XMAX(Z8, Z7, Z9, K5);        \
	XMAX(Z2, Z7, Z9, K5)

// func maxRow3S2AVX512(y, x0, x1, x2 *float32, n int)
TEXT ·maxRow3S2AVX512(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), PY
	MOVQ x0+8(FP), P0
	MOVQ x1+16(FP), P1
	MOVQ x2+24(FP), P2
	MOVQ n+32(FP), N
	VMOVDQU32    ·evenLanes16(SB), EVEN
	MOVL         $1, TMP
	VPBROADCASTD TMP, ODD
	VPADDD       EVEN, ODD, ODD
	KXNORW       K1, K1, K1      // all lanes

full16:
	CMPQ    N, $16
	JLT     tail
	ROWS3(K1, K1)
	VMOVSS  128(P0), X6          // column 32 of each row (upper lanes zero)
	VMOVSS  128(P1), X2
	VMOVSS  128(P2), X4
	XMAX(Z2, Z6, Z9, K5)
	XMAX(Z4, Z6, Z9, K5)
	WINDOWS
	VMOVUPS Z7, (PY)
	ADDQ    $128, P0
	ADDQ    $128, P1
	ADDQ    $128, P2
	ADDQ    $64, PY
	SUBQ    $16, N
	JMP     full16

tail: // 0 <= N < 16 outputs from t = 2N+1 columns, all inside the two vectors
	TESTQ   N, N
	JZ      done
	LEAQ    1(N)(N*1), R9        // t
	MOVQ    R9, R10
	MOVQ    $16, TMP
	CMPQ    R10, TMP
	CMOVQGT TMP, R10             // min(t, 16)
	MOVQ    CX, R11
	MOVQ    R10, CX
	MOVL    $1, TMP
	SHLL    CX, TMP
	DECL    TMP
	KMOVW   TMP, K2              // columns 0-15 loaded
	SUBQ    R10, R9              // max(t-16, 0)
	MOVQ    R9, CX
	MOVL    $1, TMP
	SHLL    CX, TMP
	DECL    TMP
	KMOVW   TMP, K3              // columns 16-31 loaded
	MOVQ    R11, CX
	MOVL    $1, TMP
	SHLL    CX, TMP
	DECL    TMP
	KMOVW   TMP, K4              // outputs stored
	ROWS3(K2, K3)
	VXORPS  Z6, Z6, Z6           // lane 15 of the shifted evens is not stored
	WINDOWS
	VMOVUPS Z7, K4, (PY)

done:
	VZEROUPPER
	RET
