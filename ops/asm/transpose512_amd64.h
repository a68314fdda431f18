// The 16×16 transpose's stages, shared by transpose512_amd64.s and
// conv_convt4_amd64.s and conv_packtaps_amd64.s: T4 then L4 over sixteen
// registers (TRANSPOSE16) leave register r holding what was column r.

// T4(A, B, C, D): the 4×4 transpose within each 128-bit lane, in place
// (Z28-Z31 scratch): A = (a0 b0 c0 d0), B = (a1 b1 c1 d1), and so on.
#define T4(A, B, C, D) \
	VUNPCKLPS B, A, Z28;        \
	VUNPCKHPS B, A, Z29;        \
	VUNPCKLPS D, C, Z30;        \
	VUNPCKHPS D, C, Z31;        \
	VSHUFPS   $0x44, Z30, Z28, A; \
	VSHUFPS   $0xee, Z30, Z28, B; \
	VSHUFPS   $0x44, Z31, Z29, C; \
	VSHUFPS   $0xee, Z31, Z29, D

// L4(A, B, C, D): the 4×4 transpose of 128-bit lanes across four
// registers, in place (Z24-Z27 scratch): A = (A0 B0 C0 D0), B = (A1 B1 C1
// D1), and so on.
#define L4(A, B, C, D) \
	VSHUFF32X4 $0x44, B, A, Z24; \
	VSHUFF32X4 $0xee, B, A, Z25; \
	VSHUFF32X4 $0x44, D, C, Z26; \
	VSHUFF32X4 $0xee, D, C, Z27; \
	VSHUFF32X4 $0x88, Z26, Z24, A; \
	VSHUFF32X4 $0xdd, Z26, Z24, B; \
	VSHUFF32X4 $0x88, Z27, Z25, C; \
	VSHUFF32X4 $0xdd, Z27, Z25, D

// TRANSPOSE16 transposes the 16×16 tile in Z0-Z15 (row r in Zr) in
// place: afterwards Zr holds column r (Z24-Z31 scratch).
#define TRANSPOSE16 \
	T4(Z0, Z1, Z2, Z3); \
	T4(Z4, Z5, Z6, Z7); \
	T4(Z8, Z9, Z10, Z11); \
	T4(Z12, Z13, Z14, Z15); \
	L4(Z0, Z4, Z8, Z12); \
	L4(Z1, Z5, Z9, Z13); \
	L4(Z2, Z6, Z10, Z14); \
	L4(Z3, Z7, Z11, Z15)
