// Package ops is kiln's kernel catalogue: for every op kind and dtype a
// reference kernel in plain Go (simple, obviously correct, always
// compiled), the flags the planner needs (may the output overwrite an
// input?) and the tolerance a faster kernel must meet against it.
//
// The float elementwise ops are rows of one table (EwOp, elementwise.go):
// each row's float64 formula, tolerance, dtypes, asm kernel, epilogue
// activation and fusion roles, from which the catalogue entries, the
// vectorised kernels, FusedElementwise, the GEMM and convolution
// epilogues and fuse's activation recogniser all read. CONTRIBUTING.md
// at the repository root lists the files a new op touches.
//
// Kernels are made in two steps. Prepare runs once per node at compile
// time: it reads the node's attributes and shapes and precomputes what the
// loop needs (strides, window offsets, scratch). The Kernel it returns then
// runs on tensor views (into an arena, or freshly allocated) as often as
// needed, without allocating.
//
// BF16 weights. A MatMul, Gemm or FusedMatMul whose B operand is a param
// set from BF16 bytes (kiln's SetParamTyped; Env.ParamSource says so)
// keeps that weight packed in bf16 and runs asm.GemmBF16 on CPUs with
// AVX512_BF16 (KILN_CPU allowing avx512): half the weight bytes, two
// steps of depth per instruction, and A rounded to bf16 as it is
// converted, so results carry about three significant digits (the bound
// is in ops/asm/gemm_bf16.go). Weights set as F32, other CPUs, and
// KILN_BF16=off (config.go) keep the float32 GEMM.
//
// Interpret evaluates a whole graph node by node with the reference
// kernels, allocating freely: it is the oracle every later stage (fusion,
// planning, assembly kernels, GPU backends) is tested against.
package ops
