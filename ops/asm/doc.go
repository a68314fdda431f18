// Package asm holds kiln's hand-written Go assembly kernels (amd64:
// AVX2+FMA in *_amd64.s; arm64: NEON in *_arm64.s, the instructions Go's
// assembler lacks written as WORDs with their GNU mnemonic in a comment,
// which TestNeonWords checks against go tool objdump -gnu) and, for every assembly
// function, a pure-Go twin with the same signature that is always
// compiled. The purego build tag removes all assembly; on other
// architectures only the twins exist.
//
// Each kernel family keeps its variants in one registry (variant.go): a
// variantSet per family, the assembly best first and the Go twins last,
// filled by the architectures' inits; its best method is the family's one
// dispatch point, gated by ops/cpuid (features read once, the KILN_CPU kill
// switch) and chosen once. Families lists them for reports (kiln info).
// Lengths, strides and buffer sizes are validated in Go before any
// assembly call: the assembly never sees an unchecked length.
//
// GEMM (gemm*.go, gemm_amd64.s, gemm_arm64.s, gemm_pack_arm64.s): Gemm
// is a prepared single-precision matrix product with BLIS-style
// packing, any shape and layout, optional
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
// RowKernels has an avx512 variant (row512_amd64.go; reduce512, row512,
// row512_exp and transpose512 .s): zmm loops, opmask tails, VRANGEPS for
// Go's max and min, the AVX2 exponentials' steps (same weights, bit for
// bit) and a 16×16 transpose.
// Conv2D and pools (conv*.go, pool.go): an implicit GEMM (patches packed
// straight into the micro-kernel's panels, weights pre-packed; on small
// planes the workers split the output channels (conv_tiles.go) or, where
// the depth is large, the depth (conv_ksplit.go)) or, with
// one input channel per group, the depthwise family (conv_depthwise*.go,
// conv_depthwise_{amd64,arm64}.s: zero-padded, stride-phase-split planes
// whose taps are contiguous shifted reads, a block of outputs held in
// registers across all the taps; small planes instead go channel-
// interleaved, 16 channels a vector (conv_depthwise_chan.go); avx512,
// avx2, neon); 2×2 max pooling
// vectorised; 3-wide, stride-2 max pooling (ResNet's stem) a plane of
// rows per call (the pool family, pool_max3s2*.go: avx512, the twin);
// other pools by rows.
//
// BF16 (gemm_bf16*.go, gemm_bf16_amd64.s): GemmBF16 multiplies by a
// weight held in bfloat16 (PackedBF16) on AVX512_BF16 CPUs: a 12×16
// VDPBF16PS micro-kernel (two steps of depth per instruction, A's pairs
// by embedded broadcast from rows converted with VCVTNE2PS2BF16), a
// one-row kernel for decode-sized products, and twins that follow the
// instructions' documented rounding. The instructions Go's assembler
// lacks are BYTEs with their GNU disassembly in a comment (printed by
// _bf16gen, checked against objdump by TestBF16Encodings). cpu.HasBF16
// gates it; the accuracy bound is in gemm_bf16.go.
//
// Int8 (gemm_i8*.go, gemm_i8_{amd64,arm64}.s): GemmU8S8 multiplies
// uint8 activations by int8 weights packed once (PackedU8S8, with their
// column sums) into int32, bit-exact in every variant (the sum modulo
// 2³²: no saturating instruction; the argument is in gemm_i8.go): an
// AVX512_VNNI 8×32 VPDPBUSD tile and one-row kernel, AVX-VNNI 6×16 (VEX
// VPDPBUSD as checked BYTEs), AVX2 2×16 on VPMOVSXBW + VPMADDWD (not the
// saturating VPMADDUBSW), arm64 SDOT 4×16 with A shifted to signed bytes
// (WORDs checked with llvm-mc), each registered where the CPU has its
// dot product (cpuid.HasAVX512VNNI, HasAVXVNNI, HasDotProd). Row sums
// of A (RowSumsU8, or Run's RowSums) and the column sums let a caller
// apply zero points.
//
// AVX-512 (AVX-512F/BW/DQ/VL): every family has an avx512 variant,
// chosen on AVX-512 hosts: the GEMM (gemm512_amd64.s: a 12×16 tile with
// embedded-broadcast FMAs, 8- and 4-row edge tiles of the same bits, A
// read in place; NR stays 16, so packing and the convolution's patch
// packers are shared with AVX2), the elementwise kernels (ew512_amd64.s,
// math512_amd64.s: 16 lanes, the twins' bits, VSCALEFPS, VGETEXPPS/
// VGETMANTPS, VFIXUPIMMPS, VRANGEPS), the rows above and the depthwise
// convolution. FMAPeak (fma_peak*.go) runs register-only FMAs, the peak
// the GEMM figures are read against. KILN_TEST_REQUIRE (require_test.go)
// makes CI fail when dispatch does not pick the expected variant for a
// family: avx512 where the family has one, else avx2.
package asm
