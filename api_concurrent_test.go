package kiln_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// concurrentGraph is y = relu(x·w) with x [8, 64], w [64, 64].
func concurrentGraph(t *testing.T) (*kiln.CompiledGraph, []float32, []float32) {
	t.Helper()
	g := graph.New()
	x := g.Input("x", tensor.F32, 8, 64)
	g.Output(g.Relu(g.MatMul(x, g.Param("w", tensor.F32, 64, 64))))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	w, xs := make([]float32, 64*64), make([]float32, 8*64)
	for i := range w {
		w[i] = float32(i%7) - 3
	}
	for i := range xs {
		xs[i] = float32(i%5) - 2
	}
	if err := cg.SetParam("w", w); err != nil {
		t.Fatal(err)
	}
	return cg, w, xs
}

// TestConcurrentUseDetected: four goroutines running one CompiledGraph
// at once (which gave wrong results and "slice bounds out of range"
// panics) get ErrConcurrentUse for the calls that overlap, and every call
// that runs gives the right result.
func TestConcurrentUseDetected(t *testing.T) {
	cg, _, xs := concurrentGraph(t)
	defer cg.Close()
	want, err := cg.Run(kiln.In("x", xs))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused, ran := 0, 0
	for range 4 {
		wg.Go(func() {
			for range 500 {
				got, err := cg.Run(kiln.In("x", xs))
				mu.Lock()
				switch {
				case errors.Is(err, kiln.ErrConcurrentUse):
					refused++
				case err != nil:
					t.Errorf("run: %v", err)
				case !slices.Equal(got[0], want[0]):
					t.Errorf("a run gave a wrong result")
				default:
					ran++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d runs, %d refused", ran, refused)
	if ran == 0 {
		t.Error("no run succeeded")
	}
}

// TestSetParamWhileCloneRuns: clones share the weights, so SetParam on
// one while another runs is refused (it was a data race, found by -race),
// and a run while a param is written is refused; what does run sees
// either the old or the new weights whole.
func TestSetParamWhileCloneRuns(t *testing.T) {
	cg, w, xs := concurrentGraph(t)
	defer cg.Close()
	c, err := cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	old, err := c.Run(kiln.In("x", xs))
	if err != nil {
		t.Fatal(err)
	}
	w2 := make([]float32, len(w))
	for i := range w2 {
		w2[i] = -w[i]
	}
	if err := cg.SetParam("w", w2); err != nil {
		t.Fatal(err)
	}
	neu, err := c.Run(kiln.In("x", xs))
	if err != nil {
		t.Fatal(err)
	}
	if err := cg.SetParam("w", w); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 300 {
			got, err := c.Run(kiln.In("x", xs))
			if err != nil {
				if !errors.Is(err, kiln.ErrConcurrentUse) {
					t.Errorf("clone run: %v", err)
				}
				continue
			}
			if !slices.Equal(got[0], old[0]) && !slices.Equal(got[0], neu[0]) {
				t.Errorf("a clone run saw half-written weights")
			}
		}
	})
	refused := 0
	for i := range 300 {
		ws := w
		if i%2 == 1 {
			ws = w2
		}
		if err := cg.SetParam("w", ws); errors.Is(err, kiln.ErrConcurrentUse) {
			refused++
		} else if err != nil {
			t.Errorf("SetParam: %v", err)
		}
	}
	wg.Wait()
	t.Logf("%d of 300 SetParam calls refused while the clone ran", refused)
}

// TestOutputOutOfRange: Output gives nil for a bad index or a closed
// graph (documented); OutputTensor says why with an error.
func TestOutputOutOfRange(t *testing.T) {
	cg, _, xs := concurrentGraph(t)
	if _, err := cg.Run(kiln.In("x", xs)); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{-1, 1, 7} {
		if cg.Output(i) != nil {
			t.Errorf("Output(%d) is not nil", i)
		}
		if _, err := cg.OutputTensor(i); err == nil {
			t.Errorf("OutputTensor(%d): no error", i)
		}
	}
	if cg.Output(0) == nil {
		t.Error("Output(0) is nil")
	}
	cg.Close()
	if cg.Output(0) != nil {
		t.Error("Output(0) after Close is not nil")
	}
	if _, err := cg.OutputTensor(0); err == nil {
		t.Error("OutputTensor(0) after Close: no error")
	}
}
