// Package asm holds kiln's hand-written Go assembly kernels (amd64:
// AVX2+FMA in *_amd64.s; arm64: NEON in *_arm64.s, the instructions Go's
// assembler lacks written as WORDs with their GNU mnemonic in a comment,
// which TestNeonWords checks against go tool objdump -gnu) and, for every assembly
// function, a pure-Go twin with the same signature that is always
// compiled. The purego build tag removes all assembly; on other
// architectures only the twins exist.
//
// Each kernel family has one dispatch point, a variant table ordered best
// first, gated by ops/cpu (features read once, the KILN_CPU kill switch).
// Lengths, strides and buffer sizes are validated in Go before any
// assembly call: the assembly never sees an unchecked length.
//
// GEMM (gemm*.go, gemm_amd64.s, gemm_arm64.s): Gemm is a prepared single-precision
// matrix product with BLIS-style packing, any shape and layout, optional
// pre-packed B (weights), a GEMV path for one-row products, an epilogue
// (bias, activation, residual) applied to tiles as they are finished, and
// multi-threading that shares one packed B between workers handing out
// blocks of C dynamically.
//
// Elementwise (ew_*.go, ew_{amd64,arm64}.s; math_*.go, math_{amd64,arm64}.s):
// EwKernels runs float32 unary functions (exp, log, tanh, sigmoid, erf,
// GELU in both forms, SiLU, relu, neg, abs) and + - × ÷ max min against a
// vector or a scalar. The transcendental functions use kiln's own range
// reductions and Remez-fitted polynomials (_math_fit/), stay within 4 ulp
// of float64 over all of float32, and their twins compute the same bits.
// BestEw is the dispatch point.
//
// Rows and reductions (row*.go, reduce*.go, row_{amd64,arm64}.s,
// reduce_{amd64,arm64}.s): sums, max/min, softmax and log-softmax,
// LayerNorm and RMSNorm rows. Transpose (transpose*.go): blocked 8×8.
// Conv2D and pools (conv*.go, pool.go): an implicit GEMM (patches packed
// straight into the micro-kernel's panels, weights pre-packed) or a
// direct depthwise kernel; 2×2 max pooling vectorised, other pools by rows.
//
// AVX-512 (AVX-512F/BW/DQ/VL) lands family by family: the GEMM's
// micro-kernel (gemm512_amd64.s, a 12×16 tile with embedded-broadcast
// FMAs; NR stays 16 so packing and the convolution's patch packers are
// shared with AVX2) runs on AVX-512 hosts; families without an avx512
// variant dispatch to avx2 there. FMAPeak (fma_peak*.go) runs
// register-only FMAs, the peak the GEMM figures are read against.
// KILN_TEST_REQUIRE (require_test.go) makes CI fail when dispatch does
// not pick the expected variant for a family: avx512 where the family
// has one, else avx2.
package asm
