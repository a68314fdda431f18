package exec_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/tensor"
)

// spin is the least wall time a wrapped kernel takes, so that a timed
// step's entry must grow by at least that much whatever the clock's
// resolution.
const spin = 20 * time.Microsecond

// TestStepTimes: with step timing on, every executed step's entry grows
// by at least the time its kernel is known to take, static steps skipped
// by a run add nothing, and nil turns timing off.
func TestStepTimes(t *testing.T) {
	g := staticGraph()
	pr := lowerStatic(t, g)
	calls := make([]int, len(pr.Steps))
	nStatic := 0
	for i := range pr.Steps {
		s := &pr.Steps[i]
		k := s.Kernel
		s.Kernel = func(ins []tensor.Tensor, out tensor.Tensor) error {
			calls[i]++
			for t0 := time.Now(); time.Since(t0) < spin; {
			}
			return k(ins, out)
		}
		s.Serial = nil // inline runs call Kernel too
		if s.Static {
			nStatic++
		}
	}
	if nStatic == 0 || nStatic == len(pr.Steps) {
		t.Fatalf("test setup: %d of %d steps static, want some of each", nStatic, len(pr.Steps))
	}
	for _, name := range []string{"w1", "w2", "x"} {
		n := staticNode(g, name)
		if err := pr.Write(n, make([]byte, len(pr.Values[n.ID].Data))); err != nil {
			t.Fatal(err)
		}
	}
	d := make([]time.Duration, len(pr.Steps))
	if err := pr.SetStepTimes(d); err != nil {
		t.Fatal(err)
	}
	check := func(when string, before []time.Duration, beforeCalls []int) {
		t.Helper()
		for i := range d {
			ran := calls[i] - beforeCalls[i]
			grew := d[i] - before[i]
			if ran == 0 && grew != 0 || ran > 0 && grew < time.Duration(ran)*spin {
				t.Errorf("%s: step %d %s (static %v) ran %d times, its time grew by %v", when, i, pr.Steps[i].Node, pr.Steps[i].Static, ran, grew)
			}
		}
	}
	zero, noCalls := make([]time.Duration, len(d)), make([]int, len(d))
	if err := pr.Run(); err != nil {
		t.Fatal(err)
	}
	check("first run", zero, noCalls)
	for i, c := range calls {
		if c != 1 {
			t.Fatalf("step %d ran %d times on the first run", i, c)
		}
	}
	snap, snapCalls := append([]time.Duration(nil), d...), append([]int(nil), calls...)
	for range 2 {
		if err := pr.Run(); err != nil {
			t.Fatal(err)
		}
	}
	check("two more runs", snap, snapCalls)
	for i := range pr.Steps {
		if !pr.Steps[i].Static && calls[i]-snapCalls[i] != 2 {
			t.Fatalf("step %d ran %d times in two runs", i, calls[i]-snapCalls[i])
		}
	}

	// nil turns timing off: d stays as it was.
	if err := pr.SetStepTimes(nil); err != nil {
		t.Fatal(err)
	}
	snap = append(snap[:0], d...)
	if err := pr.Run(); err != nil {
		t.Fatal(err)
	}
	for i := range d {
		if d[i] != snap[i] {
			t.Errorf("step %d: time moved from %v to %v with timing off", i, snap[i], d[i])
		}
	}
}

func TestStepTimesErrors(t *testing.T) {
	g := affine()
	pr := lower(t, g, exec.Options{})
	for _, n := range []int{0, len(pr.Steps) + 1} {
		err := pr.SetStepTimes(make([]time.Duration, n))
		if err == nil {
			t.Fatalf("%d times for %d steps accepted", n, len(pr.Steps))
		}
		for _, want := range []string{strconv.Itoa(n) + " step times", strconv.Itoa(len(pr.Steps)) + " steps"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	}
	pr.Close()
	if err := pr.SetStepTimes(nil); err == nil {
		t.Error("SetStepTimes on a closed program: no error")
	}
}

// TestStepTimesOffNoAllocs: turning timing on and off again leaves Run
// allocation-free, and timed runs do not allocate either.
func TestStepTimesOffNoAllocs(t *testing.T) {
	g := affine()
	pr := lower(t, g, exec.Options{Pool: exec.NewPool(1)})
	if err := pr.SetStepTimes(make([]time.Duration, len(pr.Steps))); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(20, func() { _ = pr.Run() }); allocs != 0 {
		t.Errorf("timed Run allocates %v times", allocs)
	}
	if err := pr.SetStepTimes(nil); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(20, func() { _ = pr.Run() }); allocs != 0 {
		t.Errorf("Run allocates %v times with timing off", allocs)
	}
}
