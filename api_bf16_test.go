package kiln_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// bf16Product is a graph whose output is alpha·x·w (+ terms that do not
// depend on w's precision), with x [m×k] and the weight w [k×n].
type bf16Product struct {
	name    string
	m, k, n int
	alpha   float64
	build   func(g *graph.Graph, x, w *graph.Node) *graph.Node
	transB  bool  // w is stored [n×k]
	xShape  []int // x's shape when not [m×k]
}

// TestBF16WeightsEndToEnd compiles products whose weight is set with
// SetParamTyped(…, BF16) and compares them with the same graph run on the
// same (widened) weights set as F32: within the BF16 bound of
// ops/asm/gemm_bf16.go, Σ|x||w|·(2⁻⁸ + (K+4)·2⁻²⁴), plus float32 slack for
// the terms around the product. Where the CPU has AVX512_BF16 (and
// KILN_BF16 is not off) the BF16 run must differ from the F32 one (the
// bf16 path ran); elsewhere it must give the same bits. Setting the
// weight as F32 again, and as BF16 again, switches back and forth.
func TestBF16WeightsEndToEnd(t *testing.T) {
	cases := []bf16Product{
		{name: "matmul", m: 37, k: 100, n: 50, alpha: 1},
		{name: "matmul_odd_k", m: 13, k: 33, n: 17, alpha: 1},
		{name: "decode", m: 1, k: 384, n: 64, alpha: 1},
		{name: "batched", m: 10, k: 40, n: 33, alpha: 1, xShape: []int{2, 5, 40}},
		{name: "bias_relu", m: 24, k: 64, n: 48, alpha: 1, build: func(g *graph.Graph, x, w *graph.Node) *graph.Node {
			b := g.Input("b", tensor.F32, 48)
			return g.Relu(g.Add(g.MatMul(x, w), b))
		}},
		{name: "gemm_transB", m: 20, k: 70, n: 30, alpha: 0.5, transB: true, build: func(g *graph.Graph, x, w *graph.Node) *graph.Node {
			c := g.Input("c", tensor.F32, 30)
			return g.Gemm(x, w, c, 0.5, 2, false, true)
		}},
		{name: "large_k", m: 5, k: 1100, n: 20, alpha: 1},
	}
	bf16Expected := asm.BestGemmBF16() != nil && os.Getenv("KILN_BF16") != "off"
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(ci), 99))
			g := graph.New()
			xs := c.xShape
			if xs == nil {
				xs = []int{c.m, c.k}
			}
			x := g.Input("x", tensor.F32, xs...)
			ws := []int{c.k, c.n}
			if c.transB {
				ws = []int{c.n, c.k}
			}
			w := g.Param("w", tensor.F32, ws...)
			var out *graph.Node
			if c.build != nil {
				out = c.build(g, x, w)
			} else {
				out = g.MatMul(x, w)
			}
			g.Output(out)
			cg, err := kiln.NewSession(kiln.CPU).Compile(g)
			if err != nil {
				t.Fatal(err)
			}
			defer cg.Close()

			wBits := make([]uint16, c.k*c.n)
			wVals := make([]float32, len(wBits))
			for i := range wBits {
				wBits[i] = tensor.F32ToBF16(float32(r.NormFloat64() * 0.2))
				wVals[i] = tensor.BF16ToF32(wBits[i])
			}
			feeds := map[string][]float32{}
			for _, in := range cg.Inputs() {
				v := make([]float32, in.Shape.NumElements())
				for i := range v {
					v[i] = float32(2*r.Float64() - 1)
				}
				feeds[in.Name] = v
			}
			run := func() []float32 {
				t.Helper()
				var ins []kiln.Input
				for name, v := range feeds {
					ins = append(ins, kiln.In(name, v))
				}
				outs, err := cg.Run(ins...)
				if err != nil {
					t.Fatal(err)
				}
				return outs[0]
			}
			if err := cg.SetParamTyped("w", tensor.Bytes(wBits), tensor.BF16); err != nil {
				t.Fatal(err)
			}
			got16 := run()
			if err := cg.SetParam("w", wVals); err != nil {
				t.Fatal(err)
			}
			got32 := run()
			if err := cg.SetParamTyped("w", tensor.Bytes(wBits), tensor.BF16); err != nil {
				t.Fatal(err)
			}
			again := run()

			// mag[i,j] = |alpha|·Σ_p |x_ip|·|w_pj| over the product's rows.
			xv := feeds["x"]
			rows := len(xv) / c.k
			differ := 0
			for i := range rows {
				for j := range c.n {
					var mag float64
					for p := range c.k {
						wv := wVals[p*c.n+j]
						if c.transB {
							wv = wVals[j*c.k+p]
						}
						mag += math.Abs(float64(xv[i*c.k+p]) * float64(wv))
					}
					mag *= math.Abs(c.alpha)
					at := i*c.n + j
					a, b := float64(got16[at]), float64(got32[at])
					tol := mag*(0x1p-8+float64(2*c.k+8)*0x1p-24) + 0x1p-20*math.Abs(b) + 0x1p-120
					if math.IsNaN(a) != math.IsNaN(b) || !(math.IsNaN(a) || math.Abs(a-b) <= tol) {
						t.Fatalf("out[%d,%d]: bf16 weights %v, f32 weights %v (diff %.3g, bound %.3g)", i, j, a, b, math.Abs(a-b), tol)
					}
					if math.Float32bits(got16[at]) != math.Float32bits(got32[at]) {
						differ++
					}
					if math.Float32bits(again[at]) != math.Float32bits(got16[at]) {
						t.Fatalf("out[%d,%d]: BF16 weights set again give %v, first time %v", i, j, again[at], got16[at])
					}
				}
			}
			switch {
			case bf16Expected && differ == 0:
				t.Errorf("AVX512_BF16 here but the BF16 weights gave the F32 bits: the bf16 path did not run")
			case !bf16Expected && differ != 0:
				t.Errorf("%d outputs differ from the F32 run where no bf16 path may run", differ)
			}
			t.Logf("%s: %d of %d outputs differ from the F32 run (bf16 path expected: %v)", fmt.Sprint(xs), differ, len(got16), bf16Expected)
		})
	}
}

// TestBF16WeightsOff: with KILN_BF16=off, weights set as BF16 give exactly
// the F32 results.
func TestBF16WeightsOff(t *testing.T) {
	t.Setenv("KILN_BF16", "off")
	g := graph.New()
	x := g.Input("x", tensor.F32, 12, 64)
	w := g.Param("w", tensor.F32, 64, 40)
	g.Output(g.MatMul(x, w))
	r := rand.New(rand.NewPCG(5, 6))
	bits := make([]uint16, 64*40)
	vals := make([]float32, len(bits))
	for i := range bits {
		bits[i] = tensor.F32ToBF16(float32(r.NormFloat64()))
		vals[i] = tensor.BF16ToF32(bits[i])
	}
	xv := make([]float32, 12*64)
	for i := range xv {
		xv[i] = float32(r.NormFloat64())
	}
	var outs [2][]float32
	for i, set := range []func(cg *kiln.CompiledGraph) error{
		func(cg *kiln.CompiledGraph) error { return cg.SetParamTyped("w", tensor.Bytes(bits), tensor.BF16) },
		func(cg *kiln.CompiledGraph) error { return cg.SetParam("w", vals) },
	} {
		cg, err := kiln.NewSession(kiln.CPU).Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := set(cg); err != nil {
			t.Fatal(err)
		}
		o, err := cg.Run(kiln.In("x", xv))
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = o[0]
		cg.Close()
	}
	for i := range outs[0] {
		if math.Float32bits(outs[0][i]) != math.Float32bits(outs[1][i]) {
			t.Fatalf("out[%d]: %v with BF16 weights and KILN_BF16=off, %v with F32", i, outs[0][i], outs[1][i])
		}
	}
}
