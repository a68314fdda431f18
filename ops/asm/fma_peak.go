package asm

import "github.com/kilnml/kiln/ops/cpuid"

// fmaPeak is a loop of register-only FMAs of one feature: the core's
// single-precision FMA throughput, against which kernels are read.
type fmaPeak struct {
	feature cpuid.Variant
	fmas    int       // single-precision FMAs an iteration
	run     func(int) // n iterations
}

// FMAPeak runs the best FMA loop that cpuid.Allows for n iterations and
// returns the floating-point operations it did (two per FMA lane) and
// the variant it ran; 0 and cpuid.Generic where there is none (benchmarks
// then have no peak to print).
func FMAPeak(n int) (flops float64, v cpuid.Variant) {
	p := fmaPeakFamily.best()
	if p == nil {
		return 0, cpuid.Generic
	}
	p.run(n)
	return 2 * float64(p.fmas) * float64(max(n, 0)), p.feature
}
