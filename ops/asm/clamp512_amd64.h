// The AVX-512 epilogue clamps (gemmRelu, gemmClamp; see gemm_variant.go),
// shared by the panel kernels (gemm512_amd64.s, gemm512w_amd64.s) and the
// depthwise copy (conv_depthwise_amd64.s), each with its own registers.
//
// RELU512 is max(+0, x) returning x for zeros and NaNs (the elementwise
// Relu: x < 0 ? 0 : x), ZERO holding +0. CLAMP512 is the elementwise
// Clamp kernel's OP_MAX then OP_MIN to [+0, HI] (-0 < +0) in fewer steps:
// its two NaN fixups leave a NaN lane as NaN + 0, which one fixup from the
// lanes where x is a NaN gives too; TMP and the opmask MASK are scratch.
#define RELU512(X, ZERO) VMAXPS X, ZERO, X
#define CLAMP512(X, ZERO, HI, TMP, MASK) \
	VCMPPS   $3, ZERO, X, MASK;  \
	VRANGEPS $5, ZERO, X, TMP;   \
	VRANGEPS $4, HI, TMP, TMP;   \
	VADDPS   ZERO, X, MASK, TMP; \
	VMOVAPS  TMP, X
