package asm

import "sync/atomic"

// workClaims hands items [0, n) out to a loop's workers (the chunks of a
// Chunks): each first takes its own contiguous share, front to back, and
// a worker whose share is done takes items from the back of the share
// with most left. Shares make one step's split match the next's, so a
// worker mostly reads what it wrote itself, from its own L2: with a
// shared counter, which scattered tiles over the cores at random,
// ResNet-18 at two threads took 13.2 ms against 12.1 (Zen 5, AVX-512,
// interleaved builds). Taking from the back keeps what a shared counter
// gave: no worker waits long on one that started late or was
// descheduled. Items are fewer than 2^32.
type workClaims struct {
	share []claimShare
}

// claimShare is worker w's items left, lo<<32 | hi, alone in its cache
// lines, so that one worker's claims do not move the line another claims
// from between cores (a line takes about 250 ns each way on the 2-vCPU
// VM). 128 bytes: the adjacent-line prefetcher fetches lines in pairs.
// (ResNet-18 and MobileNetV2 measured alike with shares side by side:
// their steps claim tens to hundreds of items.)
type claimShare struct {
	atomic.Uint64
	_ [120]byte
}

// workerPad ends a struct that each worker of a loop has one of, side
// by side in a slice, and writes during the loop (the tile in progress'
// epilogue, a group's row offsets, sums): 128 bytes between one
// worker's fields and the next's keep them out of each other's cache
// lines and adjacent-line pairs. A conv tile's clamp, written next to the
// next worker's panel slices, made each of that worker's panels start
// with a miss on the line the other core had just taken (about 250 ns
// each way on the 2-vCPU VM).
type workerPad [128]byte

// newWorkClaims makes claims for workers workers.
func newWorkClaims(workers int) workClaims {
	return workClaims{share: make([]claimShare, max(workers, 1))}
}

// reset deals n items out in even contiguous shares. It runs before the
// workers start.
func (w *workClaims) reset(n int) { w.resetFor(n, len(w.share)) }

// resetFor deals n items out in even contiguous shares to the first k
// workers (1 <= k <= the claims' workers), none to the rest.
func (w *workClaims) resetFor(n, k int) {
	for i := range w.share {
		lo, hi := min(i, k)*n/k, min(i+1, k)*n/k
		w.share[i].Store(uint64(lo)<<32 | uint64(hi))
	}
}

// next returns the next item for worker, and false once every share is
// empty.
func (w *workClaims) next(worker int) (int, bool) {
	own := &w.share[worker]
	for {
		s := own.Load()
		lo, hi := s>>32, s&0xffffffff
		if lo >= hi {
			break
		}
		if own.CompareAndSwap(s, (lo+1)<<32|hi) {
			return int(lo), true
		}
	}
	for {
		// Steal from the share with most left; retry while any has some.
		best, most := -1, uint64(0)
		for i := range w.share {
			s := w.share[i].Load()
			if lo, hi := s>>32, s&0xffffffff; hi > lo && hi-lo > most {
				best, most = i, hi-lo
			}
		}
		if best < 0 {
			return 0, false
		}
		v := &w.share[best]
		s := v.Load()
		lo, hi := s>>32, s&0xffffffff
		if lo < hi && v.CompareAndSwap(s, lo<<32|(hi-1)) {
			return int(hi - 1), true
		}
	}
}
