package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The tensor-core GEMM sweep runs EmitGemmMMA at small sizes against a
// float64 product of the same rounded F16/BF16 inputs: per tile and
// input type, a ragged product (scalar staging; tails in M, N and K), a
// 16-byte staged one whose padded rows end mid-chunk with transposed B
// and a bias, and transposed A over a broadcast batch; then every
// epilogue, and a one-row product.

var mmaSweepTiles = []ptx.MmaTile{ptx.MmaTileSmall, ptx.MmaTileRow, {BM: 16, BN: 16, BK: 16, WM: 16, WN: 16},
	{BM: 64, BN: 32, BK: 16, WM: 32, WN: 16}, {BM: 32, BN: 64, BK: 16, WM: 32, WN: 32}}

type mmaSweepCase struct {
	g    *ptx.Gemm
	tile ptx.MmaTile
}

func mmaCases() []mmaSweepCase {
	var cs []mmaSweepCase
	add := func(g *ptx.Gemm, t ptx.MmaTile) { cs = append(cs, mmaSweepCase{g, t}) }
	for ti, tile := range mmaSweepTiles {
		for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
			add(&ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 37, N: 29, K: 35,
				ASm: 35, ASk: 1, BSk: 29, BSn: 1, Alpha: 1}}, tile)
			add(&ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_bt_%d_%v", ti, dt), A: dt, B: dt, Out: tensor.F32, M: 33, N: 24, K: 37,
				ASm: 40, ASk: 1, BSk: 1, BSn: 40, Alpha: 0.5, HasC: true, CType: dt, Beta: 2, CSn: 1}}, tile)
			add(&ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_at_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 24, N: 20, K: 18,
				Batch: []int{2, 3}, ABatch: []int{3 * 24 * 18, 24 * 18}, BBatch: []int{0, 18 * 20},
				ASm: 1, ASk: 24, BSk: 20, BSn: 1, Alpha: 1}}, tile)
		}
	}
	for _, act := range append([]graph.Op{graph.OpInvalid}, graph.EpilogueActs...) {
		add(&ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_epi_%v", act), A: tensor.BF16, B: tensor.BF16, Out: tensor.BF16, M: 20, N: 24, K: 16,
			Batch: []int{3}, ABatch: []int{20 * 16}, BBatch: []int{0}, ASm: 16, ASk: 1, BSk: 24, BSn: 1, Alpha: 1,
			HasC: true, CType: tensor.F32, Beta: 1, CSn: 1, CBatch: []int{0}, Act: act, HasRes: true, ResType: tensor.BF16}},
			ptx.MmaTile{})
	}
	// A vector times a matrix (MatMul of a 1-D operand) on the large tile.
	add(&ptx.Gemm{Gemm: kdesc.Gemm{Name: "mma_row", A: tensor.F16, B: tensor.F16, Out: tensor.F16, M: 1, N: 40, K: 24,
		ASm: 0, ASk: 1, BSk: 40, BSn: 1, Alpha: 1}}, ptx.MmaTileLarge)
	return cs
}

// refGemm64 is alpha·A·B + beta·C summed in float64 from the dense
// operands (exact widenings of the rounded inputs), then the activation
// by the reference kernels in F32, then the residual.
func refGemm64(t testing.TB, g *ptx.Gemm, dense []tensor.Tensor) tensor.Tensor {
	M, N, K := g.M, g.N, g.K
	shape := append(append([]int(nil), g.Batch...), M, N)
	a, b := dense[0].Float64s(), dense[1].Float64s()
	next := 2
	var c, res []float64
	if g.HasC {
		c = dense[next].Float64s()
		next++
	}
	if g.HasRes {
		res = dense[next].Float64s()
	}
	y := make([]float64, tensor.Shape(shape).NumElements())
	for i := range y {
		bi, m, n := i/(M*N), i/N%M, i%N
		s := 0.0
		for k := range K {
			s += a[(bi*M+m)*K+k] * b[(bi*K+k)*N+n]
		}
		y[i] = float64(g.Alpha) * s
		if c != nil {
			y[i] += float64(g.Beta) * c[i]
		}
	}
	if g.Act != graph.OpInvalid {
		pre, err := tensor.FromFloat64s(tensor.F32, shape, y)
		if err != nil {
			t.Fatal(err)
		}
		gr := graph.New()
		gr.Output(gr.Apply(g.Act, graph.Attrs{}, gr.Input("y", tensor.F32, shape...)))
		y = interpret(t, gr, map[string]tensor.Tensor{"y": pre})[0].Float64s()
	}
	for i := range res {
		y[i] += res[i]
	}
	out, err := tensor.FromFloat64s(g.Out, shape, y)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mmaTol: f32 accumulation (one rounding per 16 steps of k in the
// emulator, wider inside the hardware) of terms up to 9 in magnitude,
// then the output type's rounding.
func mmaTol(g *ptx.Gemm) tol {
	tl := tolFor(g.Out)
	tl.abs = max(tl.abs, 4e-7*9*float64(g.K))
	tl.rel = max(tl.rel, 1e-5)
	return tl
}

func TestSweepGemmMMA(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range mmaCases() {
		g := c.g
		k, err := ptx.EmitGemmMMA(g, c.tile)
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		raw, dense := gemmOperands(r, g)
		got := sentinel(g.Out, append(append([]int(nil), g.Batch...), g.M, g.N)...)
		if err := runKernel(t, k, Options{}, got, raw...); err != nil {
			t.Errorf("%s: %v", g.Name, err)
			continue
		}
		compareTensors(t, g.Name, got, refGemm64(t, g, dense), mmaTol(g))
	}
}
