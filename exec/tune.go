package exec

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
)

// A program whose loops run faster on one core than on the pool runs
// them inline. On a 2-vCPU Zen 5 VM whose cores at times exchange cache
// lines slowly, a segmentation head ran at 0.37 ms on two workers and
// 0.27 ms on one (ShuffleNetV2 1.21 against 0.87 ms), while at other
// times the same two workers took it to 0.16 ms. Choosing step by step
// does not help there: a step run inline after one run on the pool reads
// what the other core wrote, so a mix measured slower than either (its
// inline steps 1.6× their one-thread time). So a program on two or more
// workers measures whole runs: after tuneWarmup runs, a block of
// tuneBlock runs on the pool, then one inline (each step's serial twin
// where it has one, else Runner.For running each loop whole on the
// caller), the first of each block not counted, and it runs inline from
// then on where the inline runs' median is under tuneMargin of the
// pooled runs'; every retuneRuns runs it measures again, as the host's
// state moves. (Runs that alternated the two kinds measured inline runs
// reading what the pool's other core had just written, and serial twins
// whose weights the pool's kernels had just evicted: a U-Net's inline
// runs measured slower than its one-thread program, and it stayed on the
// pool at 1.2 ms against 1.0.) Serial twins: a program with few weights
// (serialTwin) prepares each step twice, for its pool and for one
// worker, so that its inline runs run the one-worker plans (the pool's
// plans, made to split work, ran 10-20% slower on one core). The
// kernels' results depend neither on how a loop is split nor on the
// workers they were planned for (each output's sum is taken in the same
// order: TestInlineSameBits checks it on test models, and the model zoo
// gave the same bits on one, two and three workers), so every run gives
// the same bits. Loop bodies (which run inside their parent's step) and
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

// serialTwinBytes bounds the weights of a program that prepares each
// step twice, for its pool and for one worker (Step.Serial): the inline
// runs then run the one-worker plans, not the pool's plans on one core
// (a U-Net's Winograd convolutions, planned in bands per worker, ran
// 10-20% slower inline than planned for one). The GEMMs' and the
// convolutions' packed weights are kept once (Env.Shared: their packing
// does not depend on the workers), so their steps and those without
// weights get twins up to sharedTwinBytes; the steps whose kernels pack
// weights of their own (ownPacking) only up to serialTwinBytes, as every
// step did before the convolutions shared theirs. On the 2-vCPU VM
// DenseNet-121 (31 MiB of weights) ran, in a stretch when its pool was
// slow, at 5.3-5.5 ms a run on two threads against 4.5-4.7 on one, and no
// faster inline without twins; with them it ran inline at 4.6-4.8 ms (at
// other times its pool ran as fast as one thread and it stayed there).
// Resident memory at two threads: ResNet-18 (45 MiB) 227 MB with twins,
// 219 without, 345 with twins packing their own; SqueezeNet 46 → 38 MB
// and MobileNetV2 64 → 62 MB against twins that packed their own. A twin
// packs its weights on its first run, as its step's kernel does, unless
// the pool's kernel has: the first inline run may allocate. MoE layers
// have none: they pack an expert when a token is first routed to it, so
// a twin would allocate in runs long after.
const (
	serialTwinBytes = 16 << 20
	sharedTwinBytes = 64 << 20
)

// serialTwin reports whether the program prepares a serial twin of n's
// step: it tunes, n is no MoE layer, and its weights are within the
// bound for n's kind.
func (pr *Program) serialTwin(n *graph.Node) bool {
	if pr.tuner == nil || n.Op == graph.OpMoE {
		return false
	}
	if ownPacking(n.Op) {
		return pr.Plan.WeightBytes <= serialTwinBytes
	}
	return pr.Plan.WeightBytes <= sharedTwinBytes
}

// ownPacking reports whether kernels of op keep packed weights of their
// own, which a twin would hold again: the int8 products and
// convolutions, ConvTranspose, and custom ops (whose kernels kiln does not
// know).
func ownPacking(op graph.Op) bool {
	switch op {
	case graph.OpConvTranspose, graph.OpMatMulInteger, graph.OpConvInteger, graph.OpDynQuantMatMul,
		graph.OpQDQMatMul, graph.OpQDQConv, graph.OpCustom:
		return true
	}
	return false
}

// kernel is the step's kernel for a run on runner r: its serial twin
// where r runs loops inline and the step has one.
func (s *Step) kernel(r *Runner) ops.Kernel {
	if r.inline && s.Serial != nil {
		return s.Serial
	}
	return s.Kernel
}

// Tuning reports whether the program is still making its first
// measurement of pooled against inline runs (its first 14 runs): a
// benchmark warms up until it is not.
func (pr *Program) Tuning() bool { return pr.tuner != nil && !pr.tuner.tuned }

// Inline reports whether the program runs its loops inline now (its last
// measurement found them faster so).
func (pr *Program) Inline() bool { return pr.tuner != nil && pr.tuner.inline }

// tuneBlock is the runs of each kind a measurement takes: a first one
// that settles the caches, then tuneRounds measured.
const tuneBlock = tuneRounds + 1

// startRun sets up the runner for one Run and reports whether the run
// is measured (then Run reports its time to endRun).
func (t *runTuner) startRun(r *Runner) bool {
	m := t.runs - t.warm()
	if m < 0 || m >= 2*tuneBlock {
		r.inline = t.inline
		return false
	}
	r.inline = m >= tuneBlock
	return m%tuneBlock != 0
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
		if m >= tuneBlock {
			t.inl[m-tuneBlock-1] = d
		} else {
			t.pooled[m-1] = d
		}
	}
	t.runs++
	if t.runs == t.warm()+2*tuneBlock {
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
