package exec

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Pool is a set of persistent worker goroutines. A parallel loop is posted
// as a batch whose chunks workers claim from a counter, so no goroutine is
// started per op and a loop does not allocate.
//
// Waking a blocked goroutine costs several microseconds (a futex wake and
// a steal between Ps), as much as a whole one-row product at batch 1. So
// a worker that runs out of work first polls an atomic for spinWait, and
// a loop posted meanwhile reaches it with no wake at all; only then does
// it block, so an idle pool burns no CPU.
type Pool struct {
	workers int
	start   sync.Once

	mu     sync.Mutex
	queue  []*batch      // posted loops that may have unclaimed chunks
	parked int           // workers blocked on wake, less those sent a token
	wake   chan struct{} // one token per parked worker to wake

	queued   atomic.Int32 // len(queue), polled by spinning workers
	spinning atomic.Int32 // workers polling queued

	counters atomic.Pointer[loopCounters] // while MeasureLoops is on
}

// spinWait bounds how long an idle worker, or a caller waiting for its
// loop's last chunks, polls before blocking: it spans the serial
// stretches between two parallel steps, so that the next loop finds its
// workers awake instead of paying a futex wake. BERT-style b1 at 2 threads on this 2-vCPU Zen 5 VM (one
// pool, runs alternating between settings, 300 each): 10 µs parks a
// worker ~20 times a run, 200 µs ~4 times and runs 2-3 % faster, 1 ms
// ~0.4 times and 1-2 % faster again. The price is at most 1 ms of one
// core spinning after a burst of work (ONNX Runtime's pool spins too).
const spinWait = time.Millisecond

// MaxWorkers bounds a pool's workers: far past any core count, and each
// worker costs a goroutine and per-kernel scratch (a GEMM plan sizes
// buffers per worker).
const MaxWorkers = 1024

// NewPool makes a pool of n workers (n < 1 means runtime.GOMAXPROCS; at
// most MaxWorkers). Workers start on first use and live for the rest of
// the process.
func NewPool(n int) *Pool {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	n = min(n, MaxWorkers)
	return &Pool{workers: n, queue: make([]*batch, 0, 4), wake: make(chan struct{}, n)}
}

// Workers is the number of goroutines that may run a loop, the caller's
// included.
func (p *Pool) Workers() int { return p.workers }

// work is a worker's loop: run claimed chunks, spin when none are left,
// block when none come for spinWait.
func (p *Pool) work() {
	for {
		if p.queued.Load() > 0 {
			if b, lo, hi, body := p.claim(); b != nil {
				p.runChunk(body, lo, hi)
				b.finish()
				continue
			}
		}
		if p.poll() {
			continue
		}
		p.mu.Lock()
		if len(p.queue) > 0 {
			p.mu.Unlock()
			continue
		}
		p.parked++
		p.mu.Unlock()
		<-p.wake
	}
}

// poll spins for up to spinWait until a loop is posted. A spinning worker
// holds a P, so at most GOMAXPROCS-1 spin, leaving one for the caller
// that will post the next loop.
func (p *Pool) poll() bool {
	posted := func() bool { return p.queued.Load() > 0 }
	for most := int32(runtime.GOMAXPROCS(0) - 1); ; {
		n := p.spinning.Load()
		if n >= most {
			return posted()
		}
		if p.spinning.CompareAndSwap(n, n+1) {
			break
		}
	}
	defer p.spinning.Add(-1)
	return spin(posted, spinWait)
}

// spin polls ready for up to bound and reports whether it came true.
func spin(ready func() bool, bound time.Duration) bool {
	start := time.Now()
	for i := 1; ; i++ {
		if ready() {
			return true
		}
		// Reading the clock costs tens of polls; do it rarely.
		if i%64 == 0 && time.Since(start) > bound {
			return false
		}
	}
}

// claim takes the next chunk of the oldest posted loop, dropping loops
// whose chunks are all claimed; b is nil when there are none.
func (p *Pool) claim() (b *batch, lo, hi int, body func(lo, hi int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.queue) > 0 {
		b = p.queue[0]
		c := int(b.next.Add(1)) - 1
		ok := c < b.chunks
		if ok {
			lo, hi = b.bounds(c)
			body = b.body
		}
		// Once off the queue, b may be reused by its caller: touch it no
		// more unless a chunk of it is still ours to run.
		if c+1 >= b.chunks {
			p.remove(0)
		}
		if ok {
			return b, lo, hi, body
		}
	}
	return nil, 0, 0, nil
}

// post queues b and wakes as many parked workers as it has chunks for
// them, less those spinning (which will find it themselves).
func (p *Pool) post(b *batch) {
	p.mu.Lock()
	b.queued.Store(true)
	p.queue = append(p.queue, b)
	p.queued.Store(int32(len(p.queue)))
	n := min(p.parked, b.chunks-1-int(p.spinning.Load()))
	p.parked -= max(n, 0)
	p.mu.Unlock()
	for range n {
		p.wake <- struct{}{}
	}
}

// withdraw takes b off the queue if it is still there (its caller ran the
// chunks no worker claimed).
func (p *Pool) withdraw(b *batch) {
	if !b.queued.Load() {
		return
	}
	p.mu.Lock()
	for i, q := range p.queue {
		if q == b {
			p.remove(i)
			break
		}
	}
	p.mu.Unlock()
}

// remove drops queue entry i; p.mu is held.
func (p *Pool) remove(i int) {
	p.queue[i].queued.Store(false)
	n := copy(p.queue[i:], p.queue[i+1:])
	p.queue[i+n] = nil
	p.queue = p.queue[:i+n]
	p.queued.Store(int32(len(p.queue)))
}
