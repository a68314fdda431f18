package exec

import (
	"sync/atomic"
	"time"
)

// LoopStats is where a pool's parallel loops spent their time while it
// measured them (Pool.MeasureLoops), summed over the loops: what tells a
// program that scales poorly on several workers whether its workers wait
// on each other at the loops' ends (JoinWait: the last chunks run on a
// slow or late worker, or the chunks are uneven) or each spends longer on
// its share than one worker spends on the whole over as many shares
// (CallerBusy and WorkerBusy against a one-worker run: memory, caches or
// cores shared with other work). Loops that run whole on the caller (a
// single chunk, or a runner set to run inline) are not counted.
type LoopStats struct {
	Workers int // the pool's workers, the caller's included
	Loops   int64
	// CallerChunks and WorkerChunks are the chunks the calling threads
	// and the pool's other workers ran.
	CallerChunks, WorkerChunks int64
	// Wall is the loops' time from posting to return; CallerBusy and
	// WorkerBusy the time in their bodies on the calling threads and on
	// the other workers (all of them together); JoinWait the time the
	// callers waited, their chunks done, for the other workers' last.
	Wall, CallerBusy, WorkerBusy, JoinWait time.Duration
}

// loopCounters accumulates LoopStats; the pool holds one while it
// measures.
type loopCounters struct {
	start                      time.Time
	loops, callerChunks        atomic.Int64
	workerChunks               atomic.Int64
	wall, callerBusy, joinWait atomic.Int64
	workerBusy                 atomic.Int64
}

// now is the time since the counters started, in ns; 0 on nil counters
// (a pool that does not measure), which count nothing.
func (c *loopCounters) now() int64 {
	if c == nil {
		return 0
	}
	return int64(time.Since(c.start))
}

// addLoop counts a loop on its caller: its wall time, the caller's time in
// the body and waiting at the join, and the chunks it ran.
func (c *loopCounters) addLoop(wall, busy, waited, chunks int64) {
	if c == nil {
		return
	}
	c.loops.Add(1)
	c.callerChunks.Add(chunks)
	c.wall.Add(wall)
	c.callerBusy.Add(busy)
	c.joinWait.Add(waited)
}

// MeasureLoops starts measuring the pool's parallel loops (on) from zero,
// or stops (off), returning what was measured since the last start. A
// loop or chunk already under way when measuring starts or stops may be
// counted in part. While off, a loop and each chunk a worker runs pay one
// atomic load for it.
func (p *Pool) MeasureLoops(on bool) LoopStats {
	var next *loopCounters
	if on {
		next = &loopCounters{start: time.Now()}
	}
	c := p.counters.Swap(next)
	s := LoopStats{Workers: p.workers}
	if c == nil {
		return s
	}
	s.Loops = c.loops.Load()
	s.CallerChunks, s.WorkerChunks = c.callerChunks.Load(), c.workerChunks.Load()
	s.Wall, s.CallerBusy = time.Duration(c.wall.Load()), time.Duration(c.callerBusy.Load())
	s.WorkerBusy, s.JoinWait = time.Duration(c.workerBusy.Load()), time.Duration(c.joinWait.Load())
	return s
}

// runChunk runs a worker's chunk, timing it while the pool measures.
func (p *Pool) runChunk(body func(lo, hi int), lo, hi int) {
	c := p.counters.Load()
	t := c.now()
	body(lo, hi)
	if c != nil {
		c.workerBusy.Add(c.now() - t)
		c.workerChunks.Add(1)
	}
}
