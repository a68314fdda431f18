package exec

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// forChunks runs For and records every chunk it hands out, failing the
// test instead of hanging if For does not return.
func forChunks(t *testing.T, r *Runner, n, grain int) (hits []int32, chunks [][2]int) {
	t.Helper()
	hits = make([]int32, n)
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.For(n, grain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
			mu.Lock()
			chunks = append(chunks, [2]int{lo, hi})
			mu.Unlock()
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("For(%d, %d) on %d workers did not return", n, grain, r.pool.Workers())
	}
	return hits, chunks
}

// TestForCovers checks that For visits every index of [0, n) exactly
// once, in min(Workers, ⌈n/grain⌉) chunks whose sizes differ by at most
// one, for many sizes. 3 workers and n = 4 once deadlocked (fewer chunks
// were sent than waited for).
func TestForCovers(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 4, 7, 8, 16} {
		p := NewPool(workers)
		r := p.NewRunner()
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 13, 17, 31, 63, 64, 65, 100, 127, 1000, 4097} {
			for _, grain := range []int{-1, 0, 1, 2, 3, 4, 7, 16, 52, 64, 1000, 5000} {
				hits, chunks := forChunks(t, r, n, grain)
				for i, h := range hits {
					if h != 1 {
						t.Fatalf("workers %d, n %d, grain %d: index %d visited %d times", workers, n, grain, i, h)
					}
				}
				if n == 0 {
					if len(chunks) != 0 {
						t.Errorf("workers %d, n 0: %d chunks", workers, len(chunks))
					}
					continue
				}
				g := max(grain, 1)
				if want := min(workers, (n+g-1)/g); len(chunks) != want {
					t.Errorf("workers %d, n %d, grain %d: %d chunks, want %d", workers, n, grain, len(chunks), want)
				}
				lo, hi := n, 0
				for _, c := range chunks {
					lo, hi = min(lo, c[1]-c[0]), max(hi, c[1]-c[0])
				}
				if lo < 1 || hi-lo > 1 {
					t.Errorf("workers %d, n %d, grain %d: chunk sizes from %d to %d", workers, n, grain, lo, hi)
				}
			}
		}
	}
}

// TestForUsesWorkers checks that a large loop is really split: with two
// workers, two chunks run at the same time (each waits for the other).
// The worker is reached when it first starts, when woken from its block,
// and while it still spins after a loop.
func TestForUsesWorkers(t *testing.T) {
	p := NewPool(2)
	r := p.NewRunner()
	both := func() {
		var arrived sync.WaitGroup
		arrived.Add(2)
		both := make(chan struct{})
		go func() { arrived.Wait(); close(both) }()
		timedOut := atomic.Bool{}
		r.For(2, 1, func(lo, hi int) {
			arrived.Done()
			select {
			case <-both:
			case <-time.After(10 * time.Second):
				timedOut.Store(true)
			}
		})
		if timedOut.Load() {
			t.Fatal("the two chunks of a 2-worker loop did not run concurrently")
		}
	}
	both()
	for range 3 {
		waitParked(t, p)
		both()
	}
	for range 100 {
		both()
	}
}

// TestConcurrentRunners issues loops from several runners on one pool at
// once (as concurrent clones do); run it under -race.
func TestConcurrentRunners(t *testing.T) {
	p := NewPool(4)
	const runners, loops, n = 6, 50, 257
	var wg sync.WaitGroup
	errs := make(chan error, runners)
	for k := range runners {
		wg.Go(func() {
			r := p.NewRunner()
			out := make([]int, n)
			for l := range loops {
				r.For(n, 8, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						out[i] = k*1000 + l + i
					}
				})
				for i, v := range out {
					if v != k*1000+l+i {
						errs <- fmt.Errorf("runner %d loop %d: out[%d] = %d", k, l, i, v)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPoolNoGoroutineGrowth checks that workers start once: after the
// first loop, more loops (and more runners) start no goroutines.
func TestPoolNoGoroutineGrowth(t *testing.T) {
	p := NewPool(4)
	r := p.NewRunner()
	sum := make([]int64, 4)
	body := func(lo, hi int) { atomic.AddInt64(&sum[lo*4/1000], int64(hi-lo)) }
	r.For(1000, 1, body)
	before := runtime.NumGoroutine()
	for range 200 {
		r.For(1000, 1, body)
		p.NewRunner().For(1000, 1, body)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("goroutines grew from %d to %d over 400 loops", before, after)
	}
	var total int64
	for i := range sum {
		total += sum[i]
	}
	if total != 401*1000 {
		t.Errorf("loops covered %d indices, want %d", total, 401*1000)
	}
}

// TestForNoAllocs checks that a parallel loop with a prepared body does
// not allocate (kernels call For on every run).
func TestForNoAllocs(t *testing.T) {
	r := NewPool(4).NewRunner()
	var hits atomic.Int64
	body := func(lo, hi int) { hits.Add(int64(hi - lo)) }
	r.For(64, 1, body)
	if a := testing.AllocsPerRun(50, func() { r.For(64, 1, body) }); a != 0 {
		t.Errorf("For allocates %v times per loop", a)
	}
}

func TestNewPoolDefault(t *testing.T) {
	if w := NewPool(0).Workers(); w != runtime.GOMAXPROCS(0) {
		t.Errorf("NewPool(0) has %d workers, want GOMAXPROCS %d", w, runtime.GOMAXPROCS(0))
	}
	if w := NewPool(-3).Workers(); w != runtime.GOMAXPROCS(0) {
		t.Errorf("NewPool(-3) has %d workers", w)
	}
	if DefaultPool() != DefaultPool() {
		t.Error("DefaultPool is not one pool")
	}
}

// waitParked waits until every worker of p has blocked, failing the test
// if they keep spinning (or running) for 10 s.
func waitParked(t *testing.T, p *Pool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		parked := p.parked
		p.mu.Unlock()
		if parked == p.workers-1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workers parked after 10 s", parked, p.workers-1)
		}
	}
}

// TestForHelps checks that a loop whose workers are all busy elsewhere is
// run by its caller alone rather than waiting for them.
func TestForHelps(t *testing.T) {
	p := NewPool(2)
	started, release := make(chan struct{}), make(chan struct{})
	// The only worker takes chunk 1 of this loop and holds it (chunk 0
	// keeps the caller from taking it first).
	go p.NewRunner().For(2, 1, func(lo, hi int) {
		if lo == 0 {
			<-started
			return
		}
		close(started)
		<-release
	})
	<-started
	defer close(release)
	r := p.NewRunner()
	for _, n := range []int{2, 5, 64} {
		hits, chunks := forChunks(t, r, n, 1)
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n %d: index %d visited %d times", n, i, h)
			}
		}
		if len(chunks) != 2 {
			t.Errorf("n %d: %d chunks, want 2", n, len(chunks))
		}
	}
}
