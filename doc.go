// Package kiln is a pure-Go machine-learning graph compiler and runtime.
//
// A program builds a graph with package graph (or imports one), and kiln
// fuses it, plans all of its memory into one arena and runs it through a
// flat, slot-indexed dispatch loop. On the CPU the kernels are Go assembly
// chosen at run time (AVX-512, AVX2+FMA, NEON) with a pure-Go twin for
// each; GPU drivers are loaded at run time without cgo, so a program that
// uses only the CPU links statically with CGO_ENABLED=0.
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
