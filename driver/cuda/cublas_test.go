package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// rowMajorGemm evaluates a descriptor directly from its strides:
// out[b][m][n] = alpha · Σk A(b, m, k) · B(b, k, n), out contiguous.
func rowMajorGemm(g *kdesc.Gemm, a, b []float64) []float64 {
	nb := 1
	for _, d := range g.Batch {
		nb *= d
	}
	out := make([]float64, nb*g.M*g.N)
	for bi := range nb {
		aOff, bOff, rest := 0, 0, bi
		for d := len(g.Batch) - 1; d >= 0; d-- {
			i := rest % g.Batch[d]
			rest /= g.Batch[d]
			aOff += i * g.ABatch[d]
			bOff += i * g.BBatch[d]
		}
		for m := range g.M {
			for n := range g.N {
				s := 0.0
				for k := range g.K {
					s += a[aOff+m*g.ASm+k*g.ASk] * b[bOff+k*g.BSk+n*g.BSn]
				}
				out[(bi*g.M+m)*g.N+n] = float64(g.Alpha) * s
			}
		}
	}
	return out
}

// colMajorGemm is cublasGemmStridedBatched's definition, reading only
// the mapped arguments: C = alpha · op(A) · op(B), column-major, with
// cuBLAS's A and B being kiln's b and a.
func colMajorGemm(x gemmArgs, A, B []float64) []float64 {
	at := func(p []float64, op, ld, r, c int) float64 {
		if op == blasOpT {
			return p[c+r*ld]
		}
		return p[r+c*ld]
	}
	C := make([]float64, x.batch*x.strideC)
	for bi := range x.batch {
		for i := range x.m {
			for j := range x.n {
				s := 0.0
				for k := range x.k {
					s += at(A[bi*x.strideA:], x.transA, x.lda, i, k) * at(B[bi*x.strideB:], x.transB, x.ldb, k, j)
				}
				C[bi*x.strideC+i+j*x.ldc] = float64(x.alpha) * s
			}
		}
	}
	return C
}

func gemmCases(t *testing.T) map[string]*kdesc.Gemm {
	t.Helper()
	cases := map[string]*kdesc.Gemm{}
	node := func(name string, build func(g *graph.Graph) *graph.Node) {
		g := graph.New()
		n := build(g)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		d, err := kdesc.GemmOf(name, n)
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = d
	}
	in := func(g *graph.Graph, name string, dims ...int) *graph.Node { return g.Input(name, tensor.F32, dims...) }
	node("2d", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 5, 7), in(g, "b", 7, 3)) })
	node("batched", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 2, 3, 4, 6), in(g, "b", 2, 3, 6, 5)) })
	node("broadcast-b", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 3, 4, 6), in(g, "b", 6, 5)) })
	node("broadcast-a", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 4, 6), in(g, "b", 3, 6, 5)) })
	node("vec-mat", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 6), in(g, "b", 6, 5)) })
	node("mat-vec", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 4, 6), in(g, "b", 6)) })
	node("gemm-tt", func(g *graph.Graph) *graph.Node {
		return g.Gemm(in(g, "a", 6, 4), in(g, "b", 5, 6), nil, 0.5, 0, true, true)
	})
	node("gemm-nt", func(g *graph.Graph) *graph.Node {
		return g.Gemm(in(g, "a", 4, 6), in(g, "b", 5, 6), nil, -2, 0, false, true)
	})
	node("k1", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 4, 1), in(g, "b", 1, 5)) })
	node("m1-n1", func(g *graph.Graph) *graph.Node { return g.MatMul(in(g, "a", 1, 6), in(g, "b", 6, 1)) })
	// A FusedMatMul reading transposed operands in place, by hand.
	cases["fused-trans"] = &kdesc.Gemm{A: tensor.F32, B: tensor.F32, Out: tensor.F32, M: 4, N: 5, K: 6, Alpha: 1,
		ASm: 1, ASk: 4, BSk: 1, BSn: 6, Batch: []int{2}, ABatch: []int{24}, BBatch: []int{30}}
	return cases
}

// TestBlasGemmMapping checks the row-major → column-major argument
// mapping: cuBLAS's definition evaluated on the mapped arguments gives
// the descriptor's row-major result.
func TestBlasGemmMapping(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for name, g := range gemmCases(t) {
		t.Run(name, func(t *testing.T) {
			x, ok := blasGemm(g)
			if !ok {
				t.Fatalf("cuBLAS refused %+v", g)
			}
			if x.ldc != g.N || x.m != g.N || x.n != g.M {
				t.Errorf("result layout m=%d n=%d ldc=%d for M=%d N=%d", x.m, x.n, x.ldc, g.M, g.N)
			}
			// Operands big enough for every stride; the unread tail stays random.
			a := make([]float64, 512)
			b := make([]float64, 512)
			for i := range a {
				a[i], b[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			want := rowMajorGemm(g, a, b)
			got := colMajorGemm(x, b, a)
			if len(got) != len(want) {
				t.Fatalf("%d results, want %d", len(got), len(want))
			}
			for i := range want {
				if approx.Far(got[i], want[i], 1e-12*(1+math.Abs(want[i]))) {
					t.Fatalf("[%d] = %g, want %g (args %+v)", i, got[i], want[i], x)
				}
			}
		})
	}
}

func TestBlasGemmRefuses(t *testing.T) {
	base := func() *kdesc.Gemm {
		return &kdesc.Gemm{A: tensor.F32, B: tensor.F32, Out: tensor.F32, M: 4, N: 5, K: 6, Alpha: 1, ASm: 6, ASk: 1, BSk: 5, BSn: 1}
	}
	refuse := map[string]func(g *kdesc.Gemm){
		"bias":            func(g *kdesc.Gemm) { g.HasC, g.CType, g.Beta, g.CSn = true, tensor.F32, 1, 1 },
		"activation":      func(g *kdesc.Gemm) { g.Act = graph.OpRelu },
		"residual":        func(g *kdesc.Gemm) { g.HasRes, g.ResType = true, tensor.F32 },
		"mixed dtypes":    func(g *kdesc.Gemm) { g.B = tensor.F16 },
		"f16 to bf16":     func(g *kdesc.Gemm) { g.A, g.B, g.Out = tensor.F16, tensor.F16, tensor.BF16 },
		"integer":         func(g *kdesc.Gemm) { g.A, g.B, g.Out = tensor.I32, tensor.I32, tensor.I32 },
		"k=0":             func(g *kdesc.Gemm) { g.K = 0 },
		"both strided":    func(g *kdesc.Gemm) { g.ASm, g.ASk = 12, 2 },
		"row broadcast":   func(g *kdesc.Gemm) { g.BSk = 0 },
		"nonlinear batch": func(g *kdesc.Gemm) { g.Batch, g.ABatch, g.BBatch = []int{2, 3}, []int{24, 0}, []int{0, 30} },
	}
	for name, f := range refuse {
		g := base()
		f(g)
		if x, ok := blasGemm(g); ok {
			t.Errorf("%s: mapped to %+v", name, x)
		}
	}
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		for _, out := range []tensor.DType{dt, tensor.F32} {
			g := base()
			g.A, g.B, g.Out = dt, dt, out
			x, ok := blasGemm(g)
			if !ok || x.typeA != blasType[dt] || x.typeB != blasType[dt] || x.typeC != blasType[out] {
				t.Errorf("%v→%v: %+v, %v", dt, out, x, ok)
			}
		}
	}
}

func TestFlatStride(t *testing.T) {
	for _, c := range []struct {
		dims, strides []int
		want          int
		ok            bool
	}{
		{nil, nil, 0, true},
		{[]int{2, 3}, []int{60, 20}, 20, true},
		{[]int{2, 3}, []int{0, 0}, 0, true},
		{[]int{2, 1, 3}, []int{30, 7, 10}, 10, true}, // extent-1 dims take any stride
		{[]int{2, 3}, []int{20, 0}, 0, false},
		{[]int{2, 3}, []int{0, 20}, 0, false},
		{[]int{2, 3}, []int{61, 20}, 0, false},
	} {
		got, ok := flatStride(c.dims, c.strides)
		if got != c.want || ok != c.ok {
			t.Errorf("flatStride(%v, %v) = %d, %v; want %d, %v", c.dims, c.strides, got, ok, c.want, c.ok)
		}
	}
}

// TestPlanBlas: of a compiled graph's steps, the plain matmul goes to
// cuBLAS and the one fused with bias and activation stays PTX.
func TestPlanBlas(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 8, 16)
	g.Output(g.MatMul(x, g.Param("w", tensor.F32, 16, 4)))
	g.Output(g.Relu(g.Add(g.MatMul(x, g.Param("v", tensor.F32, 16, 4)), g.Param("b", tensor.F32, 4))))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	lw, err := lowerGraph(cg.Graph(), cg.Plan())
	if err != nil {
		t.Fatal(err)
	}
	plans := planBlas(lw)
	var got []string
	for i, sp := range lw.steps {
		if sp.kernel != nil && (sp.node.Op == graph.OpMatMul || sp.node.Op == graph.OpFusedMatMul) {
			got = append(got, sp.node.Op.String()+map[bool]string{true: "/cublas", false: "/ptx"}[plans != nil && plans[i] != nil])
		}
	}
	slices.Sort(got)
	if want := []string{graph.OpFusedMatMul.String() + "/ptx", graph.OpMatMul.String() + "/cublas"}; !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
}

func TestBlasCandidates(t *testing.T) {
	if len(defaultLibs) == 0 {
		if blasCandidates("/x/libcublas.so") != nil {
			t.Error("an unsupported platform must not try KILN_CUBLAS_LIB")
		}
		return
	}
	if got := blasCandidates(" /opt/x/libcublas.so.12 "); !slices.Equal(got, []string{"/opt/x/libcublas.so.12"}) {
		t.Errorf("override: %v", got)
	}
	got := blasCandidates("")
	if len(got) < 3 || !strings.Contains(got[0], "13") || !strings.Contains(got[1], "12") || !strings.Contains(got[2], "11") {
		t.Errorf("defaults %v: want cuBLAS 13 first, then 12, then 11", got)
	}
}

func TestOpenBlasMissing(t *testing.T) {
	_, err := openBlas(blasCandidates("/nonexistent/libcublas.so.12"))
	if !errors.Is(err, ErrNoCublas) {
		t.Fatalf("want ErrNoCublas, got %v", err)
	}
	if len(defaultLibs) == 0 {
		return
	}
	for _, want := range []string{"/nonexistent/libcublas.so.12", "KILN_CUBLAS_LIB", "install cuBLAS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestBlasOff(t *testing.T) {
	t.Setenv("KILN_CUBLAS", " OFF ")
	_, err := CublasLibrary()
	if !errors.Is(err, ErrNoCublas) || !strings.Contains(err.Error(), "KILN_CUBLAS=off") {
		t.Errorf("KILN_CUBLAS=off: %v", err)
	}
}

func TestBlasStatus(t *testing.T) {
	var b blasLib
	if b.check("cublasCreate", resultSuccess) != nil {
		t.Error("success is an error")
	}
	err := b.check("cublasCreate", 1)
	var e *Error
	if !errors.As(err, &e) || e.Name != "CUBLAS_STATUS_NOT_INITIALIZED" || !strings.Contains(err.Error(), "KILN_CUBLAS=off") {
		t.Errorf("status 1: %v", err)
	}
	if err := b.check("cublasGemmStridedBatchedEx", 99); !strings.Contains(err.Error(), "cublasStatus(99)") {
		t.Errorf("unknown status: %v", err)
	}
}
