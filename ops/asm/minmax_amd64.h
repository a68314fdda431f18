// Min and max with Go's semantics for AVX2 kernels (included by
// ew_amd64.s and reduce_amd64.s). Each computes D = A op B, keeping A and
// B; T and U are scratch.

// VMAXPS returns its second source (B in max(A, B)) on a tie or a NaN, so
// taking it both ways round and ANDing turns max(-0, +0) into +0, as Go's
// max; lanes with a NaN operand are then set to all ones (a NaN).
#define OP_MAX(B, A, D, T, U) \
	VCMPPS $3, B, A, U \
	VMAXPS B, A, T     \
	VMAXPS A, B, D     \
	VANDPS T, D, D     \
	VORPS  U, D, D

// Both ways round and ORed: min(-0, +0) = -0, and a NaN operand is in one
// of the two results, which OR keeps a NaN.
#define OP_MIN(B, A, D, T, U) \
	VMINPS B, A, T \
	VMINPS A, B, D \
	VORPS  T, D, D
