package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// Helpers shared by the compute-op tests (linalg, norm, conv, attention),
// prefixed hc ("hand-computed").

// hcDTypes are the native dtypes every hand-computed case runs in.
var hcDTypes = []tensor.DType{tensor.F32, tensor.F64}

// hcTol is the relative tolerance of a hand-computed float64 expectation
// against a kernel result stored in dt.
func hcTol(dt tensor.DType) float64 {
	if dt == tensor.F64 {
		return 1e-12
	}
	return 1e-6
}

// hcT makes a dt tensor holding v (rounded to dt) or fails the test.
func hcT(t testing.TB, dt tensor.DType, s tensor.Shape, v ...float64) tensor.Tensor {
	t.Helper()
	x, err := tensor.FromFloat64s(dt, s, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// hcRun prepares n's reference kernel and runs it on ins with an output
// poisoned with NaN, so every element the kernel forgets shows. It checks
// that the inputs come back unchanged and returns the result in float64.
func hcRun(t testing.TB, n *graph.Node, ins ...tensor.Tensor) []float64 {
	t.Helper()
	if !n.Valid() {
		t.Fatalf("invalid node")
	}
	k, err := PrepareReference(n)
	if err != nil {
		t.Fatalf("prepare %v: %v", n, err)
	}
	before := make([][]byte, len(ins))
	for i, in := range ins {
		before[i] = slices.Clone(in.Data)
	}
	out, err := tensor.Make(n.DType, n.Shape)
	if err != nil {
		t.Fatal(err)
	}
	for i := range out.Data {
		out.Data[i] = 0xff // NaN in every float dtype
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

// hcClose checks got against want elementwise: |got-want| <= tol·max(1,
// |want|), NaN only where NaN is wanted, infinities exactly.
func hcClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				t.Fatalf("%s[%d] = %v, want %v\ngot  %v\nwant %v", what, i, g, w, got, want)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				t.Fatalf("%s[%d] = %v, want %v", what, i, g, w)
			}
		case approx.Far(g, w, tol*max(1, math.Abs(w))):
			t.Fatalf("%s[%d] = %v, want %v (tol %g)\ngot  %v\nwant %v", what, i, g, w, tol, got, want)
		}
	}
}

// hcRand fills n values uniformly in [-1, 1).
func hcRand(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*r.Float64() - 1
	}
	return v
}

// hcNoAllocs checks that n's prepared kernel runs without allocating.
func hcNoAllocs(t *testing.T, n *graph.Node, ins ...tensor.Tensor) {
	t.Helper()
	k, err := PrepareReference(n)
	if err != nil {
		t.Fatalf("prepare %v: %v", n, err)
	}
	out := tensor.New(n.DType, n.Shape...)
	if a := testing.AllocsPerRun(5, func() {
		if err := k(ins, out); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v: %v allocations per run", n, a)
	}
}

func TestComputeEntries(t *testing.T) {
	tols := map[graph.Op]float64{
		graph.OpMatMul: 1e-5, graph.OpGemm: 1e-5, graph.OpLayerNorm: 1e-5, graph.OpRMSNorm: 1e-5,
		graph.OpBatchNorm: 1e-5, graph.OpConv2D: 1e-5, graph.OpMaxPool2D: 0, graph.OpAvgPool2D: 1e-6,
		graph.OpGlobalAvgPool: 1e-5, graph.OpAttention: 1e-5, graph.OpRoPE: 1e-6,
	}
	for op, tol := range tols {
		e, err := Lookup(op)
		if err != nil {
			t.Fatal(err)
		}
		if e.InPlace || e.Tol != tol || !slices.Equal(e.DTypes, []tensor.DType{tensor.F32, tensor.F64}) {
			t.Errorf("%v: entry %+v", op, *e)
		}
		if !e.Supports(tensor.F16) || !e.Supports(tensor.BF16) || e.Supports(tensor.I32) {
			t.Errorf("%v: wrong widening support", op)
		}
	}
}

func TestMatMulCases(t *testing.T) {
	// A = [[1 2 3] [4 5 6]], B = [[7 8] [9 10] [11 12]]: A·B = [[58 64] [139 154]].
	aV := []float64{1, 2, 3, 4, 5, 6}
	bV := []float64{7, 8, 9, 10, 11, 12}
	// Batched B[j] = [[j j+1] [j+2 j+3]] for j = 0, 1, 2.
	var bb []float64
	for j := range 3 {
		f := float64(j)
		bb = append(bb, f, f+1, f+2, f+3)
	}
	iota12 := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	cases := []struct {
		name       string
		as, bs     tensor.Shape
		a, b       []float64
		out        tensor.Shape
		want       []float64
		wantShapes bool
	}{
		{"2x3·3x2", tensor.Shape{2, 3}, tensor.Shape{3, 2}, aV, bV, tensor.Shape{2, 2}, []float64{58, 64, 139, 154}, true},
		{"vec·mat", tensor.Shape{3}, tensor.Shape{3, 2}, []float64{1, 2, 3}, bV, tensor.Shape{2}, []float64{58, 64}, true},
		{"mat·vec", tensor.Shape{2, 3}, tensor.Shape{3}, aV, []float64{1, 0, -1}, tensor.Shape{2}, []float64{-2, -2}, true},
		{"vec·vec", tensor.Shape{3}, tensor.Shape{3}, []float64{1, 2, 3}, []float64{4, 5, 6}, tensor.Shape{}, []float64{32}, true},
		// A[0] = I, A[1] swaps rows: out[0, j] = B[j], out[1, j] = B[j] with rows swapped.
		{"broadcast batch", tensor.Shape{2, 1, 2, 2}, tensor.Shape{3, 2, 2}, []float64{1, 0, 0, 1, 0, 1, 1, 0}, bb,
			tensor.Shape{2, 3, 2, 2}, []float64{
				0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5,
				2, 3, 0, 1, 3, 4, 1, 2, 4, 5, 2, 3}, true},
		// Row sums of 1..12 viewed as [2 2 3].
		{"batched·vec", tensor.Shape{2, 2, 3}, tensor.Shape{3}, iota12, []float64{1, 1, 1}, tensor.Shape{2, 2}, []float64{6, 15, 24, 33}, true},
		// [1 10]·B[j] = [j + 10(j+2), j+1 + 10(j+3)].
		{"vec·batched", tensor.Shape{2}, tensor.Shape{3, 2, 2}, []float64{1, 10}, bb, tensor.Shape{3, 2},
			[]float64{20, 31, 31, 42, 42, 53}, true},
		{"empty K", tensor.Shape{2, 0}, tensor.Shape{0, 3}, nil, nil, tensor.Shape{2, 3}, []float64{0, 0, 0, 0, 0, 0}, true},
		{"empty batch", tensor.Shape{0, 2, 2}, tensor.Shape{2, 2}, nil, []float64{1, 2, 3, 4}, tensor.Shape{0, 2, 2}, nil, true},
	}
	for _, dt := range hcDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				n := g.MatMul(g.Input("a", dt, c.as...), g.Input("b", dt, c.bs...))
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				if !n.Shape.Equal(c.out) {
					t.Fatalf("shape %v, want %v", n.Shape, c.out)
				}
				got := hcRun(t, n, hcT(t, dt, c.as, c.a...), hcT(t, dt, c.bs, c.b...))
				hcClose(t, "matmul", got, c.want, hcTol(dt))
			})
		}
	}
}

func TestGemmCases(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5, 6}     // [2 3]
	aT := []float64{1, 4, 2, 5, 3, 6}    // its transpose, [3 2]
	b := []float64{7, 8, 9, 10, 11, 12}  // [3 2]
	bT := []float64{7, 9, 11, 8, 10, 12} // its transpose, [2 3]
	ab := []float64{58, 64, 139, 154}    // A·B
	plus := func(s float64, v []float64, w ...float64) []float64 {
		out := make([]float64, len(v))
		for i := range v {
			out[i] = s*v[i] + w[i%len(w)]
		}
		return out
	}
	cases := []struct {
		name           string
		transA, transB bool
		alpha, beta    float32
		cs             tensor.Shape // nil: no C
		c              []float64
		want           []float64
	}{
		{"plain", false, false, 1, 0, nil, nil, ab},
		{"alpha beta full C", false, false, 2, 0.5, tensor.Shape{2, 2}, []float64{1, 2, 3, 4},
			[]float64{116.5, 129, 279.5, 310}},
		{"transA", true, false, 1, 1, nil, nil, ab},
		{"transB", false, true, 1, 1, nil, nil, ab},
		{"both", true, true, -1, 1, nil, nil, plus(-1, ab, 0)},
		{"C row [N]", false, false, 1, 1, tensor.Shape{2}, []float64{10, 20}, []float64{68, 84, 149, 174}},
		{"C row [1 N]", false, false, 1, 3, tensor.Shape{1, 2}, []float64{1, 2}, []float64{61, 70, 142, 160}},
		{"C column [M 1]", false, false, 1, 1, tensor.Shape{2, 1}, []float64{10, 20}, []float64{68, 74, 159, 174}},
		{"C scalar", true, true, 1, 2, tensor.Shape{}, []float64{5}, plus(1, ab, 10)},
		{"alpha 0", false, false, 0, 2, tensor.Shape{2, 2}, []float64{1, 2, 3, 4}, []float64{2, 4, 6, 8}},
	}
	for _, dt := range hcDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				as, av := tensor.Shape{2, 3}, a
				if c.transA {
					as, av = tensor.Shape{3, 2}, aT
				}
				bs, bv := tensor.Shape{3, 2}, b
				if c.transB {
					bs, bv = tensor.Shape{2, 3}, bT
				}
				ins := []tensor.Tensor{hcT(t, dt, as, av...), hcT(t, dt, bs, bv...)}
				var cn *graph.Node
				if c.cs != nil {
					cn = g.Input("c", dt, c.cs...)
					ins = append(ins, hcT(t, dt, c.cs, c.c...))
				}
				n := g.Gemm(g.Input("a", dt, as...), g.Input("b", dt, bs...), cn, c.alpha, c.beta, c.transA, c.transB)
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				hcClose(t, "gemm", hcRun(t, n, ins...), c.want, hcTol(dt))
			})
		}
	}
}

// TestMatMulRandom checks batched, broadcast MatMul against one 2-D
// Gemm per batch index (strided rather than offset arithmetic), and Gemm's
// transposes against MatMul of explicitly transposed data.
func TestMatMulRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	transpose := func(v []float64, rows, cols int) []float64 {
		out := make([]float64, len(v))
		for i := range rows {
			for j := range cols {
				out[j*rows+i] = v[i*cols+j]
			}
		}
		return out
	}
	for iter := range 30 {
		m, k, n := 1+r.IntN(5), r.IntN(6), 1+r.IntN(5)
		// Batch dims [2 3] for A, [3] or [2 1] for B.
		aB, bB := tensor.Shape{2, 3}, tensor.Shape{3}
		if iter%2 == 1 {
			aB, bB = tensor.Shape{1, 3}, tensor.Shape{2, 1}
		}
		as, bs := append(aB.Clone(), m, k), append(bB.Clone(), k, n)
		av, bv := hcRand(r, as.NumElements()), hcRand(r, bs.NumElements())
		for _, dt := range hcDTypes {
			g := graph.New()
			mm := g.MatMul(g.Input("a", dt, as...), g.Input("b", dt, bs...))
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			got := hcRun(t, mm, hcT(t, dt, as, av...), hcT(t, dt, bs, bv...))
			// Expected: batch [2 3]; A index (i0 mod aB0, i1 mod aB1), B likewise right-aligned.
			var want []float64
			for i0 := range 2 {
				for i1 := range 3 {
					ai := (i0%aB[0])*aB[1] + i1%aB[1]
					bi := i1 % bB[len(bB)-1]
					if len(bB) == 2 {
						bi = (i0%bB[0])*bB[1] + i1%bB[1]
					}
					am, bm := av[ai*m*k:][:m*k], bv[bi*k*n:][:k*n]
					ta, tb := transpose(am, m, k), transpose(bm, k, n)
					gg := graph.New()
					gm := gg.Gemm(gg.Input("a", dt, k, m), gg.Input("b", dt, n, k), nil, 1, 0, true, true)
					want = append(want, hcRun(t, gm, hcT(t, dt, tensor.Shape{k, m}, ta...), hcT(t, dt, tensor.Shape{n, k}, tb...))...)
				}
			}
			hcClose(t, "batched matmul vs gemm", got, want, hcTol(dt))
		}
	}
}

func TestMatMulWidened(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		g := graph.New()
		n := g.MatMul(g.Input("a", dt, 2, 3), g.Input("b", dt, 3, 2))
		got := hcRun(t, n, hcT(t, dt, tensor.Shape{2, 3}, 1, 2, 3, 4, 5, 6), hcT(t, dt, tensor.Shape{3, 2}, 7, 8, 9, 10, 11, 12))
		// 58, 64, 139 and 154 fit in bf16's 8 significant bits, so both formats are exact.
		hcClose(t, dt.String(), got, []float64{58, 64, 139, 154}, 0)
	}
}

func TestLinalgNoAllocs(t *testing.T) {
	g := graph.New()
	a, b := g.Input("a", tensor.F32, 2, 1, 3, 4), g.Input("b", tensor.F32, 3, 4, 5)
	c := g.Input("c", tensor.F32, 5)
	hcNoAllocs(t, g.MatMul(a, b), tensor.New(tensor.F32, 2, 1, 3, 4), tensor.New(tensor.F32, 3, 4, 5))
	a2, b2 := g.Input("a2", tensor.F64, 4, 3), g.Input("b2", tensor.F64, 5, 4)
	hcNoAllocs(t, g.Gemm(a2, b2, nil, 1, 0, true, true), tensor.New(tensor.F64, 4, 3), tensor.New(tensor.F64, 5, 4))
	a3, b3 := g.Input("a3", tensor.F32, 3, 4), g.Input("b3", tensor.F32, 4, 5)
	hcNoAllocs(t, g.Gemm(a3, b3, c, 1, 1, false, false), tensor.New(tensor.F32, 3, 4), tensor.New(tensor.F32, 4, 5), tensor.New(tensor.F32, 5))
}

// TestComputeBadBuffers checks that wrong buffers and malformed nodes are
// errors, not panics.
func TestComputeBadBuffers(t *testing.T) {
	g := graph.New()
	n := g.MatMul(g.Input("a", tensor.F32, 2, 3), g.Input("b", tensor.F32, 3, 2))
	k, err := PrepareReference(n)
	if err != nil {
		t.Fatal(err)
	}
	a, b, out := tensor.New(tensor.F32, 2, 3), tensor.New(tensor.F32, 3, 2), tensor.New(tensor.F32, 2, 2)
	for name, call := range map[string]func() error{
		"short input":   func() error { return k([]tensor.Tensor{a, tensor.New(tensor.F32, 5)}, out) },
		"short result":  func() error { return k([]tensor.Tensor{a, b}, tensor.New(tensor.F32, 3)) },
		"wrong dtype":   func() error { return k([]tensor.Tensor{a, tensor.New(tensor.F64, 3, 2)}, out) },
		"missing input": func() error { return k([]tensor.Tensor{a}, out) },
	} {
		if call() == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if err := k([]tensor.Tensor{a, b}, out); err != nil {
		t.Errorf("good buffers refused: %v", err)
	}
	// Nodes whose shape or attributes disagree are refused at prepare.
	x := g.Input("x", tensor.F32, 1, 2, 5, 5)
	w := g.Input("w", tensor.F32, 4, 2, 3, 3)
	mutate := map[string]func(*graph.Node){
		"matmul shape": func(m *graph.Node) { m.Shape = tensor.Shape{2, 3} },
		"conv strides": func(m *graph.Node) { m.Attrs.Strides = nil },
		"conv groups":  func(m *graph.Node) { m.Attrs.Groups = 3 },
		"conv pads":    func(m *graph.Node) { m.Attrs.Pads = []int{1, 1, 1, 1} },
		"pool kernel":  func(m *graph.Node) { m.Attrs.Kernel = []int{0, 2} },
		"norm axis":    func(m *graph.Node) { m.Attrs.Axis = 4 },
		"rope shape":   func(m *graph.Node) { m.Shape = tensor.Shape{2, 5} },
		"attn dtype":   func(m *graph.Node) { m.DType = tensor.F64 },
	}
	cs := g.Input("cs", tensor.F32, 5, 1)
	base := map[string]*graph.Node{
		"matmul shape": n,
		"conv strides": g.Conv2D(x, w, nil, graph.ConvOpts{}),
		"conv groups":  g.Conv2D(x, w, nil, graph.ConvOpts{}),
		"conv pads":    g.Conv2D(x, w, nil, graph.ConvOpts{}),
		"pool kernel":  g.MaxPool2D(x, graph.PoolOpts{Kernel: []int{2, 2}}),
		"norm axis":    g.LayerNorm(x, nil, nil, 1, 0),
		"rope shape":   g.RoPE(g.Input("r", tensor.F32, 5, 2), cs, cs, false),
		"attn dtype":   g.Attention(x, x, x, nil, graph.AttentionOpts{}),
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for name, f := range mutate {
		bad := *base[name]
		f(&bad)
		if _, err := PrepareReference(&bad); err == nil {
			t.Errorf("%s: malformed node prepared", name)
		}
		if _, err := PrepareReference(base[name]); err != nil {
			t.Errorf("%s: good node refused: %v", name, err)
		}
	}
}

// TestGemmLargeAlphaFast: the fast Gemm scales the finished sums by alpha,
// as the reference (and ONNX) does, so alpha = 1e38 over small products
// is finite where alpha·A alone overflows (it gave ±Inf, and NaN where
// two infinities met).
func TestGemmLargeAlphaFast(t *testing.T) {
	g := graph.New()
	a, b := g.Input("a", tensor.F32, 2, 3), g.Input("b", tensor.F32, 3, 2)
	n := g.Gemm(a, b, nil, 1e38, 1, false, false)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	feeds := map[string]tensor.Tensor{
		"a": hcT(t, tensor.F32, tensor.Shape{2, 3}, 10, -10, 8, 9, 10, -7),
		"b": hcT(t, tensor.F32, tensor.Shape{3, 2}, 1e-3, 2e-3, -1e-3, 3e-3, 2e-3, -2e-3),
	}
	want := []float64{0.036e38, -0.026e38, -0.015e38, 0.062e38} // a·b·1e38, all finite
	hcClose(t, "reference", hcRun(t, n, feeds["a"], feeds["b"]), want, 1e-6)
	checkFast(t, n, feeds, 1e-6)
}

// TestMatMulEmptyFast: products with a zero-size dim, batched and
// broadcast, give the reference's (empty or all-zero) result on the fast
// path too; a[2,1,3,4] × b[3,4,0] failed with "A has 24 elements, needs 72"
// (B's zero size made its batch offsets all 0, read as one shared B).
func TestMatMulEmptyFast(t *testing.T) {
	for _, c := range [][2]tensor.Shape{
		{{2, 1, 3, 4}, {3, 4, 0}}, {{2, 0, 4}, {4, 5}}, {{2, 3, 0}, {0, 5}}, {{0, 3, 4}, {4, 5}},
		{{2, 1, 3, 0}, {3, 0, 5}}, {{2, 1, 3, 4}, {0, 4, 5}}, {{3, 4}, {2, 4, 5}},
	} {
		g := graph.New()
		a, b := g.Input("a", tensor.F32, c[0]...), g.Input("b", tensor.F32, c[1]...)
		n := g.MatMul(a, b)
		if err := g.Err(); err != nil {
			t.Fatalf("%v × %v: %v", c[0], c[1], err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		feeds := map[string]tensor.Tensor{
			"a": hcT(t, tensor.F32, c[0], hcRand(r, c[0].NumElements())...),
			"b": hcT(t, tensor.F32, c[1], hcRand(r, c[1].NumElements())...),
		}
		checkFast(t, n, feeds, 1e-5)
	}
}
