package main

import (
	"runtime"
	"testing"

	"github.com/kilnml/kiln/ops/asm"
)

// TestProbe runs the probe's measurements: each must give a rate and a
// round trip a real machine can have, and the classification must split
// at 0.75 (two hardware threads of one core give about 0.5, two cores
// about 1).
func TestProbe(t *testing.T) {
	for _, c := range []struct {
		ratio float64
		want  string
	}{{0.48, "one"}, {0.74, "one"}, {0.75, "two"}, {1.02, "two"}} {
		if got := placement(c.ratio); got != c.want {
			t.Errorf("placement(%v) = %q, want %q", c.ratio, got, c.want)
		}
	}
	if runtime.NumCPU() < 2 {
		t.Skip("one logical CPU: no second thread to measure")
	}
	// Under 1 ns would be no transfer at all; a line still in transit
	// after 1 ms is a broken loop.
	if rtt := roundTrip(); !(rtt > 1 && rtt < 1e6) {
		t.Errorf("round trip %v ns", rtt)
	}
	// Interleaved rows cost at least nothing against the threads' own
	// tensors (0.5: a broken measurement), and not ten passes' worth.
	if r := interleaveRatio(); !(r > 0.5 && r < 10) {
		t.Errorf("interleave ratio %v", r)
	}
	// 0.1 GB/s to 10 TB/s: any machine's memory.
	if one, two := readRate(1), readRate(2); !(one > 0.1 && one < 1e4 && two > 0.1 && two < 1e4) {
		t.Errorf("read rates %v GB/s (one thread), %v (two): not a machine's", one, two)
	}
	if f, _ := asm.FMAPeak(1); f == 0 {
		t.Skip("no FMA loop for this CPU (the probe exits with an error there)")
	}
	one, two := fmaRate(1), fmaRate(2)
	// 1 GFLOP/s to 10 TFLOP/s a thread: any FMA loop of any vector width.
	if !(one > 1 && one < 1e4 && two > 1 && two < 1e4) {
		t.Errorf("FMA rates %v (one thread), %v (two): not a machine's", one, two)
	}
}
