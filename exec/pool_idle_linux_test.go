package exec

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time, user and system, of the whole process.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPoolIdleCPU checks that spinning is bounded: right after a burst of
// loops, an idle pool of 4 workers parks them all and uses next to no CPU
// over 200 ms (workers spinning on would use up to 400 ms of it).
func TestPoolIdleCPU(t *testing.T) {
	p := NewPool(4)
	r := p.NewRunner()
	sum := make([]int, 1000)
	for range 1000 {
		r.For(len(sum), 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				sum[i]++
			}
		})
	}
	before := processCPU(t)
	time.Sleep(200 * time.Millisecond)
	if used := processCPU(t) - before; used > 20*time.Millisecond {
		t.Errorf("idle pool used %v of CPU in 200 ms", used)
	}
	waitParked(t, p)
	for i, s := range sum {
		if s != 1000 {
			t.Fatalf("sum[%d] = %d, want 1000", i, s)
		}
	}
}
