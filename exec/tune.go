package exec

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// A program whose loops run faster on one core than on the pool runs
// them inline. On a 2-vCPU Zen 5 VM whose cores at times exchange cache
// lines slowly, a segmentation head ran at 0.37 ms on two workers and
// 0.27 ms on one (ShuffleNetV2 1.21 against 0.87 ms), while at other
// times the same two workers took it to 0.16 ms. Choosing step by step
// does not help there: a step run inline after one run on the pool reads
// what the other core wrote, so a mix measured slower than either (its
// inline steps 1.6× their one-thread time). So a program on two or more
// workers measures whole runs: after tuneWarmup runs its next
// 2·tuneRounds runs alternate between the pool and inline (Runner.For
// running each loop whole on the caller), and it runs inline from then
// on where the inline runs' median is under tuneMargin of the pooled
// runs'; every retuneRuns runs it measures again, as the host's state
// moves. The kernels' results do not depend on how a loop is split
// (their work is divided into the same tasks either way;
// TestInlineSameBits checks it on test models), so every run gives the
// same bits. Loop bodies (which run inside their parent's step) and
// guarded plans do not tune; Options.NoTuning or KILN_TUNE=off turn it
// off.

const (
	tuneWarmup = 2    // runs before measuring: first runs fault pages in
	tuneRounds = 5    // runs of each kind measured
	tuneMargin = 0.9  // inline must be this much faster to be chosen
	retuneRuns = 1000 // runs between measurements
)

// runTuner is a program's measurement of its runs, pooled and inline.
type runTuner struct {
	runs   int // Run calls since the last decision (or the start)
	tuned  bool
	inline bool // the last decision
	pooled [tuneRounds]time.Duration
	inl    [tuneRounds]time.Duration
}

// newRunTuner returns the tuner of a program on the pool opt names, or
// nil where the program does not tune.
func newRunTuner(opt Options, body, guarded bool) *runTuner {
	if opt.NoTuning || body || guarded || opt.Pool.Workers() < 2 || tuningOff() {
		return nil
	}
	return &runTuner{}
}

// tuningOff reports whether KILN_TUNE turns tuning off.
func tuningOff() bool {
	switch v := os.Getenv("KILN_TUNE"); v {
	case "", "on":
		return false
	case "off":
		return true
	default:
		fmt.Fprintf(os.Stderr, "kiln: KILN_TUNE=%q is not on or off; tuning stays on\n", v)
		return false
	}
}

// Tuning reports whether the program is still making its first
// measurement of pooled against inline runs (its first dozen runs): a
// benchmark warms up until it is not.
func (pr *Program) Tuning() bool { return pr.tuner != nil && !pr.tuner.tuned }

// Inline reports whether the program runs its loops inline now (its last
// measurement found them faster so).
func (pr *Program) Inline() bool { return pr.tuner != nil && pr.tuner.inline }

// startRun sets up the runner for one Run and reports whether the run
// is measured (then Run reports its time to endRun).
func (t *runTuner) startRun(r *Runner) bool {
	m := t.runs - t.warm()
	if m < 0 || m >= 2*tuneRounds {
		r.inline = t.inline
		return false
	}
	r.inline = m%2 == 1
	return true
}

// warm is how many unmeasured runs come before the next measurement.
func (t *runTuner) warm() int {
	if t.tuned {
		return retuneRuns
	}
	return tuneWarmup
}

// endRun records a measured run's time; after the last it decides.
func (t *runTuner) endRun(d time.Duration, measured bool) {
	if measured {
		m := t.runs - t.warm()
		if m%2 == 1 {
			t.inl[m/2] = d
		} else {
			t.pooled[m/2] = d
		}
	}
	t.runs++
	if t.runs == t.warm()+2*tuneRounds {
		t.inline = float64(median(t.inl)) < tuneMargin*float64(median(t.pooled))
		t.tuned, t.runs = true, 0
	}
}

// median is the middle of five durations, sorted on the stack (Run does
// not allocate).
func median(d [tuneRounds]time.Duration) time.Duration {
	slices.Sort(d[:])
	return d[tuneRounds/2]
}
