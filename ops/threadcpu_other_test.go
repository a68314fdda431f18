//go:build !linux

package ops

// threadCPU reports no per-thread clock off Linux: callers time by the
// wall clock.
func threadCPU() (float64, bool) { return 0, false }
