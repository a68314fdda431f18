//go:build !purego

#include "textflag.h"

// Depthwise convolution kernels, NEON; see conv_depthwise_arm64.go for
// each contract and conv_depthwise.go for the plan. Every instruction
// here has a Go mnemonic (no WORDs).

#define PY   R0  // y: the block's first output
#define PX   R1  // x: the block's first input (before off[t])
#define POFF R2  // off
#define PW   R3  // w
#define TAPS R4  // taps
#define NB   R5  // blocks left
#define PO   R6  // off cursor
#define PWT  R7  // w cursor
#define T    R8  // taps left
#define SRC  R9  // x + off[t] for the block
#define TMP  R10

// ---------------------------------------------------------------------
// func dwTaps64NEON(y, x *float32, off *int, w *float32, taps, blocks int, bias float32)
// 16 accumulators V0-V15: 64 outputs a block; V16-V19 the inputs of a
// quarter block, V20 the tap's weight, V21 the bias, in every lane.
// ---------------------------------------------------------------------
TEXT ·dwTaps64NEON(SB), NOSPLIT, $0-52
	MOVD  y+0(FP), PY
	MOVD  x+8(FP), PX
	MOVD  off+16(FP), POFF
	MOVD  w+24(FP), PW
	MOVD  taps+32(FP), TAPS
	MOVD  blocks+40(FP), NB
	MOVWU bias+48(FP), TMP
	VDUP  TMP, V21.S4

block:
	VMOV V21.B16, V0.B16 // accumulators = bias
	VMOV V21.B16, V1.B16
	VMOV V21.B16, V2.B16
	VMOV V21.B16, V3.B16
	VMOV V21.B16, V4.B16
	VMOV V21.B16, V5.B16
	VMOV V21.B16, V6.B16
	VMOV V21.B16, V7.B16
	VMOV V21.B16, V8.B16
	VMOV V21.B16, V9.B16
	VMOV V21.B16, V10.B16
	VMOV V21.B16, V11.B16
	VMOV V21.B16, V12.B16
	VMOV V21.B16, V13.B16
	VMOV V21.B16, V14.B16
	VMOV V21.B16, V15.B16
	MOVD POFF, PO
	MOVD PW, PWT
	MOVD TAPS, T

tap:
	MOVD.P  8(PO), SRC                  // off[t]
	ADD     SRC<<2, PX, SRC             // x + off[t]
	VLD1R.P 4(PWT), [V20.S4]            // w[t] in every lane
	VLD1.P  64(SRC), [V16.S4, V17.S4, V18.S4, V19.S4] // 16 inputs
	VFMLA   V16.S4, V20.S4, V0.S4 // acc += w[t]·x[off[t]+i]
	VFMLA   V17.S4, V20.S4, V1.S4
	VFMLA   V18.S4, V20.S4, V2.S4
	VFMLA   V19.S4, V20.S4, V3.S4
	VLD1.P  64(SRC), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA   V16.S4, V20.S4, V4.S4
	VFMLA   V17.S4, V20.S4, V5.S4
	VFMLA   V18.S4, V20.S4, V6.S4
	VFMLA   V19.S4, V20.S4, V7.S4
	VLD1.P  64(SRC), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA   V16.S4, V20.S4, V8.S4
	VFMLA   V17.S4, V20.S4, V9.S4
	VFMLA   V18.S4, V20.S4, V10.S4
	VFMLA   V19.S4, V20.S4, V11.S4
	VLD1.P  64(SRC), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA   V16.S4, V20.S4, V12.S4
	VFMLA   V17.S4, V20.S4, V13.S4
	VFMLA   V18.S4, V20.S4, V14.S4
	VFMLA   V19.S4, V20.S4, V15.S4
	SUBS    $1, T
	BNE     tap

	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(PY) // store the block
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(PY)
	VST1.P [V8.S4, V9.S4, V10.S4, V11.S4], 64(PY)
	VST1.P [V12.S4, V13.S4, V14.S4, V15.S4], 64(PY)
	ADD    $256, PX
	SUBS   $1, NB
	BNE    block
	RET

#define PE   R0 // e row
#define PD   R1 // o row
#define PS   R2 // src row
#define LDD  R3 // e and o stride, bytes
#define LDS  R4 // src stride, bytes
#define ROWS R5 // rows left
#define M    R6 // floats a row
#define E    R7 // e cursor
#define O    R8 // o cursor
#define S    R9 // src cursor
#define N    R11 // floats left in the row

// ---------------------------------------------------------------------
// func dwSplit2NEON(e, o *float32, ldd int, src *float32, lds int, rows, m int)
// (e if j is even, else o)[r·ldd + j/2] = src[r·lds + j]: eight floats
// at a time through the de-interleaving load VLD2, the rest a pair at a
// time, an odd m's last float to e.
// ---------------------------------------------------------------------
TEXT ·dwSplit2NEON(SB), NOSPLIT, $0-56
	MOVD e+0(FP), PE
	MOVD o+8(FP), PD
	MOVD ldd+16(FP), LDD
	MOVD src+24(FP), PS
	MOVD lds+32(FP), LDS
	MOVD rows+40(FP), ROWS
	MOVD m+48(FP), M
	LSL  $2, LDD
	LSL  $2, LDS

splitRow:
	MOVD PE, E
	MOVD PD, O
	MOVD PS, S
	MOVD M, N

split8:
	CMP    $8, N
	BLT    splitPair
	VLD2.P 32(S), [V0.S4, V1.S4] // V0 the even floats, V1 the odd ones
	VST1.P [V0.S4], 16(E)
	VST1.P [V1.S4], 16(O)
	SUB    $8, N
	B      split8

splitPair:
	CMP     $2, N
	BLT     splitOdd
	MOVWU.P 4(S), TMP
	MOVWU.P TMP, 4(E)
	MOVWU.P 4(S), TMP
	MOVWU.P TMP, 4(O)
	SUB     $2, N
	B       splitPair

splitOdd:
	CBZ   N, splitNext
	MOVWU (S), TMP
	MOVWU TMP, (E)

splitNext:
	ADD  LDD, PE
	ADD  LDD, PD
	ADD  LDS, PS
	SUBS $1, ROWS
	BNE  splitRow
	RET

#define PDST R0 // dst row
#define PSRC R1 // src row
#define CLDD R2 // dst stride, bytes
#define CLDS R3 // src stride, bytes
#define CROW R4 // rows left
#define COLS R5
#define D    R6 // dst cursor
#define CS   R7 // src cursor
#define CN   R8 // floats left in the row

// ---------------------------------------------------------------------
// func dwCopy2NEON(dst *float32, ldd int, src *float32, lds int, rows, cols int)
// dst[r·ldd+j] = src[r·lds+j]: sixteen floats at a time, then four, then
// one.
// ---------------------------------------------------------------------
TEXT ·dwCopy2NEON(SB), NOSPLIT, $0-48
	MOVD dst+0(FP), PDST
	MOVD ldd+8(FP), CLDD
	MOVD src+16(FP), PSRC
	MOVD lds+24(FP), CLDS
	MOVD rows+32(FP), CROW
	MOVD cols+40(FP), COLS
	LSL  $2, CLDD
	LSL  $2, CLDS

copyRow:
	MOVD PDST, D
	MOVD PSRC, CS
	MOVD COLS, CN

copy16:
	CMP    $16, CN
	BLT    copy4
	VLD1.P 64(CS), [V0.S4, V1.S4, V2.S4, V3.S4]
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(D)
	SUB    $16, CN
	B      copy16

copy4:
	CMP    $4, CN
	BLT    copy1
	VLD1.P 16(CS), [V0.S4]
	VST1.P [V0.S4], 16(D)
	SUB    $4, CN
	B      copy4

copy1:
	CBZ     CN, copyNext
	MOVWU.P 4(CS), TMP
	MOVWU.P TMP, 4(D)
	SUB     $1, CN
	B       copy1

copyNext:
	ADD  CLDD, PDST
	ADD  CLDS, PSRC
	SUBS $1, CROW
	BNE  copyRow
	RET

// ---------------------------------------------------------------------
// The channel-interleaved path (conv_depthwise_chan.go): vectors of 16
// channels, four V registers each.
// ---------------------------------------------------------------------

#define NY   R0  // y: the sub-block's first output vector
#define NX   R1  // x
#define NPOS R2  // pos cursor
#define NOFF R3  // off
#define NW   R4  // w
#define NTAP R5  // taps
#define NSB  R6  // sub-blocks of four positions left
#define NPO  R7  // off cursor
#define NPW  R8  // w cursor
#define NT   R9  // taps left
#define NB0  R10 // x + pos[4s+r] for r = 0..3, bytes
#define NB1  R11
#define NB2  R12
#define NB3  R13
#define NO   R14 // off[t]
#define NA   R15 // an input's address

// NTAPPOS adds tap t's weights (V16-V19) times position r's inputs, read
// at base + 4·off[t] into the temporaries, to accumulators a0-a3.
#define NTAPPOS(base, t0, t1, t2, t3, a0, a1, a2, a3) \
	ADD   NO<<2, base, NA;                            \
	VLD1  (NA), [t0.S4, t1.S4, t2.S4, t3.S4];         \
	VFMLA V16.S4, t0.S4, a0.S4;                       \
	VFMLA V17.S4, t1.S4, a1.S4;                       \
	VFMLA V18.S4, t2.S4, a2.S4;                       \
	VFMLA V19.S4, t3.S4, a3.S4

// ---------------------------------------------------------------------
// func dwChanTapsNEON(y, x *float32, pos, off *int, w *float32, taps, blocks int)
// A block of eight positions as two sub-blocks of four: V0-V15 the
// accumulators (position r, channels 4q..4q+3 in V(4r+q)), V16-V19 the
// tap's 16 weights, V20-V23 and V28-V31 inputs (alternating, so one
// position's loads overlap the other's multiply-adds), V24-V27 the bias.
// ---------------------------------------------------------------------
TEXT ·dwChanTapsNEON(SB), NOSPLIT, $0-56
	MOVD y+0(FP), NY
	MOVD x+8(FP), NX
	MOVD pos+16(FP), NPOS
	MOVD off+24(FP), NOFF
	MOVD w+32(FP), NW
	MOVD taps+40(FP), NTAP
	MOVD blocks+48(FP), NSB
	LSL  $1, NSB                          // sub-blocks: 2·blocks
	ADD  NTAP<<6, NW, NA                  // w + 16·taps: the bias
	VLD1 (NA), [V24.S4, V25.S4, V26.S4, V27.S4]

chanSub:
	MOVD.P 8(NPOS), NB0                   // the four positions' bases, x + 4·pos
	ADD    NB0<<2, NX, NB0
	MOVD.P 8(NPOS), NB1
	ADD    NB1<<2, NX, NB1
	MOVD.P 8(NPOS), NB2
	ADD    NB2<<2, NX, NB2
	MOVD.P 8(NPOS), NB3
	ADD    NB3<<2, NX, NB3
	VMOV   V24.B16, V0.B16                // accumulators = bias
	VMOV   V25.B16, V1.B16
	VMOV   V26.B16, V2.B16
	VMOV   V27.B16, V3.B16
	VMOV   V24.B16, V4.B16
	VMOV   V25.B16, V5.B16
	VMOV   V26.B16, V6.B16
	VMOV   V27.B16, V7.B16
	VMOV   V24.B16, V8.B16
	VMOV   V25.B16, V9.B16
	VMOV   V26.B16, V10.B16
	VMOV   V27.B16, V11.B16
	VMOV   V24.B16, V12.B16
	VMOV   V25.B16, V13.B16
	VMOV   V26.B16, V14.B16
	VMOV   V27.B16, V15.B16
	MOVD   NOFF, NPO
	MOVD   NW, NPW
	MOVD   NTAP, NT

chanTap:
	MOVD.P 8(NPO), NO                     // off[t]
	VLD1.P 64(NPW), [V16.S4, V17.S4, V18.S4, V19.S4] // w[16t : 16t+16]
	NTAPPOS(NB0, V20, V21, V22, V23, V0, V1, V2, V3) // acc[r] += w[t]·x[pos[r]+off[t]]
	NTAPPOS(NB1, V28, V29, V30, V31, V4, V5, V6, V7)
	NTAPPOS(NB2, V20, V21, V22, V23, V8, V9, V10, V11)
	NTAPPOS(NB3, V28, V29, V30, V31, V12, V13, V14, V15)
	SUBS   $1, NT
	BNE    chanTap

	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(NY) // store the four positions
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(NY)
	VST1.P [V8.S4, V9.S4, V10.S4, V11.S4], 64(NY)
	VST1.P [V12.S4, V13.S4, V14.S4, V15.S4], 64(NY)
	SUBS   $1, NSB
	BNE    chanSub
	RET

// NTR4 transposes the 4×4 floats in a, b, c, d (rows) into w, x, y, z
// (columns), t0-t3 its temporaries: 32-bit then 64-bit interleaves.
#define NTR4(a, b, c, d, w, x, y, z, t0, t1, t2, t3) \
	VTRN1 b.S4, a.S4, t0.S4;  \
	VTRN2 b.S4, a.S4, t1.S4;  \
	VTRN1 d.S4, c.S4, t2.S4;  \
	VTRN2 d.S4, c.S4, t3.S4;  \
	VTRN1 t2.D2, t0.D2, w.D2; \
	VTRN1 t3.D2, t1.D2, x.D2; \
	VTRN2 t2.D2, t0.D2, y.D2; \
	VTRN2 t3.D2, t1.D2, z.D2

#define IDST R0  // dst
#define IDP  R1  // dpos cursor
#define ISRC R2  // src + 4p
#define IROF R3  // roff
#define IN   R4  // positions left
#define IT   R5  // a loaded offset, then an address
#define ID0  R6  // dst + 4·dpos[p+j] for j = 0..3, advancing 16 bytes a quad
#define ID1  R7
#define ID2  R8
#define ID3  R9

// NILOAD loads lane l's four inputs src[roff[l]+p ...] into v.
#define NILOAD(l, v) \
	MOVD (l*8)(IROF), IT;    \
	ADD  IT<<2, ISRC, IT;    \
	VLD1 (IT), [v.S4]

// NIQUAD interleaves lanes 4q..4q+3 (roff entries l0..l3) of the step's
// four positions: loaded as rows, transposed, stored to the positions'
// places, each place then advanced to the next quad.
#define NIQUAD(l0, l1, l2, l3) \
	NILOAD(l0, V0);                                            \
	NILOAD(l1, V1);                                            \
	NILOAD(l2, V2);                                            \
	NILOAD(l3, V3);                                            \
	NTR4(V0, V1, V2, V3, V4, V5, V6, V7, V16, V17, V18, V19); \
	VST1.P [V4.S4], 16(ID0);                                   \
	VST1.P [V5.S4], 16(ID1);                                   \
	VST1.P [V6.S4], 16(ID2);                                   \
	VST1.P [V7.S4], 16(ID3)

// ---------------------------------------------------------------------
// func dwChanIn4NEON(dst *float32, dpos *int, src *float32, roff *int, n int)
// dst[dpos[p]+l] = src[roff[l]+p] for p < n (>= 4), l < 16: four
// positions a step, each quad of lanes loaded as four rows of four,
// transposed (NTR4) and stored to the four positions' places; a last
// step of fewer than four backs up to end at n, redoing a few positions.
// ---------------------------------------------------------------------
TEXT ·dwChanIn4NEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), IDST
	MOVD dpos+8(FP), IDP
	MOVD src+16(FP), ISRC
	MOVD roff+24(FP), IROF
	MOVD n+32(FP), IN

chanIn4Step:
	CMP  $4, IN
	BGE  chanIn4Go
	MOVD $4, IT                    // the last step ends at n: back up
	SUB  IN, IT, IT                // 4-IN positions
	SUB  IT<<2, ISRC, ISRC         // src - 4(4-IN) bytes
	SUB  IT<<3, IDP, IDP           // dpos - 8(4-IN) bytes
	MOVD $4, IN

chanIn4Go:
	MOVD (IDP), ID0                // the four positions' places, dst + 4·dpos
	ADD  ID0<<2, IDST, ID0
	MOVD 8(IDP), ID1
	ADD  ID1<<2, IDST, ID1
	MOVD 16(IDP), ID2
	ADD  ID2<<2, IDST, ID2
	MOVD 24(IDP), ID3
	ADD  ID3<<2, IDST, ID3
	NIQUAD(0, 1, 2, 3)             // lanes 0-3
	NIQUAD(4, 5, 6, 7)
	NIQUAD(8, 9, 10, 11)
	NIQUAD(12, 13, 14, 15)
	ADD  $32, IDP
	ADD  $16, ISRC
	SUBS $4, IN
	BNE  chanIn4Step
	RET

#define ODST R0  // dst + 4p
#define OLDD R1  // ldd, bytes
#define OSRC R2  // src + 64p
#define ON   R3  // positions left
#define OLN  R4  // lanes
#define OD   R5  // dst + l·ldd + 4p
#define OL   R6  // lanes left to store in the step
#define OS   R7  // a quad's inputs

// NOSTORE stores lane l's four outputs from v and leaves the step once
// every lane is stored.
#define NOSTORE(v) \
	VST1 [v.S4], (OD);  \
	SUBS $1, OL;        \
	BEQ  chanOut4Next;  \
	ADD  OLDD, OD

// NOQUAD deinterleaves lanes 4q..4q+3 (q·16 bytes into each position)
// of the step's four positions: loaded, transposed, each lane's four
// outputs stored.
#define NOQUAD(q) \
	ADD    $(q*16), OSRC, OS;                                  \
	VLD1   (OS), [V0.S4];                                      \
	ADD    $64, OS;                                            \
	VLD1   (OS), [V1.S4];                                      \
	ADD    $64, OS;                                            \
	VLD1   (OS), [V2.S4];                                      \
	ADD    $64, OS;                                            \
	VLD1   (OS), [V3.S4];                                      \
	NTR4(V0, V1, V2, V3, V4, V5, V6, V7, V16, V17, V18, V19); \
	NOSTORE(V4);                                               \
	NOSTORE(V5);                                               \
	NOSTORE(V6);                                               \
	NOSTORE(V7)

// ---------------------------------------------------------------------
// func dwChanOut4NEON(dst *float32, ldd int, src *float32, n, lanes int)
// dst[l·ldd+p] = src[16p+l] for l < lanes, p < n (>= 4): four
// positions a step, each quad of lanes loaded from the four positions,
// transposed (NTR4) and stored as the lanes' four outputs, until lanes
// are stored; a last step of fewer than four backs up to end at n,
// rewriting a few outputs with the same values.
// ---------------------------------------------------------------------
TEXT ·dwChanOut4NEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), ODST
	MOVD ldd+8(FP), OLDD
	LSL  $2, OLDD
	MOVD src+16(FP), OSRC
	MOVD n+24(FP), ON
	MOVD lanes+32(FP), OLN

chanOut4Step:
	CMP  $4, ON
	BGE  chanOut4Go
	MOVD $4, OD                    // the last step ends at n: back up
	SUB  ON, OD, OD                // 4-ON positions
	SUB  OD<<2, ODST, ODST         // dst - 4(4-ON) bytes
	SUB  OD<<6, OSRC, OSRC         // src - 64(4-ON) bytes
	MOVD $4, ON

chanOut4Go:
	MOVD ODST, OD
	MOVD OLN, OL
	NOQUAD(0)                      // lanes 0-3
	NOQUAD(1)
	NOQUAD(2)
	NOQUAD(3)

chanOut4Next:
	ADD  $16, ODST
	ADD  $256, OSRC
	SUBS $4, ON
	BGT  chanOut4Step
	RET
