// The registers of the AVX2 GEMM's 6×16 tile and its k step over
// packed panels (gemm_amd64.s, gemm_zip_amd64.s). The including file
// defines PA (the packed A panel) and PB (the packed B panel).

#define B0  Y0  // B row, columns 0-7
#define B1  Y1  // B row, columns 8-15
#define A0  Y2  // broadcast A value (even rows)
#define A1  Y3  // broadcast A value (odd rows)
#define C00 Y4  // accumulators: row r, columns 0-7 (Cr0) and 8-15 (Cr1)
#define C01 Y5
#define C10 Y6
#define C11 Y7
#define C20 Y8
#define C21 Y9
#define C30 Y10
#define C31 Y11
#define C40 Y12
#define C41 Y13
#define C50 Y14
#define C51 Y15

// KSTEP(u) is step u of an unrolled group: load the B row, then broadcast
// each of the six A values and fuse-multiply-add it into its row's two
// accumulators. Alternating A0/A1 lets a broadcast issue while the
// previous row's FMAs still read the other register.
#define KSTEP(u) \
	VMOVUPS      (64*u)(PB), B0;    \
	VMOVUPS      (64*u+32)(PB), B1; \
	VBROADCASTSS (24*u)(PA), A0;    \
	VFMADD231PS  B0, A0, C00;       \
	VFMADD231PS  B1, A0, C01;       \
	VBROADCASTSS (24*u+4)(PA), A1;  \
	VFMADD231PS  B0, A1, C10;       \
	VFMADD231PS  B1, A1, C11;       \
	VBROADCASTSS (24*u+8)(PA), A0;  \
	VFMADD231PS  B0, A0, C20;       \
	VFMADD231PS  B1, A0, C21;       \
	VBROADCASTSS (24*u+12)(PA), A1; \
	VFMADD231PS  B0, A1, C30;       \
	VFMADD231PS  B1, A1, C31;       \
	VBROADCASTSS (24*u+16)(PA), A0; \
	VFMADD231PS  B0, A0, C40;       \
	VFMADD231PS  B1, A0, C41;       \
	VBROADCASTSS (24*u+20)(PA), A1; \
	VFMADD231PS  B0, A1, C50;       \
	VFMADD231PS  B1, A1, C51
