package ptx

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

var floatDTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16}

func must(t testing.TB, k *Kernel, err error) *Kernel {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Launch.Validate(); err != nil {
		t.Fatalf("%s: %v", k.Name, err)
	}
	return k
}

func rowVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(k *Kernel, err error) { ks = append(ks, must(t, k, err)) }
	for _, dt := range floatDTypes {
		for ci, c := range []struct {
			shape []int
			axis  int
			block int
		}{{[]int{8, 100}, 1, 0}, {[]int{4, 7, 3}, 1, 32}, {[]int{2, 5000}, 1, 1024}, {[]int{0, 5}, 1, 0}} {
			for _, log := range []bool{false, true} {
				add(EmitSoftmax(&Softmax{Softmax: kdesc.Softmax{Name: fmt.Sprintf("softmax_%v_%d_%v", dt, ci, log),
					DType: dt, Shape: c.shape, Axis: c.axis, Log: log}, Block: c.block}))
			}
		}
		for _, rms := range []bool{false, true} {
			for _, aff := range []int{0, 1, 2} {
				if rms && aff == 2 {
					continue
				}
				for _, block := range []int{0, 64, 512} {
					add(EmitNorm(&Norm{Norm: kdesc.Norm{Name: fmt.Sprintf("norm_%v_%v_%d_%d", dt, rms, aff, block), DType: dt,
						Shape: []int{4, 12, 384}, Axis: 2, Eps: 1e-5, RMS: rms, Scale: aff >= 1, Bias: aff == 2}, Block: block}))
					// InstanceNorm: scale and bias per channel (row % 12).
					if !rms && aff == 2 {
						add(EmitNorm(&Norm{Norm: kdesc.Norm{Name: fmt.Sprintf("instnorm_%v_%d", dt, block), DType: dt,
							Shape: []int{4, 12, 384}, Axis: 2, Eps: 1e-5, Scale: true, Bias: true, Channels: 12}, Block: block}))
					}
				}
				// Add-then-normalise with a full and a broadcast residual.
				for ri, rs := range [][]int{{12 * 384, 384, 1}, {0, 384, 1}} {
					add(EmitNorm(&Norm{Norm: kdesc.Norm{Name: fmt.Sprintf("addnorm_%v_%v_%d_%d", dt, rms, aff, ri), DType: dt,
						Shape: []int{4, 12, 384}, Axis: 1, Eps: 1e-5, RMS: rms, Scale: aff >= 1, Bias: aff == 2,
						Residual: true, ResStrides: rs}}))
				}
			}
		}
		for _, op := range []graph.Op{graph.OpReduceSum, graph.OpReduceMean, graph.OpReduceMax, graph.OpReduceMin, graph.OpReduceProd} {
			for i, axes := range [][]int{{1}, {0, 2}, nil, {2}} {
				add(EmitReduce(&Reduce{Reduce: kdesc.Reduce{Name: fmt.Sprintf("reduce_%v_%v_%d", op, dt, i), Op: op, DType: dt,
					Shape: []int{6, 50, 7}, Axes: axes}}))
			}
		}
	}
	return ks
}

func moveVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(k *Kernel, err error) { ks = append(ks, must(t, k, err)) }
	g := graph.New()
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.I64, tensor.Bool} {
		x := g.Input("x_"+dt.String(), dt, 2, 3, 4, 5)
		nodes := []*graph.Node{
			g.Transpose(x, 0, 2, 1, 3),
			g.Transpose(x, 3, 2, 1, 0),
			g.Slice(x, graph.SliceSpec{Starts: []int{1, -1}, Ends: []int{3, 0}, Axes: []int{1, 3}, Steps: []int{1, -2}}),
			g.Expand(g.Input("e_"+dt.String(), dt, 3, 1, 5), 2, 3, 4, 5),
			g.Tile(x, 2, 1, 3, 1),
		}
		nodes = append(nodes, g.Split(x, 2, 1, 3)...)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		for i, n := range nodes {
			k, _, err := EmitNode(fmt.Sprintf("copy_%v_%d_%v", dt, i, n.Op), n)
			add(k, err)
		}
		add(EmitConcat(&Concat{Concat: kdesc.Concat{Name: "concat_" + dt.String(), DType: dt, Shape: []int{2, 9, 5}, Axis: 1, Sizes: []int{3, 1, 5}}}))
		add(EmitConcat(&Concat{Concat: kdesc.Concat{Name: "concat1_" + dt.String(), DType: dt, Shape: []int{2, 3}, Axis: 0, Sizes: []int{2}}}))
		for _, it := range []tensor.DType{tensor.I32, tensor.I64} {
			add(EmitGather(&Gather{Gather: kdesc.Gather{Name: fmt.Sprintf("gather_%v_%v", dt, it), DType: dt, Outer: 3, D: 30522, N: 128, Inner: 384, Index: it}}))
		}
		for _, m := range []graph.PadMode{graph.PadConstant, graph.PadReflect, graph.PadEdge} {
			add(EmitPad(&Pad{Pad: kdesc.Pad{Name: fmt.Sprintf("pad_%v_%v", dt, m), DType: dt, In: []int{2, 3, 4}, Begins: []int{0, 2, -1},
				Out: []int{2, 6, 5}, Mode: m, Value: -2.5}}))
		}
	}
	add(EmitPad(&Pad{Pad: kdesc.Pad{Name: "pad_empty", DType: tensor.F32, In: []int{0, 3}, Begins: []int{1, 0}, Out: []int{2, 3}, Value: 1}}))
	return ks
}

func gemmVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(k *Kernel, err error) { ks = append(ks, must(t, k, err)) }
	tiles := []GemmTile{DefaultTile, {32, 32, 8, 2, 2, 0}, {128, 128, 8, 8, 8, 0}, {64, 32, 16, 4, 2, 0}, {128, 64, 8, 8, 4, 0}, {16, 16, 16, 1, 1, 0},
		smallTile, {32, 32, 16, 4, 4, 4}, {32, 32, 32, 4, 4, 4}, {64, 64, 16, 4, 4, 2}, {16, 16, 16, 2, 2, 3}}
	for ti, tile := range tiles {
		for _, dt := range floatDTypes {
			// Plain, transposed B, broadcast batch with bias.
			add(EmitGemm(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 100, N: 70, K: 33,
				ASm: 33, ASk: 1, BSk: 70, BSn: 1, Alpha: 1}, Tile: tile}))
			add(EmitGemm(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_bt_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 128, N: 768, K: 384,
				ASm: 1, ASk: 128, BSk: 1, BSn: 384, Alpha: 0.5, HasC: true, CType: dt, Beta: 2, CSm: 0, CSn: 1}, Tile: tile}))
			add(EmitGemm(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_batch_%d_%v", ti, dt), A: dt, B: dt, Out: dt, M: 17, N: 9, K: 64,
				Batch: []int{2, 12}, ABatch: []int{12 * 17 * 64, 17 * 64}, BBatch: []int{0, 64 * 9},
				ASm: 64, ASk: 1, BSk: 9, BSn: 1, Alpha: 1}, Tile: tile}))
		}
	}
	// Epilogues: bias along N, every activation, a residual.
	for _, act := range append([]graph.Op{graph.OpInvalid}, graph.EpilogueActs...) {
		for _, dt := range []tensor.DType{tensor.F32, tensor.BF16} {
			add(EmitGemm(&Gemm{Gemm: kdesc.Gemm{Name: fmt.Sprintf("gemm_epi_%v_%v", act, dt), A: dt, B: dt, Out: dt, M: 128, N: 96, K: 64,
				Batch: []int{3}, ABatch: []int{128 * 64}, BBatch: []int{0}, ASm: 64, ASk: 1, BSk: 96, BSn: 1, Alpha: 1,
				HasC: true, CType: dt, Beta: 1, CSn: 1, CBatch: []int{0}, Act: act, HasRes: true, ResType: dt}}))
		}
	}
	// Transposed operands as FusedMatMul stores them.
	add(EmitGemm(&Gemm{Gemm: kdesc.Gemm{Name: "gemm_tt", A: tensor.F32, B: tensor.F32, Out: tensor.F32, M: 50, N: 40, K: 30,
		ASm: 1, ASk: 50, BSk: 1, BSn: 30, Alpha: 1}}))
	add(EmitGemm(&Gemm{Gemm: kdesc.Gemm{Name: "gemm_wide", A: tensor.BF16, B: tensor.BF16, Out: tensor.F32, M: 65536, N: 40000, K: 4096,
		ASm: 4096, ASk: 1, BSk: 40000, BSn: 1, Alpha: 1}}))
	return ks
}

func attentionVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(k *Kernel, err error) { ks = append(ks, must(t, k, err)) }
	for _, dt := range floatDTypes {
		for _, c := range []Attention{
			{Attention: kdesc.Attention{B: 2, H: 12, HK: 12, SQ: 128, SK: 128, D: 32, DV: 32}},
			{Attention: kdesc.Attention{B: 1, H: 8, HK: 2, SQ: 1, SK: 1000, D: 64, DV: 64, Causal: true}},
			{Attention: kdesc.Attention{B: 1, H: 4, HK: 4, SQ: 16, SK: 16, D: 8, DV: 16, Mask: MaskAdd, MaskStrides: []int{16, 0, 0, 1}, Scale: 0.3}},
			{Attention: kdesc.Attention{B: 3, H: 2, HK: 1, SQ: 5, SK: 7, D: 4, DV: 4, Mask: MaskBool, MaskStrides: []int{0, 0, 7, 1}, Causal: true}, Block: 32},
			// A KV cache read to a run-time count (the decoder's decode
			// and prefill steps).
			{Attention: kdesc.Attention{B: 1, H: 8, HK: 2, SQ: 1, SK: 1000, D: 64, DV: 64, Causal: true, KVLen: true}},
			{Attention: kdesc.Attention{B: 1, H: 8, HK: 2, SQ: 128, SK: 256, D: 64, DV: 64, Causal: true, KVLen: true}},
		} {
			c.Name = fmt.Sprintf("attn_%v_%d_%d_%d_%v", dt, c.H, c.SK, c.Mask, c.KVLen)
			c.DType = dt
			add(EmitAttention(&c))
		}
	}
	return ks
}

// TestKernelsAssemble runs ptxas for sm_80 and sm_90 over every variant
// the emitters can produce (the sweeps above and elementwiseVariants).
func TestKernelsAssemble(t *testing.T) {
	for name, gen := range map[string]func(testing.TB) []*Kernel{
		"elementwise": elementwiseVariants, "row": rowVariants, "move": moveVariants, "gemm": gemmVariants, "attention": attentionVariants,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assemble(t, gen(t))
		})
	}
}
