// Package kiln is a pure-Go machine-learning graph compiler and runtime.
//
// A program builds a graph with package graph (or imports one), and kiln
// fuses it, plans all of its memory into one arena and runs it through a
// flat, slot-indexed dispatch loop. On the CPU the kernels are Go assembly
// chosen once per kernel family at run time from the CPU's features
// (KILN_CPU narrows the choice). On amd64 every family has an AVX-512
// variant (GEMM, with AVX-512 BF16 for BF16 weights; elementwise math;
// rows, reductions and transposes; depthwise convolution; the
// implicit-GEMM convolution's patch packing; the Winograd convolution's
// transforms are the AVX2 ones there), and every family has an AVX2+FMA
// variant; on arm64 the GEMM, elementwise, row and depthwise families
// have NEON variants. Every kernel has a pure-Go twin, and `kiln info`
// lists the families and the variant this CPU runs of each. GPU drivers
// are loaded at run time without cgo, so a program that uses only the
// CPU links statically with CGO_ENABLED=0.
//
// Persistent state lives where the graph runs: a handle (BindHandle, or
// BindGPUHandle to keep it on the device) feeds an input on every run and
// takes an output's value after it (FeedHandle, SetGPUHandleFeed), the
// KV-cache pattern. On CUDA and Metal a GPU handle stays in device memory
// and is fed there, so a decode step crosses the bus with its token and
// logits only (Transfers counts what crosses); on the CPU it is a host
// handle, with the same calls and results.
//
// The stages live in their own packages, in pipeline order:
//
//	tensor  dtypes, shapes, broadcasting, host tensors, f16/bf16
//	graph   the IR: nodes, ops, builder, shape inference, Verify
//	ops     the kernel catalogue and the reference interpreter
//	fuse    graph-to-graph passes
//	plan    schedule, liveness and arena layout
//	exec    lowering to a Program and the CPU run loop
package kiln
