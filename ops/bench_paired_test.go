package ops

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// pairedMedians runs op and ref one after the other once per b.Loop
// iteration (alternating which goes first, so neither always finds the
// other's data in cache or the clock boosted), times each run, and
// returns the median seconds of each. The host is shared: a burst of
// someone else's load lands on a few pairs and leaves both medians, and
// so their ratio, alone, where means over separate loops would not.
// With serial (one worker, on the calling goroutine) the time is the
// thread's CPU time where the OS gives it (threadCPU: Linux), so time
// the thread spends descheduled is not counted either; else wall time.
func pairedMedians(b *testing.B, serial bool, op, ref func()) (opSec, refSec float64) {
	op()
	ref() // warm: first touch of outputs, packed operands, pool goroutines
	clock := func() float64 { return float64(time.Now().UnixNano()) * 1e-9 }
	if _, ok := threadCPU(); ok && serial {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		clock = func() float64 { t, _ := threadCPU(); return t }
	}
	var to, tr []float64
	for i := 0; b.Loop(); i++ {
		first, second := op, ref
		if i%2 == 1 {
			first, second = ref, op
		}
		t0 := clock()
		first()
		t1 := clock()
		second()
		t2 := clock()
		d1, d2 := t1-t0, t2-t1
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		to, tr = append(to, d1), append(tr, d2)
	}
	return median(to), median(tr)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
