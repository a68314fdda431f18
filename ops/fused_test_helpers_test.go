package ops

import (
	"slices"
	"sync"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// parEnv is an Env whose For really runs chunks on separate goroutines,
// so the fast kernels' splitting is exercised as the executor would.
func parEnv(threads int) Env {
	return Env{Threads: threads, For: func(n, grain int, body func(lo, hi int)) {
		chunks := min(threads, (n+max(grain, 1)-1)/max(grain, 1))
		if chunks <= 1 {
			if n > 0 {
				body(0, n)
			}
			return
		}
		var wg sync.WaitGroup
		for c := range chunks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body(c*n/chunks, (c+1)*n/chunks)
			}()
		}
		wg.Wait()
	}}
}

// fastRun prepares n's fast kernel (failing if none takes it, or if it
// is the reference), runs it on ins into a NaN-poisoned output and checks
// the inputs are unchanged.
func fastRun(t testing.TB, n *graph.Node, env Env, ins ...tensor.Tensor) ([]float64, string) {
	t.Helper()
	k, variant, err := PrepareFast(n, env)
	if err != nil {
		t.Fatalf("prepare fast %v: %v", n, err)
	}
	if variant == "reference" {
		t.Fatalf("%v: no fast kernel took the node", n)
	}
	return runKernel(t, n, k, ins...), variant
}

// runPrepared runs n on the kernel prep makes (one of several fast
// kernels of an op), which must take the node.
func runPrepared(t testing.TB, prep FastPrepare, n *graph.Node, env Env, ins ...tensor.Tensor) []float64 {
	t.Helper()
	k, _, err := prep(n, env)
	if err != nil || k == nil {
		t.Fatalf("prepare %v: %v (kernel %v)", n, err, k != nil)
	}
	return runKernel(t, n, k, ins...)
}

// runKernel runs k on ins into a fresh output filled with 0xff bytes,
// checks that the inputs are left as they were, and returns the output.
func runKernel(t testing.TB, n *graph.Node, k Kernel, ins ...tensor.Tensor) []float64 {
	t.Helper()
	before := make([][]byte, len(ins))
	for i, in := range ins {
		before[i] = slices.Clone(in.Data)
	}
	out, err := tensor.Make(n.DType, n.Shape)
	if err != nil {
		t.Fatal(err)
	}
	for i := range out.Data {
		out.Data[i] = 0xff
	}
	if err := k(ins, out); err != nil {
		t.Fatalf("run %v: %v", n, err)
	}
	for i, in := range ins {
		if !slices.Equal(before[i], in.Data) {
			t.Fatalf("%v changed input %d", n, i)
		}
	}
	return out.Float64s()
}
