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
//   - interleave_ratio: a memory-bound pass split over two threads by
//     rows (each thread half the rows of every plane of 64 planes of
//     56×56, as a row-split step over NCHW data), over the same pass on
//     tensors of each thread's own: the cost of the lines at the
//     boundaries between the threads' rows (each thread wrote its rows
//     the pass before, so the rows themselves stay in its cache), the two
//     alternated in three rounds. On the 2-vCPU Zen 5 VM it measured
//     1.16-1.17 with cores 455-505 ns apart; a standalone loop of the
//     same kind 1.25-1.55 there and 1.03-1.05 with cores ~170 ns apart,
//     and about 1 on far cores where the tensors were blocked by 16
//     channels (56-60 µs a pass against 55-66; the threads' rows of a
//     block one run of memory).
//   - read_1t_gbs, read_2t_gbs: the memory read bandwidth of one thread
//     and of two at once (in all), each reading a 128 MiB buffer of its
//     own. On the 2-vCPU Zen 5 VM one thread read 24-43 GB/s and two
//     36-83 in all, 1.0-2.0 times one, moving with the other tenants:
//     where two read no more than one, a step bound by memory (weights
//     streamed from it: ResNet-18's layer-4 Winograd convs read 16.8 MiB
//     each a run) gains nothing from the second thread.
//   - cores: "two" where fma_ratio is at least 0.75, else "one".
//
// Run it on an otherwise idle machine: other busy threads take turns with
// its own and read as one core (and as slow lines).
// bench/onnx/compare.sh runs it around every two-thread measurement and
// reports speed-ups over the rounds that ran on two cores beside those
// over all rounds.
package main
