package exec

import (
	"fmt"
	"time"

	"github.com/kilnml/kiln/graph"
)

// StepTimer is an optional Executable interface for programs that can
// time each of their steps: the CPU Program (wall time around each kernel
// call) and the CUDA backend (events on the stream between launches).
// `kiln bench --steps` uses it.
type StepTimer interface {
	// SetStepTimes makes every later Run add each step's time to d[i];
	// d has one entry per step, nil turns timing off (see
	// Program.SetStepTimes).
	SetStepTimes(d []time.Duration) error
	// StepInfo describes the steps in run order, as d indexes them.
	StepInfo() []StepInfo
}

// StepInfo names a step: the node it computes and its kernel variant.
type StepInfo struct {
	Node    *graph.Node
	Variant string
}

// StepInfo lists the program's steps (see StepTimer).
func (pr *Program) StepInfo() []StepInfo {
	out := make([]StepInfo, len(pr.Steps))
	for i, s := range pr.Steps {
		out[i] = StepInfo{Node: s.Node, Variant: s.Variant}
	}
	return out
}

// SetStepTimes makes every later Run add the wall time of each step it
// executes to d[i] (i indexing pr.Steps), so a caller can see where a
// run's time goes; static steps a run skips add nothing. d must have one
// entry per step; nil turns timing off. The caller owns d: Run only adds
// to it, so zero it to start over. Guarded programs (plan.Options.Guard,
// KILN_DEBUG=guard), whose canary checks would swamp the kernels' times,
// ignore it. Clones do not inherit it. With timing off Run pays one nil
// check.
func (pr *Program) SetStepTimes(d []time.Duration) error {
	if pr.closed {
		return errClosed
	}
	if d != nil && len(d) != len(pr.Steps) {
		return fmt.Errorf("exec: %d step times for %d steps", len(d), len(pr.Steps))
	}
	pr.stepTimes = d
	return nil
}

// runTimed is Run's step loop with each kernel call timed into
// pr.stepTimes; it is a loop of its own so that untimed runs pay nothing
// for it. v and fresh are staticFresh's.
func (pr *Program) runTimed(v uint64, fresh bool) error {
	d := pr.stepTimes
	if pr.tuner != nil { // as the untimed runs go now
		pr.runner.inline = pr.tuner.inline
		defer func() { pr.runner.inline = false }()
	}
	for i := range pr.Steps {
		s := &pr.Steps[i]
		if s.Static && fresh {
			continue
		}
		t := time.Now()
		err := s.kernel(pr.runner)(s.Ins, s.Out)
		d[i] += time.Since(t)
		if err != nil {
			return fmt.Errorf("exec: step %d %s: %w", i, s.Node, err)
		}
	}
	pr.staticValid, pr.staticVersion = true, v
	return nil
}
