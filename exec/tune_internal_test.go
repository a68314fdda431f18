package exec

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// TestRunTuner drives the tuner through its runs with made-up times: the
// warm-up runs go pooled, then a block of pooled runs and one of inline
// runs, the first of each not measured, the decision following the
// medians (an outlier does not decide, inline must be 10% faster), and
// after retuneRuns runs it measures again and may change its mind.
func TestRunTuner(t *testing.T) {
	r := NewPool(2).NewRunner()
	tu := &runTuner{}
	// run drives one Run whose pooled and inline runs take the given times
	// (µs; the i-th measured run of each kind takes its i-th entry).
	run := func(runs int, pooled, inline []int, wantMeasured int) {
		t.Helper()
		var np, ni, measured int
		var kinds []bool // inline, run by run
		for i := range runs {
			m := tu.startRun(r)
			kinds = append(kinds, r.inline)
			d := 7 * time.Millisecond // an unmeasured run's time must not count
			if m {
				measured++
				if r.inline {
					d = time.Duration(inline[ni]) * time.Microsecond
					ni++
				} else {
					d = time.Duration(pooled[np]) * time.Microsecond
					np++
				}
			} else if i < runs-2*tuneBlock && r.inline != tu.inline { // before the blocks
				t.Fatalf("an unmeasured run goes inline=%v, the decision is %v", r.inline, tu.inline)
			}
			tu.endRun(d, m)
		}
		if measured != wantMeasured || np != ni {
			t.Fatalf("%d runs measured (%d pooled, %d inline), want %d in two blocks", measured, np, ni, wantMeasured)
		}
		blocks := kinds[len(kinds)-2*tuneBlock:]
		for i, inl := range blocks {
			if inl != (i >= tuneBlock) {
				t.Fatalf("measuring runs went inline %v, want a block pooled then one inline", blocks)
			}
		}
	}
	run(tuneWarmup+2*tuneBlock, []int{100, 101, 99, 500, 100}, []int{60, 61, 59, 60, 10}, 2*tuneRounds)
	if !tu.tuned || !tu.inline {
		t.Fatalf("tuned %v inline %v, want inline after inline runs 40%% faster", tu.tuned, tu.inline)
	}
	for range retuneRuns { // runs until the next measurement
		if tu.startRun(r) || !r.inline {
			t.Fatal("a run between measurements is measured or not inline")
		}
		tu.endRun(time.Millisecond, false)
	}
	run(2*tuneBlock, []int{100, 100, 100, 100, 100}, []int{95, 95, 95, 95, 95}, 2*tuneRounds)
	if tu.inline {
		t.Fatal("inline kept where it measured only 5% faster")
	}
}

// TestRunnerInline: an inline runner runs a loop whole, once, on the
// caller; a pooled one splits it.
func TestRunnerInline(t *testing.T) {
	r := NewPool(2).NewRunner()
	var calls [][2]int
	body := func(lo, hi int) { calls = append(calls, [2]int{lo, hi}) }
	r.inline = true
	r.For(10, 1, body)
	if len(calls) != 1 || calls[0] != [2]int{0, 10} {
		t.Errorf("inline For made calls %v, want one over [0, 10)", calls)
	}
	r.inline = false
	var n atomic.Int32
	r.For(10, 1, func(lo, hi int) { n.Add(1) })
	if n.Load() != 2 {
		t.Errorf("pooled For made %d calls, want 2", n.Load())
	}
}

// TestSerialTwinBounds: which steps get a serial twin, by the program's
// weights and the step's kind: every kind up to serialTwinBytes, only the
// kinds whose packing is shared (or that have none) up to
// sharedTwinBytes, none past it, never an MoE layer, none without tuning.
func TestSerialTwinBounds(t *testing.T) {
	for _, c := range []struct {
		weights  int
		tunes    bool
		op       graph.Op
		wantTwin bool
	}{
		{16 << 20, true, graph.OpConv2D, true},
		{16 << 20, true, graph.OpConvTranspose, true},
		{16 << 20, true, graph.OpQDQConv, true},
		{16 << 20, true, graph.OpMoE, false},
		{16 << 20, false, graph.OpConv2D, false},
		{16<<20 + 1, true, graph.OpConv2D, true},
		{16<<20 + 1, true, graph.OpMatMul, true},
		{16<<20 + 1, true, graph.OpAdd, true},
		{16<<20 + 1, true, graph.OpConvTranspose, false},
		{16<<20 + 1, true, graph.OpDynQuantMatMul, false},
		{16<<20 + 1, true, graph.OpCustom, false},
		{64 << 20, true, graph.OpFusedConv2D, true},
		{64<<20 + 1, true, graph.OpFusedConv2D, false},
		{64<<20 + 1, true, graph.OpAdd, false},
	} {
		pr := &Program{Plan: &plan.Plan{WeightBytes: c.weights}}
		if c.tunes {
			pr.tuner = &runTuner{}
		}
		if got := pr.serialTwin(&graph.Node{Op: c.op}); got != c.wantTwin {
			t.Errorf("%d bytes of weights, tuning %v, %v: twin %v, want %v", c.weights, c.tunes, c.op, got, c.wantTwin)
		}
	}
}
