package asm

import (
	"time"

	"github.com/kilnml/kiln/ops/cpuid"
)

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

// FMAPeakRate is one core's FMA throughput in GFLOP/s: FMAPeak's loop
// run for about window, in slices of 16 Ki iterations (a fraction of a
// millisecond); 0 where there is no loop. Benchmarks print their rate
// over it (×peak), measured next to them: the clock the core runs at
// under load is the one they met.
func FMAPeakRate(window time.Duration) float64 {
	start := time.Now()
	var flops float64
	for time.Since(start) < window {
		f, _ := FMAPeak(1 << 14)
		if f == 0 {
			return 0
		}
		flops += f
	}
	return flops / time.Since(start).Seconds() / 1e9
}
