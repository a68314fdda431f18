package kiln

import (
	"errors"
	"sync/atomic"
)

// ErrConcurrentUse is returned by a CompiledGraph's run, set and handle
// methods when another goroutine is inside one of them on the same
// graph: a CompiledGraph serves one goroutine at a time (Clone gives each
// goroutine its own). Clones share one copy of the weights, so SetParam
// on any of them is refused with it while any of them runs, and a run
// while one of them sets a param. The check is two atomic operations per
// call; it never blocks.
var ErrConcurrentUse = errors.New("kiln: CompiledGraph used by two goroutines at once (Clone gives each goroutine its own)")

// use is what a public method does: a run reads the shared weights, a
// write replaces them, anything else touches only this graph.
type use int

const (
	useGraph use = iota
	useRun
	useWrite
)

// weightUse is shared by clones: the number of runs reading the weights,
// or -1 while a param is being written.
type weightUse struct{ state atomic.Int64 }

// acquire takes cg for u, or returns ErrConcurrentUse.
func (cg *CompiledGraph) acquire(u use) error {
	if !cg.busy.CompareAndSwap(false, true) {
		return ErrConcurrentUse
	}
	w := &cg.weights.state
	switch u {
	case useRun:
		for {
			s := w.Load()
			if s < 0 {
				cg.busy.Store(false)
				return ErrConcurrentUse
			}
			if w.CompareAndSwap(s, s+1) {
				return nil
			}
		}
	case useWrite:
		if !w.CompareAndSwap(0, -1) {
			cg.busy.Store(false)
			return ErrConcurrentUse
		}
	}
	return nil
}

// release gives back what acquire(u) took.
func (cg *CompiledGraph) release(u use) {
	switch u {
	case useRun:
		cg.weights.state.Add(-1)
	case useWrite:
		cg.weights.state.Store(0)
	}
	cg.busy.Store(false)
}
