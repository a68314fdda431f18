package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The fast elementwise kernels against the reference kernels, for every
// variant this machine runs (helpers carry a vt prefix): unary results
// within the entry's tolerance (relative, on a scale of at least 1, as
// model outputs are compared), binary results bit for bit; serial and
// split over 4 goroutines; in place equal to out of place; broadcasts the
// fast path does not take fall back to the reference.

// vtEnv runs For's chunks on goroutines.
func vtEnv(threads int) Env {
	return Env{Threads: threads, For: func(n, grain int, body func(lo, hi int)) {
		chunks := min(threads, max(1, n/max(grain, 1)))
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

// vtData is seeded F32 data with NaN, ±Inf, ±0 and huge values mixed in.
func vtData(r *rand.Rand, n int) tensor.Tensor {
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e30, -1e30, 1e-40, 90, -105}
	t := tensor.New(tensor.F32, n)
	v := t.F32()
	for i := range v {
		if r.IntN(12) == 0 {
			v[i] = specials[r.IntN(len(specials))]
		} else {
			v[i] = float32(r.NormFloat64() * 5)
		}
	}
	return t
}

// vtReshape views t with another shape.
func vtReshape(t tensor.Tensor, shape ...int) tensor.Tensor {
	t.Shape = tensor.Shape(shape)
	return t
}

func vtClone(t tensor.Tensor) tensor.Tensor {
	c := tensor.New(t.DType, t.Shape...)
	copy(c.Data, t.Data)
	return c
}

// vtRun runs a kernel into a fresh output of the node's shape.
func vtRun(t *testing.T, n *graph.Node, k Kernel, ins ...tensor.Tensor) tensor.Tensor {
	t.Helper()
	out := tensor.New(n.DType, n.Shape...)
	if err := k(ins, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func vtReference(t *testing.T, n *graph.Node, ins ...tensor.Tensor) tensor.Tensor {
	t.Helper()
	k, err := PrepareReference(n)
	if err != nil {
		t.Fatal(err)
	}
	return vtRun(t, n, k, ins...)
}

// vtClose compares within tol·max(1, |want|); NaN only against NaN, an
// infinity only against itself.
func vtClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				t.Fatalf("%s: element %d = %v, want %v", what, i, g, w)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				t.Fatalf("%s: element %d = %v, want %v", what, i, g, w)
			}
		case math.Abs(g-w) > tol*math.Max(1, math.Abs(w)):
			t.Fatalf("%s: element %d = %v, want %v (tol %g)", what, i, g, w, tol)
		}
	}
}

// vtSame compares bit for bit (any NaN matches any NaN).
func vtSame(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, g, w)
		}
	}
}

func vtEnvs() []Env { return []Env{Serial, vtEnv(4)} }

func TestFastElementwiseUnary(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	shapes := [][]int{{0}, {1}, {7}, {33}, {3, 37}, {1000}, {2, 3, 17000}} // the last splits over workers
	for _, op := range vecOps(1) {
		e, err := Lookup(op)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range asm.EwVariants() {
			for ei, env := range vtEnvs() {
				t.Run(fmt.Sprintf("%v/%s/env%d", op, k.Name, ei), func(t *testing.T) {
					for _, s := range shapes {
						g := graph.New()
						n := g.Apply(op, graph.Attrs{}, g.Input("x", tensor.F32, s...))
						x := vtReshape(vtData(r, tensor.Shape(s).NumElements()), s...)
						kern, err := prepareVecUnary(n, env, k)
						if err != nil || kern == nil {
							t.Fatalf("%v: kernel %v, error %v", s, kern != nil, err)
						}
						x0 := vtClone(x)
						got := vtRun(t, n, kern, x)
						want := vtReference(t, n, x)
						vtClose(t, fmt.Sprint(s), got.F32(), want.F32(), e.Tol)
						vtSame(t, "input", x.F32(), x0.F32())
						if err := kern([]tensor.Tensor{x}, x); err != nil { // in place
							t.Fatal(err)
						}
						vtSame(t, fmt.Sprint(s, " in place"), x.F32(), got.F32())
					}
				})
			}
		}
	}
}

// vtBinaryCase is one broadcast of x op y and whether the fast path takes it.
type vtBinaryCase struct {
	x, y  []int
	takes bool
}

var vtBinaryCases = []vtBinaryCase{
	{[]int{0}, []int{0}, true},
	{[]int{5}, []int{5}, true},
	{[]int{3, 37}, []int{3, 37}, true},
	{[]int{1, 222}, []int{222}, true}, // same elements, different rank
	{[]int{3, 37}, []int{}, true},     // scalar y
	{[]int{1}, []int{4, 9}, true},     // scalar x
	{[]int{5, 37}, []int{37}, true},   // row y
	{[]int{5, 37}, []int{1, 37}, true},
	{[]int{37}, []int{2, 5, 37}, true},               // row x
	{[]int{2, 3, 20000}, []int{20000}, true},         // rows split over workers
	{[]int{2, 150000}, []int{1}, true},               // scalar, split over workers
	{[]int{300001}, []int{300001}, true},             // large enough to stream
	{[]int{5, 3}, []int{3}, false},                   // row shorter than vecRowMin
	{[]int{3, 1}, []int{1, 4}, false},                // outer product
	{[]int{4, 37}, []int{4, 1}, true},                // column: planes of one row
	{[]int{2, 8, 5, 7}, []int{1, 8, 1, 1}, true},     // per channel (squeeze-excite)
	{[]int{2, 8, 5, 7}, []int{8, 1, 1}, true},        // per channel, repeated over N
	{[]int{2, 8, 5, 7}, []int{2, 8, 1, 1}, true},     // per image and channel
	{[]int{2, 8, 5, 7}, []int{2, 1, 1, 1}, true},     // per image
	{[]int{8, 1, 1}, []int{2, 8, 3, 3}, true},        // per channel on the x side
	{[]int{3, 8, 100, 100}, []int{3, 8, 1, 1}, true}, // planes split over workers
	{[]int{2, 8, 2, 2}, []int{8, 1, 1}, false},       // planes shorter than vecRowMin
	{[]int{2, 8, 5, 7}, []int{8, 5, 1}, false},       // a value per row of 7: shorter than vecRowMin
	{[]int{2, 1, 5, 7}, []int{1, 8, 1, 1}, false},    // neither operand is the output's size
}

func TestFastElementwiseBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, op := range vecOps(2) {
		for _, k := range asm.EwVariants() {
			for ei, env := range vtEnvs() {
				t.Run(fmt.Sprintf("%v/%s/env%d", op, k.Name, ei), func(t *testing.T) {
					for _, c := range vtBinaryCases {
						g := graph.New()
						n := g.Apply(op, graph.Attrs{}, g.Input("x", tensor.F32, c.x...), g.Input("y", tensor.F32, c.y...))
						if err := g.Err(); err != nil {
							t.Fatal(err)
						}
						kern, err := prepareVecBinary(n, env, k)
						if err != nil || (kern != nil) != c.takes {
							t.Fatalf("%v op %v: kernel %v, want %v (error %v)", c.x, c.y, kern != nil, c.takes, err)
						}
						if kern == nil {
							continue
						}
						x := vtReshape(vtData(r, tensor.Shape(c.x).NumElements()), c.x...)
						y := vtReshape(vtData(r, tensor.Shape(c.y).NumElements()), c.y...)
						if op == graph.OpMax || op == graph.OpMin { // ties, signed zeros among them
							xs, ys := x.F32(), y.F32()
							for i := 0; i < len(xs) && i < len(ys); i += 3 {
								ys[i] = float32(math.Copysign(float64(xs[i]), float64(r.IntN(2)-1)))
							}
						}
						x0, y0 := vtClone(x), vtClone(y)
						got := vtRun(t, n, kern, x, y)
						want := vtReference(t, n, x, y)
						what := fmt.Sprintf("%v op %v", c.x, c.y)
						vtSame(t, what, got.F32(), want.F32())
						vtSame(t, "x", x.F32(), x0.F32())
						vtSame(t, "y", y.F32(), y0.F32())
						if tensor.Shape(c.x).NumElements() == n.Shape.NumElements() { // in place into x
							if err := kern([]tensor.Tensor{x, y}, vtReshape(x, n.Shape...)); err != nil {
								t.Fatal(err)
							}
							vtSame(t, what+" in place", x.F32(), want.F32())
						}
					}
				})
			}
		}
	}
}

// Registered: PrepareFast picks the dispatch's variant for F32, and the
// reference for other dtypes; a partly overlapping output is an error.
func TestFastElementwiseDispatch(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 64)
	ex := g.Apply(graph.OpExp, graph.Attrs{}, x)
	add := g.Apply(graph.OpAdd, graph.Attrs{}, x, x)
	xd := g.Input("xd", tensor.F64, 64)
	exd := g.Apply(graph.OpExp, graph.Attrs{}, xd)
	for _, c := range []struct {
		n    *graph.Node
		want string
	}{{ex, asm.BestEw().Name}, {add, asm.BestEw().Name}, {exd, "reference"}} {
		_, v, err := PrepareFast(c.n, Serial)
		if err != nil || v != c.want {
			t.Errorf("%v %v: variant %q (error %v), want %q", c.n.Op, c.n.DType, v, err, c.want)
		}
	}
	k, _, err := PrepareFast(ex, Serial)
	if err != nil {
		t.Fatal(err)
	}
	buf := tensor.New(tensor.F32, 65)
	in := tensor.Tensor{DType: tensor.F32, Shape: tensor.Shape{64}, Data: buf.Data[:256]}
	out := tensor.Tensor{DType: tensor.F32, Shape: tensor.Shape{64}, Data: buf.Data[4:]}
	if err := k([]tensor.Tensor{in}, out); err == nil {
		t.Error("partly overlapping output accepted")
	}
	if err := k([]tensor.Tensor{in}, tensor.New(tensor.F32, 63)); err == nil {
		t.Error("wrong output size accepted")
	}
}
