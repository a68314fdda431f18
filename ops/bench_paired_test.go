package ops

import (
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
func pairedMedians(b *testing.B, op, ref func()) (opSec, refSec float64) {
	op()
	ref() // warm: first touch of outputs, packed operands, pool goroutines
	var to, tr []float64
	for i := 0; b.Loop(); i++ {
		first, second := op, ref
		if i%2 == 1 {
			first, second = ref, op
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		t2 := time.Now()
		d1, d2 := t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
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
