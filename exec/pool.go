package exec

import (
	"runtime"
	"sync"
)

// Pool is a set of persistent worker goroutines. Work is handed over on a
// channel, so no goroutine is started per op and a parallel loop does not
// allocate.
type Pool struct {
	workers int
	jobs    chan job
	start   sync.Once
}

type job struct {
	body   func(lo, hi int)
	lo, hi int
	done   *sync.WaitGroup
}

// NewPool makes a pool of n workers (n < 1 means runtime.GOMAXPROCS).
// Workers start on first use and live for the rest of the process.
func NewPool(n int) *Pool {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Pool{workers: n, jobs: make(chan job, 4*n)}
}

// Workers is the number of goroutines that may run a loop, the caller's
// included.
func (p *Pool) Workers() int { return p.workers }

func (p *Pool) run() {
	for j := range p.jobs {
		j.body(j.lo, j.hi)
		j.done.Done()
	}
}

// Runner issues parallel loops on a pool, one loop at a time. Each
// program owns one, so concurrent programs share workers without sharing
// completion state.
type Runner struct {
	pool *Pool
	wg   sync.WaitGroup
}

// NewRunner makes a runner on the pool.
func (p *Pool) NewRunner() *Runner { return &Runner{pool: p} }

// For runs body over [0, n) split into min(Workers, ⌈n/grain⌉) chunks
// whose sizes differ by at most one, so a chunk falls short of grain only
// by rounding; the caller runs the first chunk itself.
func (r *Runner) For(n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := min(r.pool.workers, (n+grain-1)/grain)
	if chunks <= 1 {
		body(0, n)
		return
	}
	r.pool.start.Do(func() {
		for range r.pool.workers - 1 {
			go r.pool.run()
		}
	})
	// Chunk c is [c·n/chunks, (c+1)·n/chunks): exactly chunks pieces, so
	// the wait count always matches the jobs sent.
	r.wg.Add(chunks - 1)
	for c := 1; c < chunks; c++ {
		r.pool.jobs <- job{body: body, lo: c * n / chunks, hi: (c + 1) * n / chunks, done: &r.wg}
	}
	body(0, n/chunks)
	r.wg.Wait()
}
