// The epilogue clamp of the AVX-512 panel kernels (gemm512_amd64.s,
// gemm512w_amd64.s). The including file defines FLAGS, K (free at the
// store: the kernels reload it per tile), TILE_ROWS, and ROW_RELU and
// ROW_CLAMP for its tile's shape, reading the registers passed here.

// TILE_CLAMP(ZERO, HI) applies the clamp the flags ask for (gemmRelu,
// gemmClamp; see gemm_variant.go) to the tile's accumulators before they
// are stored: ZERO is set to +0 and HI to the upper bound, the flags'
// upper half.
#define TILE_CLAMP(ZERO, HI) \
	VPXORD       ZERO, ZERO, ZERO; \
	TESTQ        $8, FLAGS;        \
	JZ           clamp2;           \
	TILE_ROWS(ROW_RELU);           \
	JMP          clamped;          \
clamp2:                            \
	TESTQ        $16, FLAGS;       \
	JZ           clamped;          \
	MOVQ         FLAGS, K;         \
	SHRQ         $32, K;           \
	VPBROADCASTD K, HI;            \
	TILE_ROWS(ROW_CLAMP);          \
clamped:
