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

// The GEMM sweep mirrors gemmVariants of the ptx package at small sizes:
// every tile shape, each with a plain product with ragged edges, a
// transposed-operand product with a broadcast bias, and a broadcast
// batch; every epilogue activation with bias and residual; operands
// transposed as FusedMatMul stores them.

var gemmTiles = []ptx.GemmTile{ptx.DefaultTile, {BM: 32, BN: 32, BK: 8, TM: 2, TN: 2}, {BM: 128, BN: 128, BK: 8, TM: 8, TN: 8},
	{BM: 64, BN: 32, BK: 16, TM: 4, TN: 2}, {BM: 128, BN: 64, BK: 8, TM: 8, TN: 4}, {BM: 16, BN: 16, BK: 16, TM: 1, TN: 1},
	// 256 threads over 24-deep steps: A is staged element by element
	// (stageTile's general path), not at fixed strides.
	{BM: 32, BN: 32, BK: 24, TM: 2, TN: 2},
	// K split among groups of threads (gemm_ksplit.go), an odd count too.
	{BM: 32, BN: 32, BK: 16, TM: 4, TN: 4, KS: 4}, {BM: 64, BN: 64, BK: 16, TM: 4, TN: 4, KS: 2}, {BM: 16, BN: 16, BK: 8, TM: 2, TN: 2, KS: 3}}

func gemmCases() []*ptx.Gemm {
	var gs []*ptx.Gemm
	for ti, tile := range gemmTiles {
		for _, dt := range floatDTypes {
			gs = append(gs,
				&ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 100, N: 70, K: 33,
					ASm: 33, ASk: 1, BSk: 70, BSn: 1, Alpha: 1}, Tile: tile},
				&ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_bt_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 40, N: 72, K: 24,
					ASm: 1, ASk: 40, BSk: 1, BSn: 24, Alpha: 0.5, HasC: true, CType: dt, Beta: 2, CSm: 0, CSn: 1}, Tile: tile},
				&ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_batch_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 17, N: 9, K: 20,
					Batch: []int{2, 3}, ABatch: []int{3 * 17 * 20, 17 * 20}, BBatch: []int{0, 20 * 9},
					ASm: 20, ASk: 1, BSk: 9, BSn: 1, Alpha: 1}, Tile: tile})
		}
	}
	for _, act := range append([]graph.Op{graph.OpInvalid}, graph.EpilogueActs...) {
		for _, dt := range []tensor.DType{tensor.F32, tensor.BF16} {
			gs = append(gs, &ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_epi_%v_%v", act, dt), A: dt, B: dt, Out: dt, M: 20, N: 24, K: 16,
				Batch: []int{3}, ABatch: []int{20 * 16}, BBatch: []int{0}, ASm: 16, ASk: 1, BSk: 24, BSn: 1, Alpha: 1,
				HasC: true, CType: dt, Beta: 1, CSn: 1, CBatch: []int{0}, Act: act, HasRes: true, ResType: dt}})
		}
	}
	gs = append(gs, &ptx.Gemm{Gemm: kdesc.Gemm{Name: "gemm_tt", A: tensor.F32, B: tensor.F32, Out: tensor.F32, M: 30, N: 20, K: 12,
		ASm: 1, ASk: 30, BSk: 1, BSn: 12, Alpha: 1}})
	// Deep products, where K groups and several steps each matter: every
	// K-split tile, and the automatic tile at depths that pick four groups
	// of 16-deep and of 32-deep steps, with a bias and a residual.
	for ti, tile := range append(gemmTiles[len(gemmTiles)-3:], ptx.GemmTile{}) {
		for _, k := range []int{150, 1100} {
			gs = append(gs, &ptx.Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_deep_%d_%d", ti, k), A: tensor.F32, B: tensor.F32, Out: tensor.F32,
				M: 40, N: 36, K: k, ASm: k, ASk: 1, BSk: 36, BSn: 1, Alpha: 1,
				HasC: true, CType: tensor.F32, Beta: 1, CSn: 1, Act: graph.OpGelu, HasRes: true, ResType: tensor.F32}, Tile: tile})
		}
	}
	return gs
}

// gemmOperands makes the raw operand buffers of g (as the kernel
// addresses them) and their dense [batch..., rows, cols] views.
func gemmOperands(r *rand.Rand, g *ptx.Gemm) (raw, dense []tensor.Tensor) {
	view := func(dt tensor.DType, batchSt []int, rows, cols, sr, sc int) {
		shape := append(append([]int(nil), g.Batch...), rows, cols)
		st := append(append([]int(nil), batchSt...), sr, sc)
		buf := randTensor(r, dt, false, spanOf(shape, st))
		raw = append(raw, buf)
		dense = append(dense, gatherStrided(buf, shape, st, 0))
	}
	view(g.A, g.ABatch, g.M, g.K, g.ASm, g.ASk)
	view(g.B, g.BBatch, g.K, g.N, g.BSk, g.BSn)
	if g.HasC {
		view(g.CType, g.CBatch, g.M, g.N, g.CSm, g.CSn)
	}
	if g.HasRes {
		shape := append(append([]int(nil), g.Batch...), g.M, g.N)
		res := randTensor(r, g.ResType, false, shape...)
		raw, dense = append(raw, res), append(dense, res)
	}
	return raw, dense
}

// refGemm evaluates alpha·A·B (+ beta·C), the activation and the
// residual with the reference kernels in F32, then converts to g.Out.
func refGemm(t testing.TB, g *ptx.Gemm, dense []tensor.Tensor) tensor.Tensor {
	gr := graph.New()
	feeds := map[string]tensor.Tensor{}
	in := func(i int) *graph.Node {
		x := widen(dense[i])
		nm := fmt.Sprintf("op%d", i)
		feeds[nm] = x
		return gr.Input(nm, x.DType, x.Shape...)
	}
	y := gr.Mul(gr.MatMul(in(0), in(1)), gr.Scalar(g.Alpha))
	next := 2
	if g.HasC {
		y = gr.Add(y, gr.Mul(in(next), gr.Scalar(g.Beta)))
		next++
	}
	if g.Act != graph.OpInvalid {
		y = gr.Apply(g.Act, graph.Attrs{}, y)
	}
	if g.HasRes {
		y = gr.Add(y, in(next))
	}
	gr.Output(y)
	return castTo(interpret(t, gr, feeds)[0], g.Out)
}

func TestSweepGemm(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for _, g := range gemmCases() {
		k, err := ptx.EmitGemm(g)
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		raw, dense := gemmOperands(r, g)
		got := sentinel(g.Out, append(append([]int(nil), g.Batch...), g.M, g.N)...)
		if err := runKernel(t, k, Options{}, got, raw...); err != nil {
			t.Errorf("%s: %v", g.Name, err)
			continue
		}
		tl := tolFor(g.Out)
		tl.abs = max(tl.abs, 4e-7*9*float64(g.K)) // |a·b| ≤ 9 per term
		tl.rel = max(tl.rel, 1e-5)
		compareTensors(t, g.Name, got, refGemm(t, g, dense), tl)
	}
}
