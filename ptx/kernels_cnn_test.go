package ptx

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// cnnVariants covers the conv (direct and implicit GEMM, grouped,
// depthwise, strided, dilated, padded, every epilogue), pool,
// BatchNorm, RoPE, ArgMax/ArgMin and CumSum emitters.
func cnnVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(k *Kernel, err error) { ks = append(ks, must(t, k, err)) }
	win := func(n, c, h, w, kh, kw, s, p, d int) kdesc.Window {
		o := func(in, k int) int { return (in+2*p-d*(k-1)-1)/s + 1 }
		return kdesc.Window{N: n, C: c, H: h, W: w, OH: o(h, kh), OW: o(w, kw), KH: kh, KW: kw, SH: s, SW: s, PT: p, PL: p, DH: d, DW: d}
	}
	for _, dt := range floatDTypes {
		for ci, c := range []struct {
			w         kdesc.Window
			m, groups int
			direct    bool
		}{
			{win(2, 16, 14, 14, 3, 3, 1, 1, 1), 64, 1, false},
			{win(1, 32, 9, 9, 3, 3, 2, 1, 1), 96, 2, false},
			{win(1, 8, 10, 10, 3, 3, 1, 2, 2), 16, 1, true},
			{win(1, 24, 8, 8, 5, 5, 2, 2, 1), 24, 24, false}, // depthwise
			{win(1, 3, 224, 224, 7, 7, 2, 3, 1), 64, 1, false},
			{win(2, 64, 7, 7, 1, 1, 1, 0, 1), 128, 1, false},
		} {
			epis := []graph.Epilogue{{Bias: true, Act: graph.OpRelu, Residual: true}, {Bias: true, Act: graph.OpRelu, Pool2x2: true}}
			if dt == tensor.F32 {
				epis = append(epis, graph.Epilogue{}, graph.Epilogue{Bias: true, Act: graph.OpSilu})
			}
			for _, epi := range epis {
				cv := &Conv{Conv: kdesc.Conv{Name: fmt.Sprintf("conv_%v_%d_%v_%v_%v_%v", dt, ci, epi.Bias, epi.Act, epi.Residual, epi.Pool2x2), DType: dt,
					Window: c.w, M: c.m, Groups: c.groups, Bias: epi.Bias, Act: epi.Act, Res: epi.Residual, Pool: epi.Pool2x2}, Direct: c.direct}
				add(EmitConv(cv))
			}
		}
		for pi, w := range []kdesc.Window{win(2, 3, 9, 11, 3, 3, 2, 1, 1), win(1, 64, 112, 112, 3, 3, 2, 1, 1), win(1, 4, 5, 5, 2, 2, 2, 0, 1)} {
			for _, mx := range []bool{false, true} {
				for _, cp := range []bool{false, true} {
					add(EmitPool(&Pool{Pool: kdesc.Pool{Name: fmt.Sprintf("pool_%v_%d_%v_%v", dt, pi, mx, cp), DType: dt, Window: w, Max: mx, CountPad: cp}}))
				}
			}
		}
		add(EmitBatchNorm(&BatchNorm{BatchNorm: kdesc.BatchNorm{Name: "bn_" + dt.String(), DType: dt, N: 2, C: 64, Spatial: 56 * 56, Eps: 1e-5}}))
		add(EmitBatchNorm(&BatchNorm{BatchNorm: kdesc.BatchNorm{Name: "bn0_" + dt.String(), DType: dt, N: 3, C: 5, Spatial: 1, Eps: 1e-3}}))
		for _, il := range []bool{false, true} {
			add(EmitRoPE(&RoPE{RoPE: kdesc.RoPE{Name: fmt.Sprintf("rope_%v_%v", dt, il), DType: dt, Rows: 2 * 8 * 128, Seq: 128, Half: 32, Interleaved: il}}))
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		for li, l := range []kdesc.Lines{{Outer: 4, Size: 32000, Inner: 1}, {Outer: 3, Size: 5, Inner: 7}, {Outer: 1 << 20, Size: 3000, Inner: 1}} {
			if li == 2 && dt != tensor.F32 && dt != tensor.I64 {
				continue // 64-bit indexing: one float and one integer dtype
			}
			for _, mx := range []bool{false, true} {
				add(EmitArg(&Arg{Arg: kdesc.Arg{Name: fmt.Sprintf("arg_%v_%d_%v", dt, li, mx), DType: dt, Lines: l, Max: mx}}))
			}
			for _, small := range []bool{false, true} {
				add(EmitTopK(&TopK{TopK: kdesc.TopK{Name: fmt.Sprintf("topk_%v_%d_%v", dt, li, small), DType: dt, Lines: l, K: min(3, l.Size),
					Smallest: small, Indices: small}}))
			}
			for _, ex := range []bool{false, true} {
				for _, rev := range []bool{false, true} {
					add(EmitCumSum(&CumSum{CumSum: kdesc.CumSum{Name: fmt.Sprintf("cumsum_%v_%d_%v_%v", dt, li, ex, rev), DType: dt, Lines: l,
						Exclusive: ex, Reverse: rev}}))
				}
			}
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.I8} { // one warp, no shared fold
		add(EmitArg(&Arg{Arg: kdesc.Arg{Name: "argrow32_" + dt.String(), DType: dt, Lines: kdesc.Lines{Outer: 3, Size: 100, Inner: 1}}, Row: true, Block: 32}))
	}
	return ks
}

func TestCNNKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, cnnVariants(t))
}

func TestCNNKernelErrors(t *testing.T) {
	w := kdesc.Window{N: 1, C: 4, H: 5, W: 5, OH: 3, OW: 3, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1}
	for name, err := range map[string]error{
		"f64 conv":    second(EmitConv(&Conv{Conv: kdesc.Conv{Name: "c", DType: tensor.F64, Window: w, M: 4, Groups: 1}})),
		"bad groups":  second(EmitConv(&Conv{Conv: kdesc.Conv{Name: "c", DType: tensor.F32, Window: w, M: 4, Groups: 3}})),
		"bad act":     second(EmitConv(&Conv{Conv: kdesc.Conv{Name: "c", DType: tensor.F32, Window: w, M: 4, Groups: 1, Act: graph.OpExp}})),
		"pooled res":  second(EmitConv(&Conv{Conv: kdesc.Conv{Name: "c", DType: tensor.F32, Window: w, M: 4, Groups: 1, Res: true, Pool: true}})),
		"dilated max": second(EmitPool(&Pool{Pool: kdesc.Pool{Name: "p", DType: tensor.F32, Window: kdesc.Window{N: 1, C: 1, H: 5, W: 5, OH: 1, OW: 1, KH: 3, KW: 3, SH: 1, SW: 1, DH: 2, DW: 1}, Max: true}})),
		"bool arg":    second(EmitArg(&Arg{Arg: kdesc.Arg{Name: "a", DType: tensor.Bool, Lines: kdesc.Lines{Outer: 1, Size: 2, Inner: 1}}})),
		"f64 cumsum":  second(EmitCumSum(&CumSum{CumSum: kdesc.CumSum{Name: "s", DType: tensor.F64, Lines: kdesc.Lines{Outer: 1, Size: 2, Inner: 1}}})),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func second(_ *Kernel, err error) error { return err }
