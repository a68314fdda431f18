package ops

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// TestFusedConvFastWeights runs the fast FusedConv2D (bias, Relu,
// residual; output rows of 32, so whole sixteen-column panels) against the
// reference, then changes the weights in place: a bumped weights version
// must repack them, and the run must match the reference on the new ones.
func TestFusedConvFastWeights(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 5, 20, 32)
	w := g.Param("w", tensor.F32, 8, 5, 3, 3)
	b := g.Param("b", tensor.F32, 8)
	r := g.Input("r", tensor.F32, 1, 8, 20, 32)
	at := graph.Attrs{Pads: []int{1, 1, 1, 1}, Strides: []int{1, 1}, Epilogue: graph.Epilogue{Bias: true, Act: graph.OpRelu, Residual: true}}
	f := mustInsert(t, g, graph.OpFusedConv2D, at, x, w, b, r)
	g.Output(f)
	rng := rand.New(rand.NewPCG(2, 3))
	ins, env, k, variant := frPrepare(t, f, rng)
	t.Log(variant)
	frRepack(t, f, k, ins, env, rng, 1e-4)
}

// frRepack checks n's fast kernel k (prepared by frPrepare, its weights
// input 1 and its bias input 2) against the reference on two runs, then
// on new weights and a changed bias with the weights version bumped (k
// must repack them), and that a run on one worker allocates nothing
// (the tests' parallel For does).
func frRepack(t *testing.T, n *graph.Node, k Kernel, ins []tensor.Tensor, env Env, rng *rand.Rand, rel float64) {
	t.Helper()
	frMatch(t, "first run", n, k, ins, rel)
	frMatch(t, "second run", n, k, ins, rel)
	for i, v := range frRand(rng, n.Inputs[1].Shape.NumElements(), 1) {
		ins[1].F32()[i] = float32(v)
	}
	ins[2].F32()[min(3, ins[2].Shape.NumElements()-1)] = 5
	env.WeightsVersion.Add(1)
	frMatch(t, "new weights", n, k, ins, rel)
	k1, _, err := PrepareFast(n, Serial)
	if err != nil || k1 == nil {
		t.Fatalf("no fast kernel (%v)", err)
	}
	noAllocs(t, k1, ins, tensor.New(n.DType, n.Shape...))
}

// frPrepare draws F32 inputs for every input of n (uniform in [-1, 1)
// from rng) and prepares n's fast kernel on two workers whose weights
// carry a version, which the caller bumps after changing them.
func frPrepare(t *testing.T, n *graph.Node, rng *rand.Rand) ([]tensor.Tensor, Env, Kernel, string) {
	t.Helper()
	ins := make([]tensor.Tensor, len(n.Inputs))
	for i, in := range n.Inputs {
		ins[i] = frTensor(tensor.F32, in.Shape, frRand(rng, in.Shape.NumElements(), 1))
	}
	env := frEnv(2)
	env.WeightsVersion = new(atomic.Uint64)
	k, variant, err := PrepareFast(n, env)
	if err != nil || k == nil {
		t.Fatalf("no fast kernel (%v)", err)
	}
	return ins, env, k, variant
}

// frMatch checks that kernel k's F32 output on ins matches the
// reference's within rel (relative, plus as much absolute), NaN-aware.
func frMatch(t *testing.T, what string, n *graph.Node, k Kernel, ins []tensor.Tensor, rel float64) {
	t.Helper()
	got, want := frOut(t, n, k, ins).F32(), frReference(t, n, ins).F32()
	for i := range got {
		if approx.Far(float64(got[i]), float64(want[i]), rel*(1+math.Abs(float64(want[i])))) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// noAllocs checks that a run of k allocates nothing.
func noAllocs(t *testing.T, k Kernel, ins []tensor.Tensor, out tensor.Tensor) {
	t.Helper()
	if a := testing.AllocsPerRun(5, func() {
		if err := k(ins, out); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}

// TestFastMaxPool2x2 runs the fast 2×2, stride-2 max pooling (odd sizes:
// floor mode; NaNs, which must win) against the reference.
func TestFastMaxPool2x2(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, s := range [][]int{{1, 3, 16, 64}, {2, 2, 9, 21}, {1, 1, 2, 2}} {
		g := graph.New()
		in := g.Input("x", tensor.F32, s...)
		n := g.MaxPool2D(in, graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}})
		g.Output(n)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		v := frRand(rng, in.Shape.NumElements(), 1)
		v[rng.IntN(len(v))] = math.NaN()
		ins := []tensor.Tensor{frTensor(tensor.F32, in.Shape, v)}
		k, _, err := PrepareFast(n, frEnv(2))
		if err != nil || k == nil {
			t.Fatalf("no fast kernel (%v)", err)
		}
		got, want := frOut(t, n, k, ins).F32(), frReference(t, n, ins).F32()
		for i := range got {
			if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("%v: element %d = %v, want %v", s, i, got[i], want[i])
			}
		}
	}
}
