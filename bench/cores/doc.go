// Command cores tells how the host placed the machine's first two
// logical CPUs, for benchmarks that compare one thread with two: on a
// virtual machine the hypervisor may run its two vCPUs on two physical
// cores, near each other or on different dies, or on the two hardware
// threads of one core, and move them between these while a benchmark
// runs. A two-thread speed-up means something only next to where the
// threads ran.
//
//	go run ./bench/cores
//
// It prints one JSON object:
//
//   - fma_ratio: the per-thread rate of register-only FMAs (asm.FMAPeak)
//     with two threads running at once over that of one alone. Two
//     cores give about 1; the two hardware threads of one core share its
//     FMA units and give about 0.5.
//   - rtt_ns: the round trip of a cache line between two threads that
//     take turns writing it (the median of several trials). Cores that
//     share a cache pass it in about 100-200 ns; cores on different dies
//     (AMD's CCDs) take 400-600 ns, which every line a parallel step
//     hands from one worker to the other pays.
//   - cores: "two" where fma_ratio is at least 0.75, else "one".
//
// Run it on an otherwise idle machine: other busy threads take turns with
// its own and read as one core (and as slow lines).
// bench/onnx/compare.sh runs it around every two-thread measurement and
// reports speed-ups over the rounds that ran on two cores beside those
// over all rounds.
package main
