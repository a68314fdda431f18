// Package bench holds kiln's Go benchmarks (testing.B; it has no API):
//
//	go test ./bench -bench . -benchtime 3x
//
// BenchmarkDispatch measures the executor's per-step overhead on a chain
// of 1,000 tiny elementwise steps (reported as ns/step), BenchmarkDemo*
// the latency of the built-in demo encoder (what `kiln demo` runs), and
// BenchmarkMLPRunSlots the allocation-free fast path on a small MLP, and
// BenchmarkRegionInterleave (Linux) what two cores pay for owning one
// buffer in interleaved regions, as a parallel step's partition deals
// them. No benchmark asserts a time; compare numbers from one machine and
// run.
package bench
