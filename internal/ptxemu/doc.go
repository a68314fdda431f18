// Package ptxemu interprets the PTX that kiln's emitter writes, so every GPU
// kernel runs in ordinary `go test` on machines without a GPU. It is test
// tooling, not a backend users select.
//
// Load parses a module (entry signatures through ptx.Parse, bodies here);
// Module.Launch runs one kernel launch over a Memory, the emulated device
// memory, with the grid, block and dynamic shared memory of a
// ptx.Launch. Blocks run in parallel goroutines; the threads of a block
// run on a deterministic scheduler that advances each thread to its next
// synchronisation point (bar.sync, a warp collective such as shfl.sync,
// ldmatrix or mma.sync, or exit), so barriers and warp collectives have
// their real semantics, divergent warps included.
//
// The subset: the global, shared (static and extern dynamic), local and
// param spaces and generic addresses; ld/st with .v2/.v4; integer, bit,
// float (f16, bf16, f32, f64) and predicate arithmetic; every cvt; setp
// and selp; bra, ret, exit; bar.sync/bar.arrive (counted too),
// bar.warp.sync; shfl.sync; atom and red; cp.async; ldmatrix and
// mma.sync (m16n8k8 and m16n8k16, f16/bf16 inputs) with the ISA's
// fragment layouts. Everything else fails at Load, naming the
// instruction and its line.
//
// The emulator is strict where hardware is undefined: an out-of-bounds or
// misaligned access is an error naming the thread and the address, as is
// a read of a register never written, a read of shared memory no thread
// has written, a shared-memory data race (two threads, no barrier
// between, one writing: both named), a barrier some threads can no longer
// reach, and a deadlock of warp collectives.
//
// Arithmetic follows the PTX ISA: IEEE rounding for .rn/.rz/.rm/.rp (fma
// with a single rounding), .ftz and .sat, ordered and unordered
// comparisons, canonical NaNs, f16/bf16 conversions. Approximate
// instructions (ex2.approx, rsqrt.approx, div.approx, ...) are correctly
// rounded by default; Options.Approx set to ApproxBound instead moves
// each result by the largest error the ISA allows, so tests can check
// that kiln's tolerances survive the hardware's worst case.
//
// Huge launches can be sampled: Memory.AllocSparse backs gigabyte
// buffers with the pages touched only, and Options.Blocks runs a chosen
// few blocks of the grid.
package ptxemu
