package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Tests of the fast row kernels (prefix fr): every row-kernel variant
// this machine runs, against the reference kernel of the same node, with
// the entry's tolerance, misaligned inputs and outputs, guard bytes
// around the output, and real concurrency.

// frEnv is an Env whose For runs chunks on fresh goroutines.
func frEnv(threads int) Env {
	return Env{Threads: threads, For: func(n, grain int, body func(lo, hi int)) {
		if n <= 0 {
			return
		}
		chunks := min(threads, (n+max(grain, 1)-1)/max(grain, 1))
		var wg sync.WaitGroup
		for c := range chunks {
			wg.Add(1)
			go func() { defer wg.Done(); body(c*n/chunks, (c+1)*n/chunks) }()
		}
		wg.Wait()
	}}
}

// frTensor holds values in a buffer whose data starts 4 bytes past a
// 32-byte boundary, so no vector load is aligned.
func frTensor(dt tensor.DType, s tensor.Shape, v []float64) tensor.Tensor {
	t := tensor.New(dt, s...)
	for i, x := range v {
		switch dt {
		case tensor.F32:
			t.F32()[i] = float32(x)
		case tensor.I32:
			t.I32()[i] = int32(x)
		}
	}
	buf := make([]byte, len(t.Data)+36)
	copy(buf[4:], t.Data)
	t.Data = buf[4 : 4+len(t.Data) : 4+len(t.Data)]
	return t
}

// frOut runs k into an output surrounded by guard bytes (and misaligned),
// checks the guards and that the inputs are unchanged, and returns the
// output.
func frOut(t testing.TB, n *graph.Node, k Kernel, ins []tensor.Tensor) tensor.Tensor {
	t.Helper()
	const g = 36 // not a multiple of 8: misaligned
	nb := n.Shape.NumElements() * n.DType.Size()
	buf := make([]byte, nb+2*g)
	for i := range buf {
		buf[i] = 0xa5
	}
	out := tensor.Tensor{DType: n.DType, Shape: n.Shape, Data: buf[g : g+nb : g+nb]}
	before := make([][]byte, len(ins))
	for i, in := range ins {
		before[i] = slices.Clone(in.Data)
	}
	if err := k(ins, out); err != nil {
		t.Fatalf("%v: %v", n, err)
	}
	for i, b := range buf {
		if (i < g || i >= g+nb) && b != 0xa5 {
			t.Fatalf("%v: guard byte %d overwritten", n, i-g)
		}
	}
	for i, in := range ins {
		if !slices.Equal(before[i], in.Data) {
			t.Fatalf("%v changed input %d", n, i)
		}
	}
	return out
}

// frReference runs n's reference kernel.
func frReference(t testing.TB, n *graph.Node, ins []tensor.Tensor) tensor.Tensor {
	t.Helper()
	k, err := PrepareReference(n)
	if err != nil {
		t.Fatal(err)
	}
	out := tensor.New(n.DType, n.Shape...)
	if err := k(ins, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// frClose checks got against want: |got-want| <= tol·(|want| + scale[i])
// + atol (scale nil: 0), NaN only against NaN, infinities exactly.
func frClose(t testing.TB, what string, got, want []float32, scale []float64, tol, atol float64) {
	t.Helper()
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		s := 0.0
		if scale != nil {
			s = scale[i]
		}
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				t.Fatalf("%s: element %d = %v, want %v", what, i, g, w)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				t.Fatalf("%s: element %d = %v, want %v", what, i, g, w)
			}
		case approx.Far(g, w, tol*(math.Abs(w)+s)+atol):
			t.Fatalf("%s: element %d = %v, want %v (tol %g)", what, i, g, w, tol)
		}
	}
}

func frTol(t testing.TB, op graph.Op) float64 {
	e, err := Lookup(op)
	if err != nil {
		t.Fatal(err)
	}
	return e.Tol
}

func frRand(r *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = (2*r.Float64() - 1) * scale
	}
	return v
}

// frLengths are the row lengths: every one to 80 (past two 32-wide
// blocks), then larger ones with every tail.
func frLengths() []int {
	var ns []int
	for n := 0; n <= 80; n++ {
		ns = append(ns, n)
	}
	return append(ns, 255, 1536, 4099)
}

func TestFastSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	tol := frTol(t, graph.OpSoftmax)
	for _, k := range asm.RowVariants() {
		for _, op := range []graph.Op{graph.OpSoftmax, graph.OpLogSoftmax} {
			for _, l := range frLengths() {
				for _, special := range []string{"", "nan", "+inf", "-inf", "all -inf"} {
					if special != "" && l == 0 {
						continue
					}
					g := graph.New()
					in := g.Input("x", tensor.F32, 2, 3, l)
					n := g.Softmax(in, 2)
					if op == graph.OpLogSoftmax {
						n = g.LogSoftmax(in, -1)
					}
					if err := g.Err(); err != nil {
						t.Fatal(err)
					}
					v := frRand(r, 6*l, 20)
					switch special { // in row 1 only: the other rows stay finite
					case "nan":
						v[l+r.IntN(l)] = math.NaN()
					case "+inf":
						v[l+r.IntN(l)] = math.Inf(1)
					case "-inf":
						v[l+r.IntN(l)] = math.Inf(-1)
					case "all -inf":
						for i := l; i < 2*l; i++ {
							v[i] = math.Inf(-1)
						}
					}
					ins := []tensor.Tensor{frTensor(tensor.F32, in.Shape, v)}
					kern, err := prepareSoftmaxFast(n, frEnv(2), k)
					if err != nil || kern == nil {
						t.Fatalf("%v: no fast kernel (%v)", n, err)
					}
					got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
					what := fmt.Sprintf("%s %v l=%d %s", k.Name, op, l, special)
					if op == graph.OpSoftmax {
						// Relative, except results below 2^-126 may flush to 0.
						frClose(t, what, got, want, nil, tol, 0x1p-126)
					} else {
						// An absolute part: log Σ exp carries an absolute error.
						frClose(t, what, got, want, onesLike(want), tol, 0)
					}
				}
			}
		}
	}
}

func onesLike(x []float32) []float64 {
	s := make([]float64, len(x))
	for i := range s {
		s[i] = 1
	}
	return s
}

func TestFastSoftmaxFallsBack(t *testing.T) {
	g := graph.New()
	n := g.Softmax(g.Input("x", tensor.F32, 4, 5), 0) // a strided axis
	f64 := g.Softmax(g.Input("y", tensor.F64, 4, 5), 1)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, nd := range []*graph.Node{n, f64} {
		if k, err := prepareSoftmaxFast(nd, Serial, asm.BestRows()); k != nil || err != nil {
			t.Errorf("%v: fast kernel %v, %v; want the reference", nd, k != nil, err)
		}
	}
	if _, variant, err := PrepareFast(n, Serial); err != nil || variant != "reference" {
		t.Errorf("PrepareFast chose %q, %v", variant, err)
	}
}

func TestFastNorms(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	tol := frTol(t, graph.OpLayerNorm)
	for _, k := range asm.RowVariants() {
		for _, l := range frLengths() {
			if l == 0 {
				continue
			}
			for _, c := range []struct {
				rms         bool
				scale, bias bool
				shift       float64
			}{{false, false, false, 0}, {false, true, true, 0}, {false, true, false, 100}, {false, false, true, 0}, {true, false, false, 0}, {true, true, false, 3}} {
				g := graph.New()
				in := g.Input("x", tensor.F32, 3, l)
				ins := []tensor.Tensor{frTensor(tensor.F32, in.Shape, shifted(frRand(r, 3*l, 2), c.shift))}
				var sn, bn *graph.Node
				if c.scale || (c.bias && !c.rms) {
					sn = g.Input("s", tensor.F32, l)
					ins = append(ins, frTensor(tensor.F32, sn.Shape, frRand(r, l, 2)))
				}
				if c.bias && !c.rms {
					bn = g.Input("b", tensor.F32, l)
					ins = append(ins, frTensor(tensor.F32, bn.Shape, frRand(r, l, 1)))
				}
				var n *graph.Node
				if c.rms {
					n = g.RMSNorm(in, sn, 1, 1e-5)
				} else {
					n = g.LayerNorm(in, sn, bn, -1, 1e-5)
				}
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				kern, err := prepareNormFast(n, frEnv(3), k)
				if err != nil || kern == nil {
					t.Fatalf("%v: no fast kernel (%v)", n, err)
				}
				got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
				// Normalised values are O(1): the tolerance is relative
				// to max(1, |want|), as the hand-computed norm tests.
				frClose(t, fmt.Sprintf("%s %v l=%d %+v", k.Name, n.Op, l, c), got, want, onesLike(want), tol, 0)
			}
		}
	}
}

func shifted(v []float64, s float64) []float64 {
	for i := range v {
		v[i] += s
	}
	return v
}

// TestFastNormMiddleAxis normalises over the last two dims of a 3-D input.
func TestFastNormMiddleAxis(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, k := range asm.RowVariants() {
		g := graph.New()
		in := g.Input("x", tensor.F32, 4, 5, 7)
		n := g.LayerNorm(in, g.Input("s", tensor.F32, 5, 7), g.Input("b", tensor.F32, 5, 7), 1, 1e-3)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		ins := []tensor.Tensor{
			frTensor(tensor.F32, in.Shape, frRand(r, 140, 3)),
			frTensor(tensor.F32, tensor.Shape{5, 7}, frRand(r, 35, 1)),
			frTensor(tensor.F32, tensor.Shape{5, 7}, frRand(r, 35, 1)),
		}
		kern, err := prepareNormFast(n, frEnv(2), k)
		if err != nil || kern == nil {
			t.Fatalf("no fast kernel (%v)", err)
		}
		got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
		frClose(t, k.Name, got, want, onesLike(want), frTol(t, n.Op), 0)
	}
}

// frAbs returns a copy of an F32 tensor with every element made
// non-negative: the reference run on it gives each output's magnitude
// Σ|x|, the scale a sum's rounding is measured against.
func frAbs(x tensor.Tensor) tensor.Tensor {
	a := x.Clone()
	for i, v := range a.F32() {
		a.F32()[i] = float32(math.Abs(float64(v)))
	}
	return a
}

func TestFastReduce(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	ops := []graph.Op{graph.OpReduceSum, graph.OpReduceMean, graph.OpReduceMax, graph.OpReduceMin}
	build := map[graph.Op]func(g *graph.Graph, x *graph.Node, keep bool, axes ...int) *graph.Node{
		graph.OpReduceSum: (*graph.Graph).ReduceSum, graph.OpReduceMean: (*graph.Graph).ReduceMean,
		graph.OpReduceMax: (*graph.Graph).ReduceMax, graph.OpReduceMin: (*graph.Graph).ReduceMin,
	}
	type tcase struct {
		shape []int
		axes  []int
	}
	cases := []tcase{
		{[]int{1, 200000}, []int{1}}, // one long row, split over workers
		{[]int{3, 70001}, []int{1}},
		{[]int{2, 5, 1500}, []int{1}}, // strided, several column blocks
		{[]int{2, 3, 4, 5}, []int{1, 2}},
		{[]int{2, 3, 4, 5}, []int{0, 1, 2, 3}},
	}
	for range 150 {
		rank := 1 + r.IntN(4)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + r.IntN(12)
			if r.IntN(5) == 0 {
				shape[i] = 1 + r.IntN(90)
			}
		}
		a := r.IntN(rank)
		b := a + r.IntN(rank-a)
		var axes []int
		for i := a; i <= b; i++ {
			axes = append(axes, i)
		}
		cases = append(cases, tcase{shape, axes})
	}
	for _, k := range asm.RowVariants() {
		for ci, c := range cases {
			for _, op := range ops {
				g := graph.New()
				in := g.Input("x", tensor.F32, c.shape...)
				n := build[op](g, in, ci%2 == 0, c.axes...)
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				v := frRand(r, in.Shape.NumElements(), 10)
				if ci%7 == 3 && len(v) > 2 {
					v[r.IntN(len(v))] = math.NaN()
					v[r.IntN(len(v))] = math.Inf(1)
				}
				ins := []tensor.Tensor{frTensor(tensor.F32, in.Shape, v)}
				kern, err := prepareReduceFast(n, frEnv(3), k)
				if err != nil || kern == nil {
					t.Fatalf("%v %v axes %v: no fast kernel (%v)", op, c.shape, c.axes, err)
				}
				got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
				mag := frReference(t, n, []tensor.Tensor{frAbs(ins[0])}).F32()
				scale := make([]float64, len(mag))
				for i, m := range mag {
					scale[i] = 1e-6 * float64(m) // cancellation: relative to Σ|x|
				}
				frClose(t, fmt.Sprintf("%s %v %v axes %v", k.Name, op, c.shape, c.axes), got, want, scale, frTol(t, op), 0)
			}
		}
	}
}

func TestFastReduceFallsBack(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 4)
	for _, n := range []*graph.Node{
		g.ReduceSum(x, false, 0, 2),                           // not one block of axes
		g.ReduceProd(x, false, 1),                             // no fast product
		g.ReduceSum(g.Input("i", tensor.I32, 2, 3), false, 1), // not F32
	} {
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		if _, variant, err := PrepareFast(n, Serial); err != nil || variant != "reference" {
			t.Errorf("%v: chose %q (%v), want the reference", n, variant, err)
		}
	}
}

func TestFastGlobalAvgPool(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, k := range asm.RowVariants() {
		for _, s := range [][]int{{2, 3, 7, 9}, {1, 2, 0, 3}, {1, 4, 300, 300}, {2, 2, 5}} {
			g := graph.New()
			in := g.Input("x", tensor.F32, s...)
			n := g.GlobalAvgPool(in)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			ins := []tensor.Tensor{frTensor(tensor.F32, in.Shape, frRand(r, in.Shape.NumElements(), 1))}
			kern, err := prepareGlobalAvgPoolFast(n, frEnv(2), k)
			if err != nil || kern == nil {
				t.Fatalf("no fast kernel (%v)", err)
			}
			got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
			mag := frReference(t, n, []tensor.Tensor{frAbs(ins[0])}).F32()
			scale := make([]float64, len(mag))
			for i, m := range mag {
				scale[i] = 1e-6 * float64(m)
			}
			frClose(t, fmt.Sprint(k.Name, s), got, want, scale, frTol(t, n.Op), 0)
		}
	}
}

func TestFastTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	cases := []struct {
		dt    tensor.DType
		shape []int
		perm  []int
	}{
		{tensor.F32, []int{67, 131}, []int{1, 0}},
		{tensor.F32, []int{2, 16, 12, 64}, []int{0, 2, 1, 3}},
		{tensor.I32, []int{3, 9, 5, 2}, []int{0, 2, 1, 3}},
		{tensor.F32, []int{5, 1, 7, 3}, []int{3, 2, 1, 0}},
		{tensor.I32, []int{130, 9}, []int{1, 0}},
	}
	for _, k := range asm.RowVariants() {
		for _, c := range cases {
			g := graph.New()
			in := g.Input("x", c.dt, c.shape...)
			n := g.Transpose(in, c.perm...)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			v := frRand(r, in.Shape.NumElements(), 1e6)
			ins := []tensor.Tensor{frTensor(c.dt, in.Shape, v)}
			if c.dt == tensor.F32 && len(v) > 3 { // NaN payloads move untouched
				ins[0].F32()[1] = math.Float32frombits(0x7fa00001)
				ins[0].F32()[2] = math.Float32frombits(0xffc12345)
			}
			kern, err := prepareTransposeFast(n, frEnv(3), k)
			if err != nil || kern == nil {
				t.Fatalf("no fast kernel (%v)", err)
			}
			got, want := frOut(t, n, kern, ins), frReference(t, n, ins)
			if !slices.Equal(got.Data, want.Data) {
				t.Fatalf("%s %v %v perm %v: bytes differ from the reference", k.Name, c.dt, c.shape, c.perm)
			}
		}
	}
	g := graph.New()
	n := g.Transpose(g.Input("h", tensor.F16, 4, 6), 1, 0)
	if k, err := prepareTransposeFast(n, Serial, asm.BestRows()); k != nil || err != nil {
		t.Errorf("F16 transpose: fast kernel %v, %v; want the reference", k != nil, err)
	}
}

// TestFastRowsNoAllocs: prepared fast kernels run without allocating.
func TestFastRowsNoAllocs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 8, 40)
	nodes := []*graph.Node{
		g.Softmax(x, 1), g.LogSoftmax(x, 1), g.LayerNorm(x, nil, nil, 1, 1e-5), g.RMSNorm(x, nil, 1, 1e-5),
		g.ReduceSum(x, false, 1), g.ReduceMax(x, false, 0), g.Transpose(x, 1, 0),
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	ins := []tensor.Tensor{frTensor(tensor.F32, x.Shape, frRand(rand.New(rand.NewPCG(7, 7)), 320, 1))}
	for _, n := range nodes {
		k, variant, err := PrepareFast(n, Serial)
		if err != nil || variant == "reference" {
			t.Fatalf("%v: %q, %v", n, variant, err)
		}
		out := tensor.New(n.DType, n.Shape...)
		if a := testing.AllocsPerRun(5, func() {
			if err := k(ins, out); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v: %v allocations per run", n, a)
		}
		if err := k(ins, tensor.New(n.DType, 3)); err == nil {
			t.Errorf("%v: a wrong-sized output was accepted", n)
		}
	}
}
