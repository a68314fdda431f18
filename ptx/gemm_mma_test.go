package ptx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// mmaTiles are the tensor-core tiles the sweeps cover: the three
// MmaTileFor picks, one warp, and a tall, a wide and a deep one.
var mmaTiles = []MmaTile{MmaTileLarge, MmaTileSmall, MmaTileRow, {BM: 16, BN: 16, BK: 16, WM: 16, WN: 16},
	{BM: 64, BN: 32, BK: 16, WM: 32, WN: 16}, {BM: 32, BN: 128, BK: 16, WM: 32, WN: 64}, {BM: 64, BN: 64, BK: 64, WM: 64, WN: 32}}

// gemmMmaVariants are the tensor-core GEMM's variants: per tile and
// input type, a ragged product (scalar staging), a 16-byte aligned one
// with transposed B and a bias, transposed A with a batch, and every
// epilogue; then a product with 64-bit indices.
func gemmMmaVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(g *Gemm, tile MmaTile) {
		k, err := EmitGemmMMA(g, tile)
		ks = append(ks, must(t, k, err))
	}
	for ti, tile := range mmaTiles {
		for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
			add(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 100, N: 70, K: 33,
				ASm: 33, ASk: 1, BSk: 70, BSn: 1, Alpha: 1}}, tile)
			add(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_bt_%d_%v", ti, dt), A: dt, B: dt, Out: tensor.F32, M: 128, N: 768, K: 384,
				ASm: 384, ASk: 1, BSk: 1, BSn: 384, Alpha: 0.5, HasC: true, CType: dt, Beta: 2, CSn: 1}}, tile)
			add(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_at_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 24, N: 40, K: 64,
				Batch: []int{2, 12}, ABatch: []int{12 * 24 * 64, 24 * 64}, BBatch: []int{0, 64 * 40},
				ASm: 1, ASk: 24, BSk: 40, BSn: 1, Alpha: 1}}, tile)
		}
	}
	for _, act := range append([]graph.Op{graph.OpInvalid}, graph.EpilogueActs...) {
		add(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("mma_epi_%v", act), A: tensor.BF16, B: tensor.BF16, Out: tensor.BF16, M: 128, N: 96, K: 64,
			Batch: []int{3}, ABatch: []int{128 * 64}, BBatch: []int{0}, ASm: 64, ASk: 1, BSk: 96, BSn: 1, Alpha: 1,
			HasC: true, CType: tensor.F32, Beta: 1, CSn: 1, CBatch: []int{0}, Act: act, HasRes: true, ResType: tensor.BF16}}, MmaTile{})
	}
	add(&Gemm{Gemm: kdesc.Gemm{Name: "mma_wide", A: tensor.F16, B: tensor.F16, Out: tensor.F32, M: 65536, N: 40000, K: 4096,
		ASm: 4096, ASk: 1, BSk: 40000, BSn: 1, Alpha: 1}}, MmaTile{})
	return ks
}

func TestMmaKernelsAssemble(t *testing.T) {
	ks := gemmMmaVariants(t)
	for _, k := range ks {
		if !strings.Contains(k.Entry(), "mma.sync.aligned.m16n8k16.row.col.f32.") {
			t.Fatalf("%s has no mma.sync", k.Name)
		}
	}
	assemble(t, ks)
}

// TestMmaSelection: F16 and BF16 pairs take the tensor-core kernel,
// anything else is refused; bad tiles are errors.
func TestMmaSelection(t *testing.T) {
	g := &Gemm{Gemm: kdesc.Gemm{Name: "g", M: 4, N: 4, K: 4, ASm: 4, ASk: 1, BSk: 4, BSn: 1, Alpha: 1, Out: tensor.F32}}
	for _, c := range []struct {
		a, b tensor.DType
		want bool
	}{{tensor.F16, tensor.F16, true}, {tensor.BF16, tensor.BF16, true}, {tensor.F32, tensor.F32, false},
		{tensor.F16, tensor.BF16, false}, {tensor.F32, tensor.F16, false}} {
		g.A, g.B = c.a, c.b
		if UseMMA(g) != c.want {
			t.Errorf("UseMMA(%v, %v) = %v", c.a, c.b, !c.want)
		}
		if _, err := EmitGemmMMA(g, MmaTile{}); (err == nil) != c.want {
			t.Errorf("EmitGemmMMA(%v, %v): %v", c.a, c.b, err)
		}
	}
	g.A, g.B = tensor.F16, tensor.F16
	for _, bad := range []MmaTile{{BM: 16, BN: 16, BK: 8, WM: 16, WN: 16}, {BM: 48, BN: 16, BK: 16, WM: 32, WN: 16},
		{BM: 128, BN: 128, BK: 16, WM: 128, WN: 64}, {BM: 512, BN: 512, BK: 16, WM: 16, WN: 16},
		{BM: 128, BN: 256, BK: 64, WM: 64, WN: 64}} {
		if _, err := EmitGemmMMA(g, bad); err == nil {
			t.Errorf("tile %+v accepted", bad)
		}
	}
	if got := MmaTileFor(&Gemm{Gemm: kdesc.Gemm{M: 1, N: 4096}}); got != MmaTileRow {
		t.Errorf("M=1 picks %+v", got)
	}
	if got := MmaTileFor(&Gemm{Gemm: kdesc.Gemm{M: 4096, N: 4096}}); got != MmaTileLarge {
		t.Errorf("4096² picks %+v", got)
	}
	if got := MmaTileFor(&Gemm{Gemm: kdesc.Gemm{M: 128, N: 128}}); got != MmaTileSmall {
		t.Errorf("128² picks %+v", got)
	}
}
