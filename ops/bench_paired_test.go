package ops

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
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

// benchParEnv returns the Env of threads workers the benchmarks run
// parallel kernels on: the runtime's worker pool (exec.Pool, whose
// persistent workers claim a loop's chunks as a model's steps run),
// set by bench_pool_test.go, which as package ops_test may import exec.
// parEnv, a goroutine a chunk started each loop, would start the second
// chunk ~16 µs late (Zen 5) and time that start, which no model pays.
var benchParEnv = parEnv

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// benchAgainstCopy times the fast kernel of a one-input F32 node on
// threads workers against a copy of as many bytes as it reads and
// writes (pairedMedians), for the memory-bound ops' benchmarks: seconds
// per run of each, the bytes, and the env it ran on.
func benchAgainstCopy(b *testing.B, n *graph.Node, threads int) (op, ref float64, moved int, env Env) {
	b.Helper()
	env = Serial
	if threads > 1 {
		env = benchParEnv(threads)
	}
	k, variant, err := PrepareFast(n, env)
	if err != nil || variant == "reference" {
		b.Fatalf("no fast kernel (%v)", err)
	}
	x, y := tensor.New(tensor.F32, n.Inputs[0].Shape...), tensor.New(tensor.F32, n.Shape...)
	for i := range x.F32() {
		x.F32()[i] = float32(i%251) * 0.01
	}
	moved = len(x.Data) + len(y.Data)
	op, ref = pairedMedians(b, threads == 1, func() {
		if err := k([]tensor.Tensor{x}, y); err != nil {
			b.Fatal(err)
		}
	}, copyOf(env, moved))
	return op, ref, moved, env
}
