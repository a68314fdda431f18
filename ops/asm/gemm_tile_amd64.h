// The 6×16 C tile of the AVX2 GEMM micro-kernels (gemm_amd64.s,
// gemm_rowa_amd64.s): accumulators C00..C51 (row r, columns 0-7 and
// 8-15), C rows 0-2 at PC + r·LDC and 3-5 at PC3 + (r-3)·LDC. The
// including file defines those names.

// TILE_PREFETCH fetches the tile's six C lines, so the write-back after
// the k loop finds them in L1.
#define TILE_PREFETCH \
	PREFETCHT0 (PC);          \
	PREFETCHT0 (PC)(LDC*1);   \
	PREFETCHT0 (PC)(LDC*2);   \
	PREFETCHT0 (PC3);         \
	PREFETCHT0 (PC3)(LDC*1);  \
	PREFETCHT0 (PC3)(LDC*2)

// TILE_ZERO clears the accumulators.
#define TILE_ZERO \
	VXORPS C00, C00, C00; \
	VXORPS C01, C01, C01; \
	VXORPS C10, C10, C10; \
	VXORPS C11, C11, C11; \
	VXORPS C20, C20, C20; \
	VXORPS C21, C21, C21; \
	VXORPS C30, C30, C30; \
	VXORPS C31, C31, C31; \
	VXORPS C40, C40, C40; \
	VXORPS C41, C41, C41; \
	VXORPS C50, C50, C50; \
	VXORPS C51, C51, C51

// TILE_ADD adds the old C tile to the accumulators (accumulate mode;
// overwrite mode never reads C, so garbage or NaN there cannot leak in).
#define TILE_ADD \
	VADDPS (PC), C00, C00;            \
	VADDPS 32(PC), C01, C01;          \
	VADDPS (PC)(LDC*1), C10, C10;     \
	VADDPS 32(PC)(LDC*1), C11, C11;   \
	VADDPS (PC)(LDC*2), C20, C20;     \
	VADDPS 32(PC)(LDC*2), C21, C21;   \
	VADDPS (PC3), C30, C30;           \
	VADDPS 32(PC3), C31, C31;         \
	VADDPS (PC3)(LDC*1), C40, C40;    \
	VADDPS 32(PC3)(LDC*1), C41, C41;  \
	VADDPS (PC3)(LDC*2), C50, C50;    \
	VADDPS 32(PC3)(LDC*2), C51, C51

// TILE_STORE stores the six rows.
#define TILE_STORE \
	VMOVUPS C00, (PC);            \
	VMOVUPS C01, 32(PC);          \
	VMOVUPS C10, (PC)(LDC*1);     \
	VMOVUPS C11, 32(PC)(LDC*1);   \
	VMOVUPS C20, (PC)(LDC*2);     \
	VMOVUPS C21, 32(PC)(LDC*2);   \
	VMOVUPS C30, (PC3);           \
	VMOVUPS C31, 32(PC3);         \
	VMOVUPS C40, (PC3)(LDC*1);    \
	VMOVUPS C41, 32(PC3)(LDC*1);  \
	VMOVUPS C50, (PC3)(LDC*2);    \
	VMOVUPS C51, 32(PC3)(LDC*2)
