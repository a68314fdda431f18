package main

import (
	"cmp"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/tensor"
)

// stepCost is one step of the program in the --steps table and JSON.
type stepCost struct {
	Rank     int     `json:"rank"`
	Step     int     `json:"step"` // index in the program's schedule
	Op       string  `json:"op"`
	Node     string  `json:"node"`
	DType    string  `json:"dtype"`
	Shape    []int   `json:"shape"`
	Variant  string  `json:"variant"`
	MeanMs   float64 `json:"mean_ms"`   // per run
	SharePct float64 `json:"share_pct"` // of the summed step time
	CumPct   float64 `json:"cum_pct"`   // of this step and the costlier ones
}

// stepProfile is what --steps measured: the costliest steps and the sum
// over all steps, per run, and on several CPU workers their loops.
type stepProfile struct {
	top     []stepCost
	steps   int
	totalMs float64
	loops   *loopProfile
}

// loopProfile is a pool's parallel loops over the --steps runs, per run
// (exec.LoopStats): times in ms.
type loopProfile struct {
	Workers      int     `json:"workers"`
	Loops        float64 `json:"loops"`
	WallMs       float64 `json:"wall_ms"`        // from posting each loop to its return
	CallerBusyMs float64 `json:"caller_busy_ms"` // the calling thread's time in loop bodies
	WorkerBusyMs float64 `json:"worker_busy_ms"` // each other worker's, on average
	JoinWaitMs   float64 `json:"join_wait_ms"`   // the caller's wait for the last chunks
}

// newLoopProfile is s per run over runs runs.
func newLoopProfile(s exec.LoopStats, runs int) *loopProfile {
	per := func(d time.Duration) float64 { return ms(d) / float64(runs) }
	return &loopProfile{
		Workers: s.Workers, Loops: float64(s.Loops) / float64(runs), WallMs: per(s.Wall),
		CallerBusyMs: per(s.CallerBusy), WorkerBusyMs: per(s.WorkerBusy) / float64(s.Workers-1), JoinWaitMs: per(s.JoinWait),
	}
}

// timeSteps runs the model runs more times with per-step timing on and
// ranks its steps by time, keeping the n costliest (all when n exceeds
// the step count). Step time leaves out what a run does around the
// kernels (copying inputs in and outputs out), which the run latency
// includes; on a shared machine the two passes also see different load.
// With pool (several workers) it measures the pool's loops over those
// runs too.
func timeSteps(cg *kiln.CompiledGraph, in []kiln.TypedInput, runs, n int, pool *exec.Pool) (stepProfile, error) {
	x, err := cg.Executable()
	if err != nil {
		return stepProfile{}, err
	}
	st, ok := x.(exec.StepTimer)
	if !ok {
		return stepProfile{}, fmt.Errorf("--steps: the compiled model runs as a %T, which cannot time its steps", x)
	}
	info := st.StepInfo()
	d := make([]time.Duration, len(info))
	if err := st.SetStepTimes(d); err != nil {
		return stepProfile{}, err
	}
	defer st.SetStepTimes(nil)
	measure := pool != nil && pool.Workers() > 1
	if measure {
		pool.MeasureLoops(true)
		defer pool.MeasureLoops(false) // on an error return
	}
	for range runs {
		if _, err := cg.RunTyped(in...); err != nil {
			return stepProfile{}, err
		}
	}
	var total time.Duration
	order := make([]int, len(d))
	for i, t := range d {
		order[i] = i
		total += t
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(d[b], d[a]) })
	p := stepProfile{steps: len(d), totalMs: ms(total) / float64(runs)}
	if measure {
		p.loops = newLoopProfile(pool.MeasureLoops(false), runs)
	}
	var cum time.Duration
	for rank, i := range order[:min(n, len(order))] {
		s := info[i]
		cum += d[i]
		p.top = append(p.top, stepCost{
			Rank: rank + 1, Step: i, Op: s.Node.Op.String(), Node: s.Node.Name,
			DType: s.Node.DType.String(), Shape: s.Node.Shape, Variant: s.Variant,
			MeanMs: ms(d[i]) / float64(runs), SharePct: pct(d[i], total), CumPct: pct(cum, total),
		})
	}
	return p, nil
}

// pct is part as a percentage of whole, 0 when whole is.
func pct(part, whole time.Duration) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// print writes the --steps table and how the steps' total compares with
// the median run latency.
func (p stepProfile) print(runs int, medianMs float64) {
	fmt.Fprintf(stdout, "costliest %d of %d steps, mean over %d more runs with step timing:\n", len(p.top), p.steps, runs)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%4s  %9s  %6s  %6s\top\tnode\toutput\tvariant\n", "#", "ms/run", "share", "cum")
	for _, s := range p.top {
		fmt.Fprintf(tw, "%4d  %9.4f  %5.1f%%  %5.1f%%\t%s\t%s\t%s%v\t%s\n",
			s.Rank, s.MeanMs, s.SharePct, s.CumPct, s.Op, s.Node, s.DType, tensor.Shape(s.Shape), s.Variant)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "steps total %.4g ms per run, %.1f%% of the median run latency %.4g ms\n",
		p.totalMs, 100*p.totalMs/medianMs, medianMs)
	if l := p.loops; l != nil {
		if l.Loops == 0 {
			fmt.Fprintf(stdout, "pool of %d workers: no parallel loops (each ran inline or in one chunk)\n", l.Workers)
			return
		}
		fmt.Fprintf(stdout, "pool of %d workers: %.4g parallel loops per run, %.4g ms in them; in loop bodies the calling thread %.4g ms, each other worker %.4g ms (mean); the caller waited %.4g ms at the loops' ends\n",
			l.Workers, l.Loops, l.WallMs, l.CallerBusyMs, l.WorkerBusyMs, l.JoinWaitMs)
	}
}
