package exec

import (
	"runtime"
	"sync/atomic"
)

// Runner issues parallel loops on a pool, one loop at a time. Each
// program owns one, so concurrent programs share workers without sharing
// completion state.
type Runner struct {
	pool *Pool
	b    batch
	// inline makes For run each loop whole on the caller: the program
	// sets it for runs it measures so, or measured faster so (tune.go).
	inline bool
}

// batch is one loop posted to the pool: chunk c is
// [c·n/chunks, (c+1)·n/chunks). Its fields are written by the caller
// before post and read by workers under the pool's lock.
type batch struct {
	body      func(lo, hi int)
	n, chunks int
	next      atomic.Int32  // next chunk to claim
	state     atomic.Int64  // chunks not finished << 1 | caller asleep
	queued    atomic.Bool   // on the pool's queue
	done      chan struct{} // wakes the caller, if asleep, after the last chunk
}

func (b *batch) bounds(c int) (lo, hi int) { return c * b.n / b.chunks, (c + 1) * b.n / b.chunks }

// finish counts a worker's chunk done. The worker that finishes the last
// one while the caller sleeps wakes it, then yields its P: the caller was
// queued to run next on it, and would otherwise wait while this worker
// spins.
func (b *batch) finish() {
	if b.state.Add(-2) == 1 {
		b.done <- struct{}{}
		runtime.Gosched()
	}
}

// NewRunner makes a runner on the pool.
func (p *Pool) NewRunner() *Runner { return &Runner{pool: p, b: batch{done: make(chan struct{}, 1)}} }

// For runs body over [0, n) split into min(Workers, ⌈n/grain⌉) chunks
// whose sizes differ by at most one, so a chunk falls short of grain only
// by rounding. The caller runs the first chunk, then any no worker has
// claimed yet, so a loop never waits on a worker that is busy elsewhere
// or descheduled.
func (r *Runner) For(n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := min(r.pool.workers, (n+grain-1)/grain)
	if chunks <= 1 || r.inline {
		body(0, n)
		return
	}
	p, b := r.pool, &r.b
	p.start.Do(func() {
		for range p.workers - 1 {
			go p.work()
		}
	})
	b.body, b.n, b.chunks = body, n, chunks
	b.next.Store(1)
	b.state.Store(int64(chunks) << 1)
	m := p.counters.Load() // nil unless the pool measures its loops
	t0 := m.now()
	p.post(b)
	lo, hi := b.bounds(0)
	var busy, waited, ran int64
	for {
		t := m.now()
		body(lo, hi)
		busy += m.now() - t
		ran++
		if b.state.Add(-2) == 0 {
			break
		}
		c := int(b.next.Add(1)) - 1
		if c >= chunks {
			t = m.now()
			b.wait()
			waited = m.now() - t
			break
		}
		lo, hi = b.bounds(c)
	}
	m.addLoop(m.now()-t0, busy, waited, ran)
	p.withdraw(b)
	b.body = nil // keep no closure alive between loops
}

// wait returns once workers have finished every chunk: it polls for up to
// spinWait, as the rest are likely just ending, then sleeps until the last
// finisher wakes it.
func (b *batch) wait() {
	if runtime.GOMAXPROCS(0) > 1 && spin(func() bool { return b.state.Load() == 0 }, spinWait) {
		return
	}
	for {
		s := b.state.Load()
		if s == 0 {
			return
		}
		if b.state.CompareAndSwap(s, s|1) {
			<-b.done
			return
		}
	}
}
