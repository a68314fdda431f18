//go:build amd64 && !purego

#include "textflag.h"
#include "clamp512_amd64.h"

// Depthwise convolution kernels, AVX-512 and AVX2+FMA; see
// conv_depthwise_amd64.go for each contract and conv_depthwise.go for
// the plan. The taps kernels keep a block of outputs in registers while
// every tap adds w[t]·x[off[t]+i] to it: per tap one weight broadcast
// and one fused multiply-add per vector, its input operand read straight
// from memory (unaligned). Nothing outside y[0:blocks·B] is written and
// nothing outside x[off[t]:off[t]+blocks·B] read.

#define PY    DI  // y: the block's first output
#define PX    SI  // x: the block's first input (before off[t])
#define POFF  R8  // off
#define PW    R9  // w
#define TAPS  R10 // taps
#define NB    R11 // blocks left
#define PO    R12 // off cursor
#define PWT   R13 // w cursor
#define T     CX  // taps left
#define SRC   BX  // x + off[t] for the block

// ---------------------------------------------------------------------
// func dwTaps128AVX512(y, x *float32, off *int, w *float32, taps, blocks int, bias float32)
// 8 zmm accumulators: 128 outputs a block.
// ---------------------------------------------------------------------
TEXT ·dwTaps128AVX512(SB), NOSPLIT, $0-52
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         off+16(FP), POFF
	MOVQ         w+24(FP), PW
	MOVQ         taps+32(FP), TAPS
	MOVQ         blocks+40(FP), NB
	VBROADCASTSS bias+48(FP), Z31 // bias in every lane

dwTaps128AVX512Block:
	VMOVAPS Z31, Z0   // chain 0 = bias
	VMOVAPS Z31, Z1
	VMOVAPS Z31, Z2
	VMOVAPS Z31, Z3
	VMOVAPS Z31, Z4
	VMOVAPS Z31, Z5
	VMOVAPS Z31, Z6
	VMOVAPS Z31, Z7
	MOVQ    POFF, PO
	MOVQ    PW, PWT
	MOVQ    TAPS, T

dwTaps128AVX512Tap:
	MOVQ         (PO), SRC           // off[t]
	LEAQ         (PX)(SRC*4), SRC    // x + off[t]
	VBROADCASTSS (PWT), Z30          // w[t] in every lane
	VFMADD231PS  (SRC), Z30, Z0  // acc += w[t]·x[off[t]+i]
	VFMADD231PS  64(SRC), Z30, Z1
	VFMADD231PS  128(SRC), Z30, Z2
	VFMADD231PS  192(SRC), Z30, Z3
	VFMADD231PS  256(SRC), Z30, Z4
	VFMADD231PS  320(SRC), Z30, Z5
	VFMADD231PS  384(SRC), Z30, Z6
	VFMADD231PS  448(SRC), Z30, Z7
	ADDQ         $8, PO
	ADDQ         $4, PWT
	DECQ         T
	JNZ          dwTaps128AVX512Tap

	VMOVUPS Z0, (PY) // store the block
	VMOVUPS Z1, 64(PY)
	VMOVUPS Z2, 128(PY)
	VMOVUPS Z3, 192(PY)
	VMOVUPS Z4, 256(PY)
	VMOVUPS Z5, 320(PY)
	VMOVUPS Z6, 384(PY)
	VMOVUPS Z7, 448(PY)
	ADDQ    $512, PX
	ADDQ    $512, PY
	DECQ    NB
	JNZ     dwTaps128AVX512Block
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func dwTaps64AVX2(y, x *float32, off *int, w *float32, taps, blocks int, bias float32)
// 8 ymm accumulators: 64 outputs a block.
// ---------------------------------------------------------------------
TEXT ·dwTaps64AVX2(SB), NOSPLIT, $0-52
	MOVQ         y+0(FP), PY
	MOVQ         x+8(FP), PX
	MOVQ         off+16(FP), POFF
	MOVQ         w+24(FP), PW
	MOVQ         taps+32(FP), TAPS
	MOVQ         blocks+40(FP), NB
	VBROADCASTSS bias+48(FP), Y15 // bias in every lane

dwTaps64AVX2Block:
	VMOVAPS Y15, Y0   // chain 0 = bias
	VMOVAPS Y15, Y1
	VMOVAPS Y15, Y2
	VMOVAPS Y15, Y3
	VMOVAPS Y15, Y4
	VMOVAPS Y15, Y5
	VMOVAPS Y15, Y6
	VMOVAPS Y15, Y7
	MOVQ    POFF, PO
	MOVQ    PW, PWT
	MOVQ    TAPS, T

dwTaps64AVX2Tap:
	MOVQ         (PO), SRC           // off[t]
	LEAQ         (PX)(SRC*4), SRC    // x + off[t]
	VBROADCASTSS (PWT), Y14          // w[t] in every lane
	VFMADD231PS  (SRC), Y14, Y0  // acc += w[t]·x[off[t]+i]
	VFMADD231PS  32(SRC), Y14, Y1
	VFMADD231PS  64(SRC), Y14, Y2
	VFMADD231PS  96(SRC), Y14, Y3
	VFMADD231PS  128(SRC), Y14, Y4
	VFMADD231PS  160(SRC), Y14, Y5
	VFMADD231PS  192(SRC), Y14, Y6
	VFMADD231PS  224(SRC), Y14, Y7
	ADDQ         $8, PO
	ADDQ         $4, PWT
	DECQ         T
	JNZ          dwTaps64AVX2Tap

	VMOVUPS Y0, (PY) // store the block
	VMOVUPS Y1, 32(PY)
	VMOVUPS Y2, 64(PY)
	VMOVUPS Y3, 96(PY)
	VMOVUPS Y4, 128(PY)
	VMOVUPS Y5, 160(PY)
	VMOVUPS Y6, 192(PY)
	VMOVUPS Y7, 224(PY)
	ADDQ    $256, PX
	ADDQ    $256, PY
	DECQ    NB
	JNZ     dwTaps64AVX2Block
	VZEROUPPER
	RET

// Permute indices of the AVX-512 split: lane j takes element 2j (even)
// or 2j+1 (odd) of the 32 in two registers (16-31: the second one).
// evenLanes16 is global: the stride-2 patch packer (conv_rows_amd64.s)
// uses it too.
DATA ·evenLanes16+0(SB)/4, $0
DATA ·evenLanes16+4(SB)/4, $2
DATA ·evenLanes16+8(SB)/4, $4
DATA ·evenLanes16+12(SB)/4, $6
DATA ·evenLanes16+16(SB)/4, $8
DATA ·evenLanes16+20(SB)/4, $10
DATA ·evenLanes16+24(SB)/4, $12
DATA ·evenLanes16+28(SB)/4, $14
DATA ·evenLanes16+32(SB)/4, $16
DATA ·evenLanes16+36(SB)/4, $18
DATA ·evenLanes16+40(SB)/4, $20
DATA ·evenLanes16+44(SB)/4, $22
DATA ·evenLanes16+48(SB)/4, $24
DATA ·evenLanes16+52(SB)/4, $26
DATA ·evenLanes16+56(SB)/4, $28
DATA ·evenLanes16+60(SB)/4, $30
GLOBL ·evenLanes16(SB), RODATA|NOPTR, $64
DATA dwOddIdx<>+0(SB)/4, $1
DATA dwOddIdx<>+4(SB)/4, $3
DATA dwOddIdx<>+8(SB)/4, $5
DATA dwOddIdx<>+12(SB)/4, $7
DATA dwOddIdx<>+16(SB)/4, $9
DATA dwOddIdx<>+20(SB)/4, $11
DATA dwOddIdx<>+24(SB)/4, $13
DATA dwOddIdx<>+28(SB)/4, $15
DATA dwOddIdx<>+32(SB)/4, $17
DATA dwOddIdx<>+36(SB)/4, $19
DATA dwOddIdx<>+40(SB)/4, $21
DATA dwOddIdx<>+44(SB)/4, $23
DATA dwOddIdx<>+48(SB)/4, $25
DATA dwOddIdx<>+52(SB)/4, $27
DATA dwOddIdx<>+56(SB)/4, $29
DATA dwOddIdx<>+60(SB)/4, $31
GLOBL dwOddIdx<>(SB), RODATA|NOPTR, $64

#define PE   DI  // e row
#define PD   SI  // o row
#define PS   BX  // src row
#define SLDD R8  // e and o stride, bytes
#define SLDS R9  // src stride, bytes
#define SROW R10 // rows left
#define M    R11 // floats a row
#define E    R12 // e cursor
#define O    R13 // o cursor
#define SS   DX  // src cursor
#define N    CX  // floats left in the row

// ---------------------------------------------------------------------
// func dwSplit2AVX512(e, o *float32, ldd int, src *float32, lds int, rows, m int)
// (e if j is even, else o)[r·ldd + j/2] = src[r·lds + j] for r < rows,
// j < m: 32 floats at a time, two permutes picking the even and the odd
// ones of two zmm; the last m mod 32 through opmasks (K1, K2 the loads',
// K3, K4 the stores'), whose masked-off lanes are neither read nor
// written.
// ---------------------------------------------------------------------
TEXT ·dwSplit2AVX512(SB), NOSPLIT, $0-56
	MOVQ      e+0(FP), PE
	MOVQ      o+8(FP), PD
	MOVQ      ldd+16(FP), SLDD
	MOVQ      src+24(FP), PS
	MOVQ      lds+32(FP), SLDS
	MOVQ      rows+40(FP), SROW
	MOVQ      m+48(FP), M
	SHLQ      $2, SLDD
	SHLQ      $2, SLDS
	VMOVDQU32 ·evenLanes16(SB), Z30
	VMOVDQU32 dwOddIdx<>(SB), Z31

	// The tail's masks, from t = m mod 32.
	MOVQ    M, E
	ANDQ    $31, E           // t
	MOVQ    E, CX
	MOVQ    $16, AX
	CMPQ    CX, AX
	CMOVQHI AX, CX           // min(t, 16)
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K1           // the first load: min(t, 16) lanes
	MOVQ    E, CX
	SUBQ    $16, CX
	MOVQ    $0, AX
	CMPQ    CX, AX
	CMOVQLT AX, CX           // max(t-16, 0)
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K2           // the second load: max(t-16, 0) lanes
	MOVQ    E, CX
	INCQ    CX
	SHRQ    $1, CX
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K3           // the even store: (t+1)/2 lanes
	MOVQ    E, CX
	SHRQ    $1, CX
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K4           // the odd store: t/2 lanes

split512Row:
	MOVQ PE, E
	MOVQ PD, O
	MOVQ PS, SS
	MOVQ M, N

split512Vec:
	CMPQ      N, $32
	JB        split512Tail
	VMOVUPS   (SS), Z0       // src[0:16]
	VMOVUPS   64(SS), Z1     // src[16:32]
	VMOVAPS   Z0, Z2         // each permute overwrites its first table
	VPERMT2PS Z1, Z30, Z0    // the even floats of Z0:Z1
	VPERMT2PS Z1, Z31, Z2    // the odd ones
	VMOVUPS   Z0, (E)
	VMOVUPS   Z2, (O)
	ADDQ      $128, SS
	ADDQ      $64, E
	ADDQ      $64, O
	SUBQ      $32, N
	JMP       split512Vec

split512Tail:
	TESTQ     N, N
	JZ        split512Next
	VMOVUPS.Z (SS), K1, Z0
	VMOVUPS.Z 64(SS), K2, Z1
	VMOVAPS   Z0, Z2
	VPERMT2PS Z1, Z30, Z0
	VPERMT2PS Z1, Z31, Z2
	VMOVUPS   Z0, K3, (E)
	VMOVUPS   Z2, K4, (O)

split512Next:
	ADDQ SLDD, PE
	ADDQ SLDD, PD
	ADDQ SLDS, PS
	DECQ SROW
	JNZ  split512Row
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func dwSplit2AVX2(e, o *float32, ldd int, src *float32, lds int, rows, m int)
// dwSplit2AVX512 with 16 floats at a time (in-lane shuffles, then a
// cross-lane fix-up) and the last m mod 16 one pair at a time.
// ---------------------------------------------------------------------
TEXT ·dwSplit2AVX2(SB), NOSPLIT, $0-56
	MOVQ e+0(FP), PE
	MOVQ o+8(FP), PD
	MOVQ ldd+16(FP), SLDD
	MOVQ src+24(FP), PS
	MOVQ lds+32(FP), SLDS
	MOVQ rows+40(FP), SROW
	MOVQ m+48(FP), M
	SHLQ $2, SLDD
	SHLQ $2, SLDS

split256Row:
	MOVQ PE, E
	MOVQ PD, O
	MOVQ PS, SS
	MOVQ M, N

split256Vec:
	CMPQ    N, $16
	JB      split256Pair
	VMOVUPS (SS), Y0            // a = src[0:8]
	VMOVUPS 32(SS), Y1          // b = src[8:16]
	VSHUFPS $0x88, Y1, Y0, Y2   // per lane: a0 a2 b0 b2 | a4 a6 b4 b6
	VSHUFPS $0xDD, Y1, Y0, Y3   // per lane: a1 a3 b1 b3 | a5 a7 b5 b7
	VPERMPD $0xD8, Y2, Y2       // 64-bit pairs in order 0 2 1 3: a0 a2 a4 a6 b0 b2 b4 b6
	VPERMPD $0xD8, Y3, Y3
	VMOVUPS Y2, (E)
	VMOVUPS Y3, (O)
	ADDQ    $64, SS
	ADDQ    $32, E
	ADDQ    $32, O
	SUBQ    $16, N
	JMP     split256Vec

split256Pair:
	CMPQ  N, $2
	JB    split256Odd
	MOVL  (SS), AX              // one pair
	MOVL  AX, (E)
	MOVL  4(SS), AX
	MOVL  AX, (O)
	ADDQ  $8, SS
	ADDQ  $4, E
	ADDQ  $4, O
	SUBQ  $2, N
	JMP   split256Pair

split256Odd:
	TESTQ N, N
	JZ    split256Next
	MOVL  (SS), AX              // an odd m's last float, to e
	MOVL  AX, (E)

split256Next:
	ADDQ SLDD, PE
	ADDQ SLDD, PD
	ADDQ SLDS, PS
	DECQ SROW
	JNZ  split256Row
	VZEROUPPER
	RET

#define PDST DI // dst row
#define PSRC SI // src row
#define LDD  R8 // dst stride, bytes
#define LDS  R9 // src stride, bytes
#define ROWS R10
#define COLS R11
#define D    R12 // dst cursor
#define S    R13 // src cursor

// COPY512_MASK turns the strides into bytes and sets K1 to the lanes of
// a row's last cols mod 16 floats.
#define COPY512_MASK \
	SHLQ  $2, LDD;  \
	SHLQ  $2, LDS;  \
	MOVQ  COLS, CX; \
	ANDQ  $15, CX;  \
	MOVL  $1, AX;   \
	SHLL  CX, AX;   \
	DECL  AX;       \
	KMOVW AX, K1

// COPY512_ROWS copies the rows, each vector through OP (on Z0) before
// its store: whole vectors, then the last cols mod 16 through the opmask
// K1, whose masked-off lanes are neither read nor written (OP sees them
// as zeros). The labels name the loops.
#define COPY512_ROWS(OP, row, vec, tail, next) \
row:                               \
	MOVQ    PDST, D;               \
	MOVQ    PSRC, S;               \
	MOVQ    COLS, CX;              \
vec:                               \
	CMPQ    CX, $16;               \
	JB      tail;                  \
	VMOVUPS (S), Z0;               \
	OP;                            \
	VMOVUPS Z0, (D);               \
	ADDQ    $64, S;                \
	ADDQ    $64, D;                \
	SUBQ    $16, CX;               \
	JMP     vec;                   \
tail:                              \
	TESTQ     CX, CX;              \
	JZ        next;                \
	VMOVUPS.Z (S), K1, Z0;         \
	OP;                            \
	VMOVUPS   Z0, K1, (D);         \
next:                              \
	ADDQ LDD, PDST;                \
	ADDQ LDS, PSRC;                \
	DECQ ROWS;                     \
	JNZ  row

// The copy's ops on Z0: none (an OP must expand to an instruction, so a
// no-op move), the panel kernels' ReLU with Z1 = +0, their clamp to
// [+0, Z2] with Z3 and K2 (K1 is the tail's mask) as scratch.
#define COPY_PLAIN MOVQ CX, CX
#define COPY_RELU  RELU512(Z0, Z1)
#define COPY_CLAMP CLAMP512(Z0, Z1, Z2, Z3, K2)

// ---------------------------------------------------------------------
// func dwCopyClampAVX512(dst *float32, ldd int, src *float32, lds int, rows, cols int, flags uint)
// dst[r·ldd+j] = src[r·lds+j] for r < rows, j < cols (both >= 1), through
// the panel kernels' clamp: flags gemmRelu (8) the ReLU, else gemmClamp
// (16) the clamp to [+0, hi], hi the flags' upper half; else a plain
// copy.
// ---------------------------------------------------------------------
TEXT ·dwCopyClampAVX512(SB), NOSPLIT, $0-56
	MOVQ  dst+0(FP), PDST
	MOVQ  ldd+8(FP), LDD
	MOVQ  src+16(FP), PSRC
	MOVQ  lds+24(FP), LDS
	MOVQ  rows+32(FP), ROWS
	MOVQ  cols+40(FP), COLS
	COPY512_MASK
	MOVQ   flags+48(FP), AX
	VPXORD Z1, Z1, Z1
	TESTQ  $8, AX
	JNZ    relu
	TESTQ  $16, AX
	JZ     plain
	SHRQ   $32, AX
	VPBROADCASTD AX, Z2
	COPY512_ROWS(COPY_CLAMP, clampRow, clampVec, clampTail, clampNext)
	VZEROUPPER
	RET

relu:
	COPY512_ROWS(COPY_RELU, reluRow, reluVec, reluTail, reluNext)
	VZEROUPPER
	RET

plain:
	COPY512_ROWS(COPY_PLAIN, plainRow, plainVec, plainTail, plainNext)
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func dwCopy2AVX2(dst *float32, ldd int, src *float32, lds int, rows, cols int)
// dwCopy2AVX512 with ymm vectors; the last cols mod 8 go through
// VMASKMOVPS (masked-off lanes neither read nor written), the mask from
// rowTailMask (row_amd64.s).
// ---------------------------------------------------------------------
TEXT ·dwCopy2AVX2(SB), NOSPLIT, $0-48
	MOVQ    dst+0(FP), PDST
	MOVQ    ldd+8(FP), LDD
	MOVQ    src+16(FP), PSRC
	MOVQ    lds+24(FP), LDS
	MOVQ    rows+32(FP), ROWS
	MOVQ    cols+40(FP), COLS
	SHLQ    $2, LDD
	SHLQ    $2, LDS
	MOVQ    COLS, CX
	ANDQ    $7, CX
	NEGQ    CX
	LEAQ    ·rowTailMask+32(SB), AX
	VMOVDQU (AX)(CX*4), Y15     // lanes 0 .. cols mod 8 - 1

copy256Row:
	MOVQ PDST, D
	MOVQ PSRC, S
	MOVQ COLS, CX

copy256Vec:
	CMPQ    CX, $8
	JB      copy256Tail
	VMOVUPS (S), Y0
	VMOVUPS Y0, (D)
	ADDQ    $32, S
	ADDQ    $32, D
	SUBQ    $8, CX
	JMP     copy256Vec

copy256Tail:
	TESTQ      CX, CX
	JZ         copy256Next
	VMASKMOVPS (S), Y15, Y0
	VMASKMOVPS Y0, Y15, (D)

copy256Next:
	ADDQ LDD, PDST
	ADDQ LDS, PSRC
	DECQ ROWS
	JNZ  copy256Row
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// The channel-interleaved path (conv_depthwise_chan.go): vectors of 16
// channels. The taps kernels hold eight output positions, each its own
// input base (the pos table: any eight positions), and add one tap at a
// time: the tap's weight vector loaded once, then one fused
// multiply-add a position with the input as its memory operand.
// ---------------------------------------------------------------------

#define CY   DI  // y: the block's first output vector
#define CPOS SI  // pos cursor
#define CB0  AX  // x + pos[8b+r] for r = 0..7
#define CB1  BX
#define CB2  DX
#define CB3  R8
#define CB4  R9
#define CB5  R10
#define CB6  R11
#define CB7  R12
#define COFF CX  // off[t]
#define CEO  R13 // off + taps: the end of the offsets
#define CEW  R14 // w + 16·taps: the bias vector, the end of the weights
#define CI   R15 // -8·(taps left): indexes CEO by 8 a tap, CEW by 64

// CHANBASES loads the block's eight input bases, x + pos[8b+r] (floats,
// so ×4), into CB0-CB7; CX holds x.
#define CHANBASES \
	MOVQ 0(CPOS), CB0;      \
	LEAQ (CX)(CB0*4), CB0;  \
	MOVQ 8(CPOS), CB1;      \
	LEAQ (CX)(CB1*4), CB1;  \
	MOVQ 16(CPOS), CB2;     \
	LEAQ (CX)(CB2*4), CB2;  \
	MOVQ 24(CPOS), CB3;     \
	LEAQ (CX)(CB3*4), CB3;  \
	MOVQ 32(CPOS), CB4;     \
	LEAQ (CX)(CB4*4), CB4;  \
	MOVQ 40(CPOS), CB5;     \
	LEAQ (CX)(CB5*4), CB5;  \
	MOVQ 48(CPOS), CB6;     \
	LEAQ (CX)(CB6*4), CB6;  \
	MOVQ 56(CPOS), CB7;     \
	LEAQ (CX)(CB7*4), CB7

// ---------------------------------------------------------------------
// func dwChanTapsAVX512(y, x *float32, pos, off *int, w *float32, taps, blocks int)
// Z0-Z7 the eight positions' accumulators, Z30 the tap's weights, Z31
// the bias; the blocks left in a frame slot (every general register is
// taken).
// ---------------------------------------------------------------------
TEXT ·dwChanTapsAVX512(SB), NOSPLIT, $8-56
	MOVQ    y+0(FP), CY
	MOVQ    pos+16(FP), CPOS
	MOVQ    taps+40(FP), CX
	MOVQ    off+24(FP), CEO
	LEAQ    (CEO)(CX*8), CEO       // off + taps
	MOVQ    w+32(FP), CEW
	SHLQ    $6, CX
	ADDQ    CX, CEW                // w + 16·taps: the bias
	VMOVUPS (CEW), Z31             // the bias vector
	MOVQ    blocks+48(FP), CX
	MOVQ    CX, nb-8(SP)           // blocks left

chan512Block:
	MOVQ    x+8(FP), CX
	CHANBASES                      // CB0-CB7 = x + pos[8b+r]
	VMOVAPS Z31, Z0                // accumulators = bias
	VMOVAPS Z31, Z1
	VMOVAPS Z31, Z2
	VMOVAPS Z31, Z3
	VMOVAPS Z31, Z4
	VMOVAPS Z31, Z5
	VMOVAPS Z31, Z6
	VMOVAPS Z31, Z7
	MOVQ    taps+40(FP), CI
	SHLQ    $3, CI
	NEGQ    CI                     // -8·taps

chan512Tap:
	MOVQ        (CEO)(CI*1), COFF  // off[t]
	VMOVUPS     (CEW)(CI*8), Z30   // w[16t : 16t+16]
	VFMADD231PS (CB0)(COFF*4), Z30, Z0 // acc[r] += w[t]·x[pos[r]+off[t]]
	VFMADD231PS (CB1)(COFF*4), Z30, Z1
	VFMADD231PS (CB2)(COFF*4), Z30, Z2
	VFMADD231PS (CB3)(COFF*4), Z30, Z3
	VFMADD231PS (CB4)(COFF*4), Z30, Z4
	VFMADD231PS (CB5)(COFF*4), Z30, Z5
	VFMADD231PS (CB6)(COFF*4), Z30, Z6
	VFMADD231PS (CB7)(COFF*4), Z30, Z7
	ADDQ        $8, CI
	JNZ         chan512Tap

	VMOVUPS Z0, (CY)               // store the block's eight vectors
	VMOVUPS Z1, 64(CY)
	VMOVUPS Z2, 128(CY)
	VMOVUPS Z3, 192(CY)
	VMOVUPS Z4, 256(CY)
	VMOVUPS Z5, 320(CY)
	VMOVUPS Z6, 384(CY)
	VMOVUPS Z7, 448(CY)
	ADDQ    $512, CY
	ADDQ    $64, CPOS
	DECQ    nb-8(SP)
	JNZ     chan512Block
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// func dwChanTapsAVX2(y, x *float32, pos, off *int, w *float32, taps, blocks int)
// dwChanTapsAVX512 in two passes over a block, channels 0-7 then 8-15:
// Y0-Y7 the accumulators, Y8 the tap's eight weights, Y9 and Y10 the
// two halves of the bias.
// ---------------------------------------------------------------------
TEXT ·dwChanTapsAVX2(SB), NOSPLIT, $8-56
	MOVQ    y+0(FP), CY
	MOVQ    pos+16(FP), CPOS
	MOVQ    taps+40(FP), CX
	MOVQ    off+24(FP), CEO
	LEAQ    (CEO)(CX*8), CEO       // off + taps
	MOVQ    w+32(FP), CEW
	SHLQ    $6, CX
	ADDQ    CX, CEW                // w + 16·taps: the bias
	VMOVUPS (CEW), Y9              // bias, channels 0-7
	VMOVUPS 32(CEW), Y10           // bias, channels 8-15
	MOVQ    blocks+48(FP), CX
	MOVQ    CX, nb-8(SP)           // blocks left

chan256Block:
	MOVQ    x+8(FP), CX
	CHANBASES                      // CB0-CB7 = x + pos[8b+r]
	VMOVAPS Y9, Y0                 // low half: accumulators = bias
	VMOVAPS Y9, Y1
	VMOVAPS Y9, Y2
	VMOVAPS Y9, Y3
	VMOVAPS Y9, Y4
	VMOVAPS Y9, Y5
	VMOVAPS Y9, Y6
	VMOVAPS Y9, Y7
	MOVQ    taps+40(FP), CI
	SHLQ    $3, CI
	NEGQ    CI                     // -8·taps

chan256TapLo:
	MOVQ        (CEO)(CI*1), COFF  // off[t]
	VMOVUPS     (CEW)(CI*8), Y8    // w[16t : 16t+8]
	VFMADD231PS (CB0)(COFF*4), Y8, Y0 // acc[r] += w[t]·x[pos[r]+off[t]], channels 0-7
	VFMADD231PS (CB1)(COFF*4), Y8, Y1
	VFMADD231PS (CB2)(COFF*4), Y8, Y2
	VFMADD231PS (CB3)(COFF*4), Y8, Y3
	VFMADD231PS (CB4)(COFF*4), Y8, Y4
	VFMADD231PS (CB5)(COFF*4), Y8, Y5
	VFMADD231PS (CB6)(COFF*4), Y8, Y6
	VFMADD231PS (CB7)(COFF*4), Y8, Y7
	ADDQ        $8, CI
	JNZ         chan256TapLo

	VMOVUPS Y0, (CY)               // store the low halves
	VMOVUPS Y1, 64(CY)
	VMOVUPS Y2, 128(CY)
	VMOVUPS Y3, 192(CY)
	VMOVUPS Y4, 256(CY)
	VMOVUPS Y5, 320(CY)
	VMOVUPS Y6, 384(CY)
	VMOVUPS Y7, 448(CY)
	VMOVAPS Y10, Y0                // high half: accumulators = bias
	VMOVAPS Y10, Y1
	VMOVAPS Y10, Y2
	VMOVAPS Y10, Y3
	VMOVAPS Y10, Y4
	VMOVAPS Y10, Y5
	VMOVAPS Y10, Y6
	VMOVAPS Y10, Y7
	MOVQ    taps+40(FP), CI
	SHLQ    $3, CI
	NEGQ    CI                     // -8·taps

chan256TapHi:
	MOVQ        (CEO)(CI*1), COFF  // off[t]
	VMOVUPS     32(CEW)(CI*8), Y8  // w[16t+8 : 16t+16]
	VFMADD231PS 32(CB0)(COFF*4), Y8, Y0 // channels 8-15
	VFMADD231PS 32(CB1)(COFF*4), Y8, Y1
	VFMADD231PS 32(CB2)(COFF*4), Y8, Y2
	VFMADD231PS 32(CB3)(COFF*4), Y8, Y3
	VFMADD231PS 32(CB4)(COFF*4), Y8, Y4
	VFMADD231PS 32(CB5)(COFF*4), Y8, Y5
	VFMADD231PS 32(CB6)(COFF*4), Y8, Y6
	VFMADD231PS 32(CB7)(COFF*4), Y8, Y7
	ADDQ        $8, CI
	JNZ         chan256TapHi

	VMOVUPS Y0, 32(CY)             // store the high halves
	VMOVUPS Y1, 96(CY)
	VMOVUPS Y2, 160(CY)
	VMOVUPS Y3, 224(CY)
	VMOVUPS Y4, 288(CY)
	VMOVUPS Y5, 352(CY)
	VMOVUPS Y6, 416(CY)
	VMOVUPS Y7, 480(CY)
	ADDQ    $512, CY
	ADDQ    $64, CPOS
	DECQ    nb-8(SP)
	JNZ     chan256Block
	VZEROUPPER
	RET

// TRANSPOSE16 transposes the 16×16 floats in Z0-Z15 (Zi[j] = a[i][j])
// into Z0-Z15 (Zj[i] = a[i][j]), Z16-Z31 its temporaries: within each
// 128-bit lane, unpacks pair rows, then 64-bit shuffles make 4×4 blocks
// (Z(4q+c), lane k: column 4k+c of rows 4q..4q+3); two rounds of
// 128-bit lane shuffles then gather each column's four blocks.
#define TRANSPOSE16 \
	VUNPCKLPS  Z1, Z0, Z16;          \
	VUNPCKHPS  Z1, Z0, Z17;          \
	VUNPCKLPS  Z3, Z2, Z18;          \
	VUNPCKHPS  Z3, Z2, Z19;          \
	VUNPCKLPS  Z5, Z4, Z20;          \
	VUNPCKHPS  Z5, Z4, Z21;          \
	VUNPCKLPS  Z7, Z6, Z22;          \
	VUNPCKHPS  Z7, Z6, Z23;          \
	VUNPCKLPS  Z9, Z8, Z24;          \
	VUNPCKHPS  Z9, Z8, Z25;          \
	VUNPCKLPS  Z11, Z10, Z26;        \
	VUNPCKHPS  Z11, Z10, Z27;        \
	VUNPCKLPS  Z13, Z12, Z28;        \
	VUNPCKHPS  Z13, Z12, Z29;        \
	VUNPCKLPS  Z15, Z14, Z30;        \
	VUNPCKHPS  Z15, Z14, Z31;        \
	VSHUFPS    $0x44, Z18, Z16, Z0;  \
	VSHUFPS    $0xEE, Z18, Z16, Z1;  \
	VSHUFPS    $0x44, Z19, Z17, Z2;  \
	VSHUFPS    $0xEE, Z19, Z17, Z3;  \
	VSHUFPS    $0x44, Z22, Z20, Z4;  \
	VSHUFPS    $0xEE, Z22, Z20, Z5;  \
	VSHUFPS    $0x44, Z23, Z21, Z6;  \
	VSHUFPS    $0xEE, Z23, Z21, Z7;  \
	VSHUFPS    $0x44, Z26, Z24, Z8;  \
	VSHUFPS    $0xEE, Z26, Z24, Z9;  \
	VSHUFPS    $0x44, Z27, Z25, Z10; \
	VSHUFPS    $0xEE, Z27, Z25, Z11; \
	VSHUFPS    $0x44, Z30, Z28, Z12; \
	VSHUFPS    $0xEE, Z30, Z28, Z13; \
	VSHUFPS    $0x44, Z31, Z29, Z14; \
	VSHUFPS    $0xEE, Z31, Z29, Z15; \
	VSHUFF32X4 $0x88, Z4, Z0, Z16;   \
	VSHUFF32X4 $0x88, Z5, Z1, Z17;   \
	VSHUFF32X4 $0x88, Z6, Z2, Z18;   \
	VSHUFF32X4 $0x88, Z7, Z3, Z19;   \
	VSHUFF32X4 $0xDD, Z4, Z0, Z20;   \
	VSHUFF32X4 $0xDD, Z5, Z1, Z21;   \
	VSHUFF32X4 $0xDD, Z6, Z2, Z22;   \
	VSHUFF32X4 $0xDD, Z7, Z3, Z23;   \
	VSHUFF32X4 $0x88, Z12, Z8, Z24;  \
	VSHUFF32X4 $0x88, Z13, Z9, Z25;  \
	VSHUFF32X4 $0x88, Z14, Z10, Z26; \
	VSHUFF32X4 $0x88, Z15, Z11, Z27; \
	VSHUFF32X4 $0xDD, Z12, Z8, Z28;  \
	VSHUFF32X4 $0xDD, Z13, Z9, Z29;  \
	VSHUFF32X4 $0xDD, Z14, Z10, Z30; \
	VSHUFF32X4 $0xDD, Z15, Z11, Z31; \
	VSHUFF32X4 $0x88, Z24, Z16, Z0;  \
	VSHUFF32X4 $0x88, Z25, Z17, Z1;  \
	VSHUFF32X4 $0x88, Z26, Z18, Z2;  \
	VSHUFF32X4 $0x88, Z27, Z19, Z3;  \
	VSHUFF32X4 $0x88, Z28, Z20, Z4;  \
	VSHUFF32X4 $0x88, Z29, Z21, Z5;  \
	VSHUFF32X4 $0x88, Z30, Z22, Z6;  \
	VSHUFF32X4 $0x88, Z31, Z23, Z7;  \
	VSHUFF32X4 $0xDD, Z24, Z16, Z8;  \
	VSHUFF32X4 $0xDD, Z25, Z17, Z9;  \
	VSHUFF32X4 $0xDD, Z26, Z18, Z10; \
	VSHUFF32X4 $0xDD, Z27, Z19, Z11; \
	VSHUFF32X4 $0xDD, Z28, Z20, Z12; \
	VSHUFF32X4 $0xDD, Z29, Z21, Z13; \
	VSHUFF32X4 $0xDD, Z30, Z22, Z14; \
	VSHUFF32X4 $0xDD, Z31, Z23, Z15

#define IDST DI  // dst
#define IDP  SI  // dpos cursor
#define ISRC BX  // src + p
#define IROF R8  // roff
#define IN   R9  // positions left
#define IT   R10 // a loaded offset

// ILOAD loads lane l's next 16 inputs, src[roff[l]+p ...], into Zl under
// K1 (lanes past the positions left read nothing and are zero).
#define ILOAD(l, z) \
	MOVQ      (l*8)(IROF), IT; \
	VMOVUPS.Z (ISRC)(IT*4), K1, z

// ILOADF is ILOAD for a whole step: no mask.
#define ILOADF(l, z) \
	MOVQ    (l*8)(IROF), IT; \
	VMOVUPS (ISRC)(IT*4), z

// ISTORE stores position p+j's vector to dst + dpos[p+j].
#define ISTORE(j, z) \
	MOVQ    (j*8)(IDP), IT; \
	VMOVUPS z, (IDST)(IT*4)

// ---------------------------------------------------------------------
// func dwChanInAVX512(dst *float32, dpos *int, src *float32, roff *int, n int)
// dst[dpos[p]+l] = src[roff[l]+p] for p < n, l < 16: 16 positions at a
// time, the 16 lanes' rows loaded, transposed (TRANSPOSE16) and each
// position's vector stored to its place. A last step of fewer than 16
// positions backs up to end at n, redoing a few positions (the same
// values again: masked loads cost more than a whole step on Zen 5);
// with n < 16 it loads under the opmask K1 of the positions and stores
// as many as there are.
// ---------------------------------------------------------------------
TEXT ·dwChanInAVX512(SB), NOSPLIT, $0-40
	MOVQ  dst+0(FP), IDST
	MOVQ  dpos+8(FP), IDP
	MOVQ  src+16(FP), ISRC
	MOVQ  roff+24(FP), IROF
	MOVQ  n+32(FP), IN

chanInStep:
	CMPQ  IN, $16
	JAE   chanInFull
	CMPQ  n+32(FP), $16
	JB    chanInMasked             // fewer than 16 positions in all
	MOVQ  $16, CX                  // else the last step ends at n, overlapping
	SUBQ  IN, CX                   // the one before: back up 16-IN positions
	SHLQ  $2, CX
	SUBQ  CX, ISRC                 // src - 4(16-IN) bytes
	SHLQ  $1, CX
	SUBQ  CX, IDP                  // dpos - 8(16-IN) bytes
	MOVQ  $16, IN
	JMP   chanInFull

chanInMasked:
	MOVQ  IN, CX                   // K1 = IN lanes
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	JMP   chanInLoad

chanInFull:
	ILOADF(0, Z0)                   // Zl = lane l's 16 positions
	ILOADF(1, Z1)
	ILOADF(2, Z2)
	ILOADF(3, Z3)
	ILOADF(4, Z4)
	ILOADF(5, Z5)
	ILOADF(6, Z6)
	ILOADF(7, Z7)
	ILOADF(8, Z8)
	ILOADF(9, Z9)
	ILOADF(10, Z10)
	ILOADF(11, Z11)
	ILOADF(12, Z12)
	ILOADF(13, Z13)
	ILOADF(14, Z14)
	ILOADF(15, Z15)
	JMP   chanInShuffle

chanInLoad:
	ILOAD(0, Z0)                   // Zl = lane l's 16 positions
	ILOAD(1, Z1)
	ILOAD(2, Z2)
	ILOAD(3, Z3)
	ILOAD(4, Z4)
	ILOAD(5, Z5)
	ILOAD(6, Z6)
	ILOAD(7, Z7)
	ILOAD(8, Z8)
	ILOAD(9, Z9)
	ILOAD(10, Z10)
	ILOAD(11, Z11)
	ILOAD(12, Z12)
	ILOAD(13, Z13)
	ILOAD(14, Z14)
	ILOAD(15, Z15)

chanInShuffle:
	TRANSPOSE16                    // Zj = position p+j's 16 lanes
	CMPQ  IN, $16
	JB    chanInTail
	ISTORE(0, Z0)                  // a whole step: 16 positions
	ISTORE(1, Z1)
	ISTORE(2, Z2)
	ISTORE(3, Z3)
	ISTORE(4, Z4)
	ISTORE(5, Z5)
	ISTORE(6, Z6)
	ISTORE(7, Z7)
	ISTORE(8, Z8)
	ISTORE(9, Z9)
	ISTORE(10, Z10)
	ISTORE(11, Z11)
	ISTORE(12, Z12)
	ISTORE(13, Z13)
	ISTORE(14, Z14)
	ISTORE(15, Z15)
	ADDQ  $128, IDP
	ADDQ  $64, ISRC
	SUBQ  $16, IN
	JNZ   chanInStep
	VZEROUPPER
	RET

chanInTail:                          // 1 to 15 positions left
	ISTORE(0, Z0)
	CMPQ IN, $1
	JEQ  chanInDone
	ISTORE(1, Z1)
	CMPQ IN, $2
	JEQ  chanInDone
	ISTORE(2, Z2)
	CMPQ IN, $3
	JEQ  chanInDone
	ISTORE(3, Z3)
	CMPQ IN, $4
	JEQ  chanInDone
	ISTORE(4, Z4)
	CMPQ IN, $5
	JEQ  chanInDone
	ISTORE(5, Z5)
	CMPQ IN, $6
	JEQ  chanInDone
	ISTORE(6, Z6)
	CMPQ IN, $7
	JEQ  chanInDone
	ISTORE(7, Z7)
	CMPQ IN, $8
	JEQ  chanInDone
	ISTORE(8, Z8)
	CMPQ IN, $9
	JEQ  chanInDone
	ISTORE(9, Z9)
	CMPQ IN, $10
	JEQ  chanInDone
	ISTORE(10, Z10)
	CMPQ IN, $11
	JEQ  chanInDone
	ISTORE(11, Z11)
	CMPQ IN, $12
	JEQ  chanInDone
	ISTORE(12, Z12)
	CMPQ IN, $13
	JEQ  chanInDone
	ISTORE(13, Z13)
	CMPQ IN, $14
	JEQ  chanInDone
	ISTORE(14, Z14)

chanInDone:
	VZEROUPPER
	RET

#define ODST DI  // dst + p
#define OLDD R8  // ldd, bytes
#define OSRC SI  // src + 16p
#define ON   R9  // positions left
#define OLN  R10 // lanes
#define OD   R11 // dst + l·ldd + p

// OSTORE stores lane l's 16 positions (under K1) and returns once
// l+1 lanes are stored.
#define OSTORE(l, z) \
	VMOVUPS z, K1, (OD); \
	CMPQ    OLN, $(l+1); \
	JEQ     chanOutNext; \
	ADDQ    OLDD, OD

// ---------------------------------------------------------------------
// func dwChanOutAVX512(dst *float32, ldd int, src *float32, n, lanes int)
// dst[l·ldd+p] = src[16p+l] for l < lanes, p < n: 16 positions at a
// time (src holds n rounded up to 16, so every step loads 16), transposed
// (TRANSPOSE16) into the lanes' 16 outputs, each lane's stored under K1,
// every position. A last step of fewer than 16 backs up to end at n,
// rewriting a few outputs with the same values (masked stores cost more
// than a whole step on Zen 5); with n < 16, K1 holds the n positions.
// ---------------------------------------------------------------------
TEXT ·dwChanOutAVX512(SB), NOSPLIT, $0-40
	MOVQ  dst+0(FP), ODST
	MOVQ  ldd+8(FP), OLDD
	SHLQ  $2, OLDD
	MOVQ  src+16(FP), OSRC
	MOVQ  n+24(FP), ON
	MOVQ  lanes+32(FP), OLN
	MOVL  $0xFFFF, AX
	KMOVW AX, K1                   // every position

chanOutStep:
	CMPQ    ON, $16
	JAE     chanOutLoad
	CMPQ    n+24(FP), $16
	JB      chanOutMasked          // fewer than 16 positions in all
	MOVQ    $16, CX                // else the last step ends at n, overlapping
	SUBQ    ON, CX                 // the one before: back up 16-ON positions
	SHLQ    $2, CX
	SUBQ    CX, ODST               // dst - 4(16-ON) bytes
	SHLQ    $4, CX
	SUBQ    CX, OSRC               // src - 64(16-ON) bytes
	MOVQ    $16, ON
	JMP     chanOutLoad

chanOutMasked:
	MOVQ    ON, CX                 // K1 = ON positions
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K1

chanOutLoad:
	VMOVUPS (OSRC), Z0             // Zj = position p+j's 16 lanes
	VMOVUPS 64(OSRC), Z1
	VMOVUPS 128(OSRC), Z2
	VMOVUPS 192(OSRC), Z3
	VMOVUPS 256(OSRC), Z4
	VMOVUPS 320(OSRC), Z5
	VMOVUPS 384(OSRC), Z6
	VMOVUPS 448(OSRC), Z7
	VMOVUPS 512(OSRC), Z8
	VMOVUPS 576(OSRC), Z9
	VMOVUPS 640(OSRC), Z10
	VMOVUPS 704(OSRC), Z11
	VMOVUPS 768(OSRC), Z12
	VMOVUPS 832(OSRC), Z13
	VMOVUPS 896(OSRC), Z14
	VMOVUPS 960(OSRC), Z15
	TRANSPOSE16                    // Zl = lane l's 16 positions
	MOVQ    ODST, OD
	OSTORE(0, Z0)
	OSTORE(1, Z1)
	OSTORE(2, Z2)
	OSTORE(3, Z3)
	OSTORE(4, Z4)
	OSTORE(5, Z5)
	OSTORE(6, Z6)
	OSTORE(7, Z7)
	OSTORE(8, Z8)
	OSTORE(9, Z9)
	OSTORE(10, Z10)
	OSTORE(11, Z11)
	OSTORE(12, Z12)
	OSTORE(13, Z13)
	OSTORE(14, Z14)
	VMOVUPS Z15, K1, (OD)          // the sixteenth lane

chanOutNext:
	ADDQ $64, ODST
	ADDQ $1024, OSRC
	SUBQ $16, ON
	JG   chanOutStep
	VZEROUPPER
	RET

// TRANSPOSE8 transposes the 8×8 floats in Y0-Y7 (Yi[j] = a[i][j]) into
// Y8-Y15 (Y(8+j)[i] = a[i][j]), clobbering Y0-Y7: within each 128-bit
// lane, unpacks pair rows and 64-bit shuffles make 4×4 blocks (Y(4q+c),
// lane k: column 4k+c of rows 4q..4q+3), then lane permutes join each
// column's two halves.
#define TRANSPOSE8 \
	VUNPCKLPS  Y1, Y0, Y8;          \
	VUNPCKHPS  Y1, Y0, Y9;          \
	VUNPCKLPS  Y3, Y2, Y10;         \
	VUNPCKHPS  Y3, Y2, Y11;         \
	VUNPCKLPS  Y5, Y4, Y12;         \
	VUNPCKHPS  Y5, Y4, Y13;         \
	VUNPCKLPS  Y7, Y6, Y14;         \
	VUNPCKHPS  Y7, Y6, Y15;         \
	VSHUFPS    $0x44, Y10, Y8, Y0;  \
	VSHUFPS    $0xEE, Y10, Y8, Y1;  \
	VSHUFPS    $0x44, Y11, Y9, Y2;  \
	VSHUFPS    $0xEE, Y11, Y9, Y3;  \
	VSHUFPS    $0x44, Y14, Y12, Y4; \
	VSHUFPS    $0xEE, Y14, Y12, Y5; \
	VSHUFPS    $0x44, Y15, Y13, Y6; \
	VSHUFPS    $0xEE, Y15, Y13, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8;   \
	VPERM2F128 $0x20, Y5, Y1, Y9;   \
	VPERM2F128 $0x20, Y6, Y2, Y10;  \
	VPERM2F128 $0x20, Y7, Y3, Y11;  \
	VPERM2F128 $0x31, Y4, Y0, Y12;  \
	VPERM2F128 $0x31, Y5, Y1, Y13;  \
	VPERM2F128 $0x31, Y6, Y2, Y14;  \
	VPERM2F128 $0x31, Y7, Y3, Y15

// ILOAD8 loads lane l's next 8 inputs, src[roff[l]+p ...], into y.
#define ILOAD8(l, y) \
	MOVQ    (l*8)(IROF), IT; \
	VMOVUPS (ISRC)(IT*4), y

// ISTORE8 stores position p+j's eight lanes to dst + dpos[p+j] + half.
#define ISTORE8(j, half, y) \
	MOVQ    (j*8)(IDP), IT; \
	VMOVUPS y, half(IDST)(IT*4)

// ---------------------------------------------------------------------
// func dwChanIn8AVX2(dst *float32, dpos *int, src *float32, roff *int, n int)
// dwChanInAVX512 for n >= 8 with ymm vectors: eight positions a step,
// lanes 0-7 then 8-15 each loaded, transposed (TRANSPOSE8) and stored as
// the positions' half vectors; a last step of fewer than eight backs up
// to end at n.
// ---------------------------------------------------------------------
TEXT ·dwChanIn8AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), IDST
	MOVQ dpos+8(FP), IDP
	MOVQ src+16(FP), ISRC
	MOVQ roff+24(FP), IROF
	MOVQ n+32(FP), IN

chanIn8Step:
	CMPQ IN, $8
	JAE  chanIn8Lo
	MOVQ $8, CX                    // the last step ends at n: back up
	SUBQ IN, CX                    // 8-IN positions
	SHLQ $2, CX
	SUBQ CX, ISRC                  // src - 4(8-IN) bytes
	SHLQ $1, CX
	SUBQ CX, IDP                   // dpos - 8(8-IN) bytes
	MOVQ $8, IN

chanIn8Lo:
	ILOAD8(0, Y0)                  // lanes 0-7: Yl = lane l's 8 positions
	ILOAD8(1, Y1)
	ILOAD8(2, Y2)
	ILOAD8(3, Y3)
	ILOAD8(4, Y4)
	ILOAD8(5, Y5)
	ILOAD8(6, Y6)
	ILOAD8(7, Y7)
	TRANSPOSE8                     // Y(8+j) = position p+j's lanes 0-7
	ISTORE8(0, 0, Y8)
	ISTORE8(1, 0, Y9)
	ISTORE8(2, 0, Y10)
	ISTORE8(3, 0, Y11)
	ISTORE8(4, 0, Y12)
	ISTORE8(5, 0, Y13)
	ISTORE8(6, 0, Y14)
	ISTORE8(7, 0, Y15)
	ILOAD8(8, Y0)                  // lanes 8-15
	ILOAD8(9, Y1)
	ILOAD8(10, Y2)
	ILOAD8(11, Y3)
	ILOAD8(12, Y4)
	ILOAD8(13, Y5)
	ILOAD8(14, Y6)
	ILOAD8(15, Y7)
	TRANSPOSE8                     // Y(8+j) = position p+j's lanes 8-15
	ISTORE8(0, 32, Y8)
	ISTORE8(1, 32, Y9)
	ISTORE8(2, 32, Y10)
	ISTORE8(3, 32, Y11)
	ISTORE8(4, 32, Y12)
	ISTORE8(5, 32, Y13)
	ISTORE8(6, 32, Y14)
	ISTORE8(7, 32, Y15)
	ADDQ $64, IDP
	ADDQ $32, ISRC
	SUBQ $8, IN
	JNZ  chanIn8Step
	VZEROUPPER
	RET

// OSTORE8 stores lane l's 8 positions and leaves the step's lanes once
// l+1 are stored.
#define OSTORE8(l, y) \
	VMOVUPS y, (OD);     \
	CMPQ    OLN, $(l+1); \
	JEQ     chanOut8Next; \
	ADDQ    OLDD, OD

// ---------------------------------------------------------------------
// func dwChanOut8AVX2(dst *float32, ldd int, src *float32, n, lanes int)
// dwChanOutAVX512 for n >= 8 with ymm vectors: eight positions a step,
// their lanes 0-7 then (lanes > 8) 8-15 loaded, transposed (TRANSPOSE8)
// and stored as the lanes' eight outputs; a last step of fewer than
// eight backs up to end at n, rewriting a few outputs with the same
// values.
// ---------------------------------------------------------------------
TEXT ·dwChanOut8AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), ODST
	MOVQ ldd+8(FP), OLDD
	SHLQ $2, OLDD
	MOVQ src+16(FP), OSRC
	MOVQ n+24(FP), ON
	MOVQ lanes+32(FP), OLN

chanOut8Step:
	CMPQ ON, $8
	JAE  chanOut8Lo
	MOVQ $8, CX                    // the last step ends at n: back up
	SUBQ ON, CX                    // 8-ON positions
	SHLQ $2, CX
	SUBQ CX, ODST                  // dst - 4(8-ON) bytes
	SHLQ $4, CX
	SUBQ CX, OSRC                  // src - 64(8-ON) bytes
	MOVQ $8, ON

chanOut8Lo:
	VMOVUPS (OSRC), Y0             // Yj = position p+j's lanes 0-7
	VMOVUPS 64(OSRC), Y1
	VMOVUPS 128(OSRC), Y2
	VMOVUPS 192(OSRC), Y3
	VMOVUPS 256(OSRC), Y4
	VMOVUPS 320(OSRC), Y5
	VMOVUPS 384(OSRC), Y6
	VMOVUPS 448(OSRC), Y7
	TRANSPOSE8                     // Y(8+l) = lane l's 8 positions
	MOVQ    ODST, OD
	OSTORE8(0, Y8)
	OSTORE8(1, Y9)
	OSTORE8(2, Y10)
	OSTORE8(3, Y11)
	OSTORE8(4, Y12)
	OSTORE8(5, Y13)
	OSTORE8(6, Y14)
	OSTORE8(7, Y15)                // lane 7: the last when lanes = 8
	VMOVUPS 32(OSRC), Y0           // Yj = position p+j's lanes 8-15
	VMOVUPS 96(OSRC), Y1
	VMOVUPS 160(OSRC), Y2
	VMOVUPS 224(OSRC), Y3
	VMOVUPS 288(OSRC), Y4
	VMOVUPS 352(OSRC), Y5
	VMOVUPS 416(OSRC), Y6
	VMOVUPS 480(OSRC), Y7
	TRANSPOSE8                     // Y(8+l) = lane 8+l's 8 positions
	OSTORE8(8, Y8)
	OSTORE8(9, Y9)
	OSTORE8(10, Y10)
	OSTORE8(11, Y11)
	OSTORE8(12, Y12)
	OSTORE8(13, Y13)
	OSTORE8(14, Y14)
	VMOVUPS Y15, (OD)              // lane 15

chanOut8Next:
	ADDQ $32, ODST
	ADDQ $512, OSRC
	SUBQ $8, ON
	JG   chanOut8Step
	VZEROUPPER
	RET
