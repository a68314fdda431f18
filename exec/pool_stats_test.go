package exec

import (
	"sync"
	"testing"
	"time"
)

// TestMeasureLoops: a two-worker loop whose second chunk (the worker's)
// sleeps while the caller's returns at once is counted as one loop of
// two chunks, the sleep in the worker's busy time and in the caller's
// wait at the join; loops before the start, after the stop and of one
// chunk are not counted.
func TestMeasureLoops(t *testing.T) {
	const nap = 20 * time.Millisecond
	p := NewPool(2)
	r := p.NewRunner()
	if s := p.MeasureLoops(false); s != (LoopStats{Workers: 2}) {
		t.Fatalf("before any measuring: %+v", s)
	}
	loop := func() {
		var arrived sync.WaitGroup
		arrived.Add(2)
		r.For(2, 1, func(lo, hi int) {
			arrived.Done()
			arrived.Wait() // both chunks run at once: one on the caller, one on the worker
			if lo == 1 {
				time.Sleep(nap)
			}
		})
	}
	loop() // not measured
	p.MeasureLoops(true)
	loop()
	r.For(1, 1, func(lo, hi int) {}) // one chunk: runs whole on the caller, not a parallel loop
	s := p.MeasureLoops(false)
	if s.Workers != 2 || s.Loops != 1 || s.CallerChunks != 1 || s.WorkerChunks != 1 {
		t.Fatalf("one two-chunk loop: %+v", s)
	}
	if s.WorkerBusy < nap || s.CallerBusy+s.JoinWait < nap || s.Wall < nap {
		t.Errorf("the worker's chunk slept %v: %+v", nap, s)
	}
	if s.CallerBusy+s.JoinWait > s.Wall {
		t.Errorf("the caller's body and wait outlast the loop: %+v", s)
	}
	if s.CallerBusy >= s.WorkerBusy {
		t.Errorf("the caller's chunk, which did not sleep, took as long as the worker's: %+v", s)
	}
	loop() // not measured
	p.MeasureLoops(true)
	if s := p.MeasureLoops(false); s != (LoopStats{Workers: 2}) {
		t.Errorf("no loops since the start: %+v", s)
	}
}
