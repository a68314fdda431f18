package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Tests of the fast MatMul and Gemm kernels (matmul_fast.go) against the
// reference interpreter, for every GEMM variant this machine runs. Helpers
// are prefixed mf.

// mfEnv is an Env over fresh goroutines, chunked like the executor's
// runner, with its own weights version.
func mfEnv(threads int) Env {
	return Env{Threads: threads, WeightsVersion: new(atomic.Uint64), For: func(n, grain int, body func(lo, hi int)) {
		if n <= 0 {
			return
		}
		chunks := min(threads, (n+max(grain, 1)-1)/max(grain, 1))
		size := (n + chunks - 1) / chunks
		var wg sync.WaitGroup
		for lo := size; lo < n; lo += size {
			wg.Go(func() { body(lo, min(lo+size, n)) })
		}
		body(0, min(size, n))
		wg.Wait()
	}}
}

// mfRand is a tensor of values in [-1, 1).
func mfRand(r *rand.Rand, dims ...int) tensor.Tensor {
	t := tensor.New(tensor.F32, dims...)
	for i, x := range t.F32() {
		_ = x
		t.F32()[i] = float32(2*r.Float64() - 1)
	}
	return t
}

// mfCheck runs node n's fast kernel (variant v) on the feeds and compares
// it with ops.Interpret on the whole graph: |got − ref| <= 1e-6·(√K+1)·
// max(1, max|ref|) (float32 accumulation against float64).
func mfCheck(t *testing.T, g *graph.Graph, n *graph.Node, feeds map[string]tensor.Tensor, env Env, v *asm.GemmVariant, k int, prep func(*graph.Node, Env, *asm.GemmVariant) (Kernel, string, error)) tensor.Tensor {
	t.Helper()
	want, err := Interpret(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	kern, variant, err := prep(n, env, v)
	if err != nil || kern == nil {
		t.Fatalf("%s: prepare: %v (kernel %v)", n, err, kern != nil)
	}
	if variant != v.Name {
		t.Fatalf("variant %q, want %q", variant, v.Name)
	}
	ins := make([]tensor.Tensor, len(n.Inputs))
	for i, in := range n.Inputs {
		if in.Op == graph.OpConstant {
			ins[i] = *in.Value
		} else {
			ins[i] = feeds[in.Name]
		}
	}
	out := tensor.New(tensor.F32, n.Shape...)
	for i := range out.F32() {
		out.F32()[i] = float32(math.NaN())
	}
	if err := kern(ins, out); err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	mfClose(t, out, want[0], k, fmt.Sprintf("%s %s", v.Name, n))
	return out
}

func mfClose(t *testing.T, got, want tensor.Tensor, k int, what string) {
	t.Helper()
	if !got.Shape.Equal(want.Shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, want.Shape)
	}
	scale := 1.0
	for _, x := range want.F32() {
		scale = max(scale, math.Abs(float64(x)))
	}
	tol := 1e-6 * (math.Sqrt(float64(k)) + 1) * scale
	for i, x := range got.F32() {
		if w := want.F32()[i]; approx.Far(float64(x), float64(w), tol) {
			t.Fatalf("%s: element %d = %v, want %v (tol %.3g)", what, i, x, w, tol)
		}
	}
}

func TestFastMatMulShapes(t *testing.T) {
	shapes := [][2][]int{
		{{5, 7}, {7, 4}}, {{2, 3, 5, 7}, {7, 4}}, {{5, 7}, {2, 3, 7, 4}}, {{2, 1, 5, 7}, {1, 3, 7, 4}},
		{{2, 3, 5, 7}, {2, 3, 7, 4}}, {{1, 1, 9, 33}, {1, 1, 33, 17}}, {{7}, {7, 4}}, {{5, 7}, {7}},
		{{7}, {7}}, {{3, 1, 7}, {3, 7, 20}}, {{0, 5, 7}, {0, 7, 4}}, {{2, 5, 0}, {2, 0, 4}},
		{{4, 130, 65}, {4, 65, 33}}, {{3, 1, 300}, {300, 70}}, {{2, 64, 40}, {40, 100}}, {{6, 1, 17}, {6, 17, 1}},
	}
	for _, v := range asm.GemmVariants() {
		for i, s := range shapes {
			for _, weight := range []bool{false, true} {
				r := rand.New(rand.NewPCG(uint64(i), 1))
				g := graph.New()
				a := g.Input("a", tensor.F32, s[0]...)
				bv := mfRand(r, s[1]...)
				var b *graph.Node
				feeds := map[string]tensor.Tensor{"a": mfRand(r, s[0]...)}
				if weight {
					b = g.Param("b", tensor.F32, s[1]...)
				} else {
					b = g.Input("b", tensor.F32, s[1]...)
				}
				feeds["b"] = bv
				mm := g.MatMul(a, b)
				g.Output(mm)
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				k := s[0][len(s[0])-1]
				mfCheck(t, g, mm, feeds, mfEnv(1+i%3), v, k, prepareMatMulFast)
			}
		}
	}
}

func TestFastGemm(t *testing.T) {
	for _, v := range asm.GemmVariants() {
		r := rand.New(rand.NewPCG(3, 4))
		for _, mnk := range [][3]int{{5, 7, 3}, {1, 40, 33}, {33, 17, 65}, {130, 20, 9}, {3, 1, 5}} {
			m, nn, k := mnk[0], mnk[1], mnk[2]
			for _, cs := range [][]int{nil, {}, {1}, {nn}, {m, 1}, {1, nn}, {m, nn}} {
				for f := range 4 {
					ta, tb := f&1 != 0, f&2 != 0
					g := graph.New()
					ad, bd := []int{m, k}, []int{k, nn}
					if ta {
						ad = []int{k, m}
					}
					if tb {
						bd = []int{nn, k}
					}
					a := g.Input("a", tensor.F32, ad...)
					b := g.Param("b", tensor.F32, bd...)
					feeds := map[string]tensor.Tensor{"a": mfRand(r, ad...), "b": mfRand(r, bd...)}
					var c *graph.Node
					if cs != nil {
						c = g.Input("c", tensor.F32, cs...)
						feeds["c"] = mfRand(r, cs...)
					}
					alpha, beta := []float32{1, 0.5, -2}[f%3], []float32{1, 0, 0.25}[(f+1)%3]
					gm := g.Gemm(a, b, c, alpha, beta, ta, tb)
					g.Output(gm)
					if err := g.Err(); err != nil {
						t.Fatal(err)
					}
					mfCheck(t, g, gm, feeds, mfEnv(2), v, k, prepareGemmFast)
				}
			}
		}
	}
}

// TestFastMatMulWeights: a param B is packed on the first run and not
// again while the weights version stands still (a write behind its back
// is not seen), then repacked when the version moves; a constant B is
// packed once.
func TestFastMatMulWeights(t *testing.T) {
	for _, v := range asm.GemmVariants() {
		for _, m := range []int{1, 37} {
			r := rand.New(rand.NewPCG(5, uint64(m)))
			g := graph.New()
			a := g.Input("a", tensor.F32, 2, m, 50)
			w := g.Param("w", tensor.F32, 50, 70)
			mm := g.MatMul(a, w)
			g.Output(mm)
			env := mfEnv(2)
			kern, _, err := prepareMatMulFast(mm, env, v)
			if err != nil {
				t.Fatal(err)
			}
			x, w1 := mfRand(r, 2, m, 50), mfRand(r, 50, 70)
			wt := w1.Clone() // the kernel's view of the weight slot
			out := tensor.New(tensor.F32, mm.Shape...)
			run := func(wantW tensor.Tensor, what string) {
				t.Helper()
				if err := kern([]tensor.Tensor{x, wt}, out); err != nil {
					t.Fatal(err)
				}
				want, err := Interpret(g, map[string]tensor.Tensor{"a": x, "w": wantW})
				if err != nil {
					t.Fatal(err)
				}
				mfClose(t, out, want[0], 50, v.Name+" "+what)
			}
			run(w1, "first run")
			w2 := mfRand(r, 50, 70)
			copy(wt.Data, w2.Data) // written without SetParam
			run(w1, "stale (version unchanged)")
			env.WeightsVersion.Add(1)
			run(w2, "after version bump")
			ins := []tensor.Tensor{x, wt}
			if n := testing.AllocsPerRun(5, func() { _ = kern(ins, out) }); n != 0 {
				t.Errorf("%s: %v allocations per run", v.Name, n)
			}
		}
		// A constant B: packed on the first run from its own value.
		r := rand.New(rand.NewPCG(6, 7))
		g := graph.New()
		a := g.Input("a", tensor.F32, 9, 20)
		cv := mfRand(r, 20, 30)
		mm := g.MatMul(a, g.Constant(cv))
		g.Output(mm)
		mfCheck(t, g, mm, map[string]tensor.Tensor{"a": mfRand(r, 9, 20)}, Serial, v, 20, prepareMatMulFast)
	}
}

// TestFastRegistered: PrepareFast picks these kernels with the best
// variant cpu.Allows, and F64 falls through to the reference.
func TestFastRegistered(t *testing.T) {
	g := graph.New()
	mm := g.MatMul(g.Input("a", tensor.F32, 3, 4), g.Input("b", tensor.F32, 4, 5))
	m64 := g.MatMul(g.Input("c", tensor.F64, 3, 4), g.Input("d", tensor.F64, 4, 5))
	gm := g.Gemm(g.Input("e", tensor.F32, 3, 4), g.Input("f", tensor.F32, 5, 4), nil, 1, 0, false, true)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*graph.Node{mm, gm} {
		if _, variant, err := PrepareFast(n, Serial); err != nil || variant != asm.BestGemm().Name {
			t.Fatalf("%s: variant %q (%v), want %q", n, variant, err, asm.BestGemm().Name)
		}
	}
	if _, variant, err := PrepareFast(m64, Serial); err != nil || variant != "reference" {
		t.Fatalf("F64 MatMul: variant %q (%v), want reference", variant, err)
	}
}

// TestFastBadTensors: wrong buffers are errors, not panics.
func TestFastBadTensors(t *testing.T) {
	g := graph.New()
	mm := g.MatMul(g.Input("a", tensor.F32, 3, 4), g.Input("b", tensor.F32, 4, 5))
	kern, _, err := prepareMatMulFast(mm, Serial, asm.BestGemm())
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := tensor.New(tensor.F32, 3, 4), tensor.New(tensor.F32, 4, 5), tensor.New(tensor.F32, 3, 5)
	for name, call := range map[string]func() error{
		"short a":   func() error { return kern([]tensor.Tensor{tensor.New(tensor.F32, 2, 4), b}, c) },
		"f64 b":     func() error { return kern([]tensor.Tensor{a, tensor.New(tensor.F64, 4, 5)}, c) },
		"one input": func() error { return kern([]tensor.Tensor{a}, c) },
		"short out": func() error { return kern([]tensor.Tensor{a, b}, tensor.New(tensor.F32, 3, 4)) },
	} {
		if err := call(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
