package asm

import (
	"sync"
	"testing"
)

// TestWorkClaims: every item is handed out exactly once, whatever the
// workers' pace, and a worker alone takes its own share front to back
// before anyone else's from the back.
func TestWorkClaims(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 2}, {1, 2}, {7, 2}, {100, 3}, {5, 8}, {1000, 4}} {
		w := newWorkClaims(tc.workers)
		w.reset(tc.n)
		for i, c := range claimAll(w, tc.n, tc.workers) {
			if c != 1 {
				t.Fatalf("n=%d workers=%d: item %d handed out %d times", tc.n, tc.workers, i, c)
			}
		}
	}
	// Dealt to the first k of more workers (a product shared by fewer
	// workers than its plan has): only those run, and take every item.
	for _, tc := range []struct{ n, k, workers int }{{10, 1, 4}, {9, 2, 4}, {100, 3, 8}} {
		w := newWorkClaims(tc.workers)
		w.resetFor(tc.n, tc.k)
		for i, c := range claimAll(w, tc.n, tc.k) {
			if c != 1 {
				t.Fatalf("n=%d to %d of %d workers: item %d handed out %d times", tc.n, tc.k, tc.workers, i, c)
			}
		}
	}
	w := newWorkClaims(2)
	w.reset(6) // shares [0,3) and [3,6)
	var order []int
	for {
		i, ok := w.next(1)
		if !ok {
			break
		}
		order = append(order, i)
	}
	want := []int{3, 4, 5, 2, 1, 0}
	for i := range want {
		if i >= len(order) || order[i] != want[i] {
			t.Fatalf("one worker took %v, want %v (its share, then the other's from the back)", order, want)
		}
	}
}

// claimAll runs workers goroutines (the first claims' workers) taking
// items until none is left, and returns how often each of n items was
// handed out.
func claimAll(w workClaims, n, workers int) []int {
	got := make([]int, n)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() {
			for {
				i, ok := w.next(k)
				if !ok {
					return
				}
				got[i]++ // each index written by one worker only when claims are exclusive
			}
		})
	}
	wg.Wait()
	return got
}
