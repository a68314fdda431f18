package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// moeCase is an OpMoE node with its operands.
type moeCase struct {
	n   *graph.Node
	ins []tensor.Tensor
}

// moeRouting picks each token's k expert ids: "distinct" (k different
// experts), "skewed" (slot 0 always expert 1, the rest random, repeats
// allowed), "one" (every slot on expert e-1, the others idle).
func moeRouting(r *rand.Rand, t, k, e int, how string) []int64 {
	ids := make([]int64, t*k)
	for i := range t {
		perm := r.Perm(e)
		for s := range k {
			switch how {
			case "distinct":
				ids[i*k+s] = int64(perm[s])
			case "skewed":
				ids[i*k+s] = int64(r.IntN(e))
				if s == 0 {
					ids[i*k+s] = 1
				}
			case "one":
				ids[i*k+s] = int64(e - 1)
			}
		}
	}
	return ids
}

func randF32(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (2*r.Float32() - 1) * scale
	}
	return v
}

// newMoECase builds x [t, h], ids, weights, and stacked weights as params
// (weights) or inputs.
func newMoECase(r *rand.Rand, t, h, f, e, k int, how string, idDT tensor.DType, params bool) moeCase {
	g := graph.New()
	w := g.Input
	if params {
		w = g.Param
	}
	n := g.MoEExperts(g.Input("x", tensor.F32, t, h), g.Input("ids", idDT, t, k), g.Input("w", tensor.F32, t, k),
		w("gate", tensor.F32, e, h, f), w("up", tensor.F32, e, h, f), w("down", tensor.F32, e, f, h))
	if err := g.Err(); err != nil {
		panic(err)
	}
	ids := tensor.New(idDT, t, k)
	for i, v := range moeRouting(r, t, k, e, how) {
		setIndex(ids, i, int(v))
	}
	f32 := func(v []float32, dims ...int) tensor.Tensor {
		x, err := tensor.FromF32(dims, v)
		if err != nil {
			panic(err)
		}
		return x
	}
	return moeCase{n: n, ins: []tensor.Tensor{
		f32(randF32(r, t*h, 1), t, h), ids, f32(randF32(r, t*k, 1), t, k),
		f32(randF32(r, e*h*f, 0.5), e, h, f), f32(randF32(r, e*h*f, 0.5), e, h, f), f32(randF32(r, e*f*h, 0.5), e, f, h),
	}}
}

func (c moeCase) reference(t *testing.T) []float64 {
	t.Helper()
	k, err := PrepareReference(c.n)
	if err != nil {
		t.Fatal(err)
	}
	return runKernel(t, c.n, k, c.ins...)
}

// TestMoEFast: the routed kernel agrees with the reference over routings
// that leave experts idle or pile every row on one, one token (the
// products' one-row path), k of 1, I32 ids, weights packed (params) and
// read as run-time inputs, serial and split across workers; a second
// run with other ids re-routes.
func TestMoEFast(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	for _, s := range []struct {
		t, h, f, e, k int
		how           string
	}{
		{9, 16, 24, 4, 2, "distinct"}, {13, 40, 72, 8, 2, "skewed"}, {6, 33, 17, 5, 3, "one"},
		{1, 64, 96, 8, 2, "distinct"}, {20, 24, 40, 3, 1, "skewed"}, {64, 128, 256, 8, 2, "distinct"},
	} {
		for _, threads := range []int{1, 3} {
			for _, params := range []bool{true, false} {
				for _, idDT := range []tensor.DType{tensor.I64, tensor.I32} {
					name := fmt.Sprintf("%+v/t%d/params=%v/%v", s, threads, params, idDT)
					c := newMoECase(r, s.t, s.h, s.f, s.e, s.k, s.how, idDT, params)
					env := parEnv(threads)
					env.WeightsVersion = new(atomic.Uint64)
					k, variant, err := PrepareFast(c.n, env)
					if err != nil || variant == "reference" {
						t.Fatalf("%s: prepare: %v (%s)", name, err, variant)
					}
					moeClose(t, name, runKernel(t, c.n, k, c.ins...), c.reference(t))
					// Re-routed: every slot to another expert.
					ids := c.ins[1]
					for i := range ids.NumElements() {
						v := indicesOf(ids.DType, ids.Data).at(i)
						setIndex(ids, i, (v+1)%s.e)
					}
					moeClose(t, name+"/rerouted", runKernel(t, c.n, k, c.ins...), c.reference(t))
				}
			}
		}
	}
}

// moeClose compares a float32 kernel's output with the float64
// reference: 1e-4 relative, and an absolute margin of 1e-5 of the
// output's largest magnitude for the outputs whose sums cancel (the
// products round their rows to float32 between the three products).
func moeClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	big := 0.0
	for _, w := range want {
		big = max(big, math.Abs(w))
	}
	approx.Slices(t, what, got, want, 1e-4, 1e-5*big)
}

func setIndex(ids tensor.Tensor, i, v int) {
	if ids.DType == tensor.I64 {
		ids.I64()[i] = int64(v)
	} else {
		tensor.Elems[int32](ids.Data)[i] = int32(v)
	}
}

// TestMoEFastRepacks: new weights under a moved weights version are
// packed again; the result follows them.
func TestMoEFastRepacks(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 2))
	c := newMoECase(r, 7, 16, 20, 4, 2, "distinct", tensor.I64, true)
	env := parEnv(2)
	env.WeightsVersion = new(atomic.Uint64)
	k, _, err := PrepareFast(c.n, env)
	if err != nil {
		t.Fatal(err)
	}
	moeClose(t, "first weights", runKernel(t, c.n, k, c.ins...), c.reference(t))
	for _, w := range c.ins[3:] {
		copy(w.F32(), randF32(r, w.NumElements(), 0.5))
	}
	env.WeightsVersion.Add(1)
	moeClose(t, "new weights", runKernel(t, c.n, k, c.ins...), c.reference(t))
}

// TestMoEFastAllocs: a warm run allocates nothing, whatever the routing.
func TestMoEFastAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 3))
	c := newMoECase(r, 16, 32, 48, 8, 2, "skewed", tensor.I64, true)
	k, _, err := PrepareFast(c.n, Env{For: Serial.For, Threads: 1, WeightsVersion: new(atomic.Uint64)})
	if err != nil {
		t.Fatal(err)
	}
	out := tensor.New(tensor.F32, c.n.Shape...)
	ids := c.ins[1].I64()
	round := 0
	if a := testing.AllocsPerRun(10, func() {
		round++
		for i := range ids { // a new routing each run, one-row experts included
			ids[i] = int64((i*round + i/3) % 8)
		}
		if err := k(c.ins, out); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}

// TestMoEExpertIDErrors: an id outside [0, E) fails the run on both
// kernels, naming the id, token and slot.
func TestMoEExpertIDErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 4))
	c := newMoECase(r, 4, 8, 8, 3, 2, "distinct", tensor.I64, true)
	fast, _, err := PrepareFast(c.n, Serial)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := PrepareReference(c.n)
	if err != nil {
		t.Fatal(err)
	}
	out := tensor.New(tensor.F32, c.n.Shape...)
	for _, bad := range []int64{3, -1} {
		c.ins[1].I64()[5] = bad
		for name, k := range map[string]Kernel{"fast": fast, "reference": ref} {
			want := fmt.Sprintf("expert id %d (token 2, slot 1) is out of range [0, 3)", bad)
			if err := k(c.ins, out); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, id %d: error %v, want %q", name, bad, err, want)
			}
		}
	}
}

// TestMoEDecomposition: OpMoE's kernels agree with the same layer spelled
// with GroupedMatMul, Silu, Mul and MoECombine, run on the reference
// kernels.
func TestMoEDecomposition(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 5))
	c := newMoECase(r, 11, 12, 20, 5, 2, "skewed", tensor.I64, true)
	g := graph.New()
	ins := c.n.Inputs
	var srcs []*graph.Node
	for _, in := range ins {
		srcs = append(srcs, g.Input(in.Name, in.DType, in.Shape...))
	}
	g.Output(g.MoEExpertsDecomposed(srcs[0], srcs[1], srcs[2], srcs[3], srcs[4], srcs[5]))
	feeds := map[string]tensor.Tensor{}
	for i, in := range ins {
		feeds[in.Name] = c.ins[i]
	}
	got, err := Interpret(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	want := c.reference(t)
	approx.Slices(t, "decomposed", got[0].Float64s(), want, 1e-5, 1e-6)
	fast, _ := fastRun(t, c.n, parEnv(2), c.ins...)
	moeClose(t, "fast", fast, want)
}

// TestMoEHost: the host part of a split layer equals the reference run
// with the resident experts' slots weighted zero, for masks with some,
// none and every expert resident (all resident: zeros), serial and over
// workers; a mask of the wrong length and a non-MoE node are errors.
func TestMoEHost(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 9))
	for _, threads := range []int{1, 3} {
		c := newMoECase(r, 11, 24, 40, 5, 2, "skewed", tensor.I64, true)
		env := parEnv(threads)
		env.WeightsVersion = new(atomic.Uint64)
		h, err := NewMoEHost(c.n, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, mask := range [][]bool{{true, false, true, false, false}, {false, true, false, false, false}, make([]bool, 5), {true, true, true, true, true}} {
			name := fmt.Sprintf("t%d/%v", threads, mask)
			out := tensor.New(tensor.F32, 11, 24)
			for i := range out.Data {
				out.Data[i] = 0xAB // what Run must overwrite
			}
			if err := h.Run(c.ins, out, mask); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			zeroed := c
			zeroed.ins = append([]tensor.Tensor(nil), c.ins...)
			w := tensor.New(tensor.F32, 11, 2)
			copy(w.Data, c.ins[2].Data)
			ids, ws := indicesOf(c.ins[1].DType, c.ins[1].Data), w.F32()
			for j := range ws {
				if mask[ids.at(j)] {
					ws[j] = 0
				}
			}
			zeroed.ins[2] = w
			moeClose(t, name, out.Float64s(), zeroed.reference(t))
		}
		if err := h.Run(c.ins, tensor.New(tensor.F32, 11, 24), make([]bool, 4)); err == nil || !strings.Contains(err.Error(), "mask of 4 experts") {
			t.Errorf("a mask of 4 for 5 experts: %v", err)
		}
	}
	g := graph.New()
	if _, err := NewMoEHost(g.Relu(g.Input("x", tensor.F32, 2)), Env{}); err == nil || !strings.Contains(err.Error(), "want MoE") {
		t.Errorf("a Relu: %v", err)
	}
}
