// Package emu interprets the PTX that kiln's emitter writes, so every GPU
// kernel runs in ordinary `go test` on machines without a GPU. It is test
// tooling, not a backend users select.
//
// Load parses a module (entry signatures through ptx.Parse, bodies here);
// Module.Launch runs one kernel launch over a Memory, the emulated device
// memory, with the grid and block of a ptx.Launch. Blocks run in parallel
// goroutines; the threads of a block run on a deterministic scheduler that
// advances each thread to its next synchronisation point (bar.sync, a warp
// collective such as shfl.sync, ldmatrix or mma.sync, or exit), so
// barriers and warp collectives have their real semantics.
//
// The emulator is strict where hardware is undefined: an instruction
// outside the supported subset is an error naming it and its line, as is
// an out-of-bounds or misaligned access (naming the thread and address),
// a read of a register never written, a shared-memory data race between
// two barriers (naming both threads), a barrier some threads of the block
// can no longer reach, and a warp collective whose lanes disagree.
//
// Arithmetic follows the PTX ISA: IEEE rounding for .rn/.rz/.rm/.rp (fma
// with a single rounding), .ftz and .sat, ordered and unordered
// comparisons, canonical NaNs, f16/bf16 conversions. Approximate
// instructions (ex2.approx, rsqrt.approx, div.approx, ...) are correctly
// rounded by default; Options.Approx set to ApproxBound instead perturbs
// each result by the largest error the ISA allows, so tests can check
// that kiln's tolerances survive the hardware's worst case.
package emu
