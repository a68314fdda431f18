// The epilogue clamp of the panel kernels (gemm512_amd64.s,
// gemm512w_amd64.s, gemm_amd64.s). The including file defines FLAGS, K
// (free at the store: the kernels reload it per tile), TILE_ROWS, and
// ROW_RELU and ROW_CLAMP for its tile's shape, CLAMP_ZERO setting the
// register they take as +0 and CLAMP_HI setting the one they take as the
// upper bound from K.

// TILE_CLAMP applies the clamp the flags ask for (gemmRelu, gemmClamp; see
// gemm_variant.go) to the tile's accumulators before they are stored; the
// upper bound is the flags' upper half.
#define TILE_CLAMP \
	CLAMP_ZERO;                  \
	TESTQ $8, FLAGS;             \
	JZ    clamp2;                \
	TILE_ROWS(ROW_RELU);         \
	JMP   clamped;               \
clamp2:                          \
	TESTQ $16, FLAGS;            \
	JZ    clamped;               \
	MOVQ  FLAGS, K;              \
	SHRQ  $32, K;                \
	CLAMP_HI;                    \
	TILE_ROWS(ROW_CLAMP);        \
clamped:
