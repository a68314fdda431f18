package cuda

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/kilnml/kiln/exec"
)

var _ exec.StepTimer = (*program)(nil)

// stepClock times a program's steps on the GPU: an event before the first
// step and one after each, so the time between neighbours is a step's
// (launch gaps included, as they are part of what a run costs).
type stepClock struct {
	d      []time.Duration // the caller's, one per step
	events []*Event        // len(steps)+1
}

// SetStepTimes makes every later Run add each step's GPU time to d[i]
// (i indexing the steps in run order, see StepInfo) and wait for the
// stream before returning. d must have one entry per step; nil turns
// timing off. Clones and graph models do not inherit it.
func (pr *program) SetStepTimes(d []time.Duration) error {
	if pr.closed {
		return errClosed
	}
	if d == nil {
		err := pr.clock.destroy()
		pr.clock = nil
		return err
	}
	if len(d) != len(pr.steps) {
		return fmt.Errorf("cuda: %d step times for %d steps", len(d), len(pr.steps))
	}
	if pr.clock == nil {
		c := &stepClock{}
		for range len(pr.steps) + 1 {
			e, err := pr.sh.d.NewEvent()
			if err != nil {
				return errors.Join(err, c.destroy())
			}
			c.events = append(c.events, e)
		}
		pr.clock = c
	}
	pr.clock.d = d
	return nil
}

// StepInfo lists the steps in run order.
func (pr *program) StepInfo() []exec.StepInfo {
	out := make([]exec.StepInfo, len(pr.steps))
	for i, s := range pr.steps {
		out[i] = exec.StepInfo{Node: s.node, Variant: s.variant}
	}
	return out
}

// mark records event i on the program's stream; the caller holds the
// context.
func (pr *program) mark(i int) error {
	l := pr.sh.d.l
	return l.check("cuEventRecord", pr.argv.call(l.cuEventRecord, pr.clock.events[i].h, pr.stream.h))
}

// collect waits for the last event and adds the time between neighbours
// to the caller's durations; the caller holds the context.
func (pr *program) collect() error {
	l, ev := pr.sh.d.l, pr.clock.events
	if err := l.check("cuEventSynchronize", call(l.cuEventSynchronize, ev[len(ev)-1].h)); err != nil {
		return err
	}
	for i := range pr.clock.d {
		var ms float32
		if err := l.check("cuEventElapsedTime", call(l.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), ev[i].h, ev[i+1].h)); err != nil {
			return err
		}
		pr.clock.d[i] += time.Duration(float64(ms) * 1e6)
	}
	return nil
}

func (c *stepClock) destroy() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, e := range c.events {
		errs = append(errs, e.Destroy())
	}
	c.events = nil
	return errors.Join(errs...)
}
