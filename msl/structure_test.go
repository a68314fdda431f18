package msl

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// variants emits one kernel of every emitter and variant the backend uses.
func variants(t *testing.T) []*Kernel {
	t.Helper()
	var ks []*Kernel
	add := func(k *Kernel, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	name := func(s string) string { return fmt.Sprintf("k%d_%s", len(ks), s) }
	f32 := tensor.F32
	// elementwise: every float unary, every binary, where, casts, half/bf16, ints, broadcast
	for _, op := range []graph.Op{graph.OpNeg, graph.OpAbs, graph.OpExp, graph.OpLog, graph.OpSqrt, graph.OpRsqrt, graph.OpReciprocal,
		graph.OpTanh, graph.OpSigmoid, graph.OpRelu, graph.OpLeakyRelu, graph.OpGelu, graph.OpGeluTanh, graph.OpSilu, graph.OpErf,
		graph.OpSin, graph.OpCos, graph.OpFloor, graph.OpCeil, graph.OpRound, graph.OpClip} {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
			add(EmitElementwise(&Elementwise{Name: name(op.String()), Shape: []int{3, 5}, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: []int{5, 1}}},
				Body:   []Instr{{Op: op, Args: []int{0}, DType: dt, Attrs: graph.Attrs{Alpha: 0.1, Min: -1, Max: 2}}}}))
		}
	}
	for _, op := range []graph.Op{graph.OpAdd, graph.OpSub, graph.OpMul, graph.OpDiv, graph.OpPow, graph.OpMax, graph.OpMin} {
		for _, dt := range []tensor.DType{tensor.F32, tensor.I32, tensor.I64} {
			add(EmitElementwise(&Elementwise{Name: name(op.String()), Shape: []int{4, 1, 6}, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: []int{6, 0, 1}}, {DType: dt, Strides: []int{0, 0, 1}}},
				Body:   []Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}))
		}
	}
	for _, op := range []graph.Op{graph.OpEqual, graph.OpLess, graph.OpLessOrEqual, graph.OpGreater, graph.OpGreaterOrEqual} {
		add(EmitElementwise(&Elementwise{Name: name(op.String()), Shape: []int{7}, Out: tensor.Bool,
			Inputs: []Operand{{DType: f32, Strides: []int{1}}, {DType: f32, Strides: []int{0}}},
			Body:   []Instr{{Op: op, Args: []int{0, 1}, DType: tensor.Bool}}}))
	}
	add(EmitElementwise(&Elementwise{Name: name("fused"), Shape: []int{2, 3, 4}, Out: tensor.F16,
		Inputs: []Operand{{DType: tensor.Bool, Strides: []int{0, 4, 1}}, {DType: f32, Strides: []int{12, 4, 1}}, {DType: tensor.I64, Strides: []int{0, 0, 0}}},
		Body: []Instr{
			{Op: graph.OpCast, Args: []int{2}, DType: f32},
			{Op: graph.OpMul, Args: []int{1, 3}, DType: f32},
			{Op: graph.OpWhere, Args: []int{0, 4, 1}, DType: f32},
			{Op: graph.OpClip, Args: []int{5}, DType: f32, Attrs: graph.Attrs{Min: -3, Max: 3}},
			{Op: graph.OpAnd, Args: []int{0, 0}, DType: tensor.Bool},
			{Op: graph.OpNot, Args: []int{7}, DType: tensor.Bool},
			{Op: graph.OpCast, Args: []int{6}, DType: tensor.F16}}}))
	// reductions
	for _, op := range []graph.Op{graph.OpReduceSum, graph.OpReduceMean, graph.OpReduceMax, graph.OpReduceMin, graph.OpReduceProd} {
		add(EmitReduce(&Reduce{Name: name(op.String()), Op: op, DType: f32, Shape: []int{3, 40, 5}, Axes: []int{1}}))
	}
	add(EmitReduce(&Reduce{Name: name("sum02"), Op: graph.OpReduceSum, DType: tensor.F16, Shape: []int{3, 4, 5}, Axes: []int{0, 2}}))
	// rows
	for _, log := range []bool{false, true} {
		add(EmitSoftmax(&Softmax{Name: name("softmax"), DType: f32, Shape: []int{6, 300}, Axis: 1, Log: log}))
	}
	add(EmitSoftmax(&Softmax{Name: name("softmax0"), DType: tensor.BF16, Shape: []int{6, 30}, Axis: 0}))
	for _, rms := range []bool{false, true} {
		for _, res := range []bool{false, true} {
			nm := &Norm{Name: name("norm"), DType: f32, Shape: []int{4, 2, 64}, Axis: 1, Eps: 1e-5, RMS: rms, Scale: true, Bias: !rms, Residual: res}
			if res {
				nm.ResStrides = []int{0, 64, 1}
			}
			add(EmitNorm(nm))
		}
	}
	add(EmitNorm(&Norm{Name: name("instnorm"), DType: tensor.F16, Shape: []int{2, 3, 7, 7}, Axis: 2, Eps: 1e-5, Scale: true, Bias: true, Channels: 3}))
	// movement
	add(EmitCopy(&Copy{Name: name("transpose"), DType: f32, Shape: []int{4, 2, 3}, Strides: []int{1, 12, 4}}))
	add(EmitCopy(&Copy{Name: name("slice"), DType: tensor.F16, Shape: []int{2, 3}, Strides: []int{4, -1}, Base: 3}))
	add(EmitCopy(&Copy{Name: name("tile"), DType: tensor.I64, Shape: []int{4, 6}, Strides: []int{3, 1}, Mods: []int{2, 3}}))
	add(EmitConcat(&Concat{Name: name("concat"), DType: f32, Shape: []int{2, 7, 3}, Axis: 1, Sizes: []int{3, 0, 4}}))
	for _, it := range []tensor.DType{tensor.I32, tensor.I64} {
		add(EmitGather(&Gather{Name: name("gather"), DType: f32, Outer: 2, D: 10, N: 4, Inner: 3, Index: it}))
	}
	for _, m := range []graph.PadMode{graph.PadConstant, graph.PadReflect, graph.PadEdge} {
		add(EmitPad(&Pad{Name: name("pad"), DType: f32, In: []int{2, 3}, Begins: []int{1, 2}, Mode: m, Value: 1.5, Out: []int{4, 7}}))
	}
	// GEMM: both variants, plain and with every epilogue part, batched
	for _, sg := range []bool{false, true} {
		add(EmitGemm(&Gemm{Name: name("gemm"), A: f32, B: f32, Out: f32, M: 70, N: 33, K: 100, ASm: 100, ASk: 1, BSk: 33, BSn: 1, Alpha: 1, SimdGroup: sg}))
		add(EmitGemm(&Gemm{Name: name("gemm_epi"), A: tensor.F16, B: tensor.F16, Out: tensor.F16, M: 9, N: 17, K: 5, Batch: []int{2, 3},
			ASm: 1, ASk: 9, BSk: 17, BSn: 1, ABatch: []int{135, 45}, BBatch: []int{0, 85}, Alpha: 0.5,
			HasC: true, CType: tensor.F16, Beta: 1, CSn: 1, CBatch: []int{0, 0}, Act: graph.OpGelu, HasRes: true, ResType: tensor.F16, SimdGroup: sg}))
	}
	// attention: every mask kind, causal, grouped heads, D > 32
	for _, mk := range []int{MaskNone, MaskAdd, MaskBool} {
		add(EmitAttention(&Attention{Name: name("attn"), DType: f32, B: 2, H: 4, HK: 2, SQ: 5, SK: 7, D: 40, DV: 24,
			Causal: mk == MaskNone, Mask: mk, MaskStrides: []int{7, 0, 0, 1}}))
	}
	// conv: plain, grouped and strided, fused epilogue
	add(EmitConv(&Conv{Name: name("conv"), DType: f32, Window: kdesc.Window{N: 1, C: 3, H: 8, W: 8, KH: 3, KW: 3, OH: 6, OW: 6, SH: 1, SW: 1, DH: 1, DW: 1}, M: 4, Groups: 1}))
	add(EmitConv(&Conv{Name: name("conv_fused"), DType: tensor.F16, Window: kdesc.Window{N: 2, C: 4, H: 9, W: 9, KH: 3, KW: 3, OH: 5, OW: 5, SH: 2, SW: 2, PT: 1, PL: 1,
		DH: 1, DW: 1}, M: 4, Groups: 2, Bias: true, Act: graph.OpRelu, Res: true}))
	add(EmitConv(&Conv{Name: name("conv_pooled"), DType: tensor.F16, Window: kdesc.Window{N: 2, C: 4, H: 9, W: 9, KH: 3, KW: 3, OH: 9, OW: 9, SH: 1, SW: 1, PT: 1, PL: 1,
		DH: 1, DW: 1}, M: 4, Groups: 1, Bias: true, Act: graph.OpRelu, Pool: true}))
	// scans along an axis: every direction, float and integer dtypes
	for _, dt := range []tensor.DType{f32, tensor.BF16, tensor.I32, tensor.U8} {
		for _, ex := range []bool{false, true} {
			for _, rev := range []bool{false, true} {
				add(EmitCumSum(&CumSum{Name: name("cumsum"), DType: dt, Lines: kdesc.Lines{Outer: 3, Size: 7, Inner: 4}, Exclusive: ex, Reverse: rev}))
			}
		}
	}
	for _, dt := range []tensor.DType{f32, tensor.F16, tensor.I64, tensor.I8} {
		for _, mx := range []bool{false, true} {
			add(EmitArg(&Arg{Name: name("arg"), DType: dt, Lines: kdesc.Lines{Outer: 2, Size: 9, Inner: 5}, Max: mx}))
			add(EmitTopK(&TopK{Name: name("topk"), DType: dt, Lines: kdesc.Lines{Outer: 2, Size: 9, Inner: 5}, K: 3, Smallest: mx, Indices: mx}))
		}
	}
	// pools: max and both means, padded and strided; global pool
	win := kdesc.Window{N: 2, C: 3, H: 7, W: 6, OH: 4, OW: 3, KH: 3, KW: 2, SH: 2, SW: 2, PT: 1, PL: 0, DH: 1, DW: 1}
	add(EmitPool(&Pool{Name: name("maxpool"), DType: f32, Window: win, Max: true}))
	add(EmitPool(&Pool{Name: name("avgpool"), DType: tensor.F16, Window: win}))
	add(EmitPool(&Pool{Name: name("avgpool_pad"), DType: f32, Window: win, CountPad: true}))
	add(EmitReduce(&Reduce{Name: name("gap"), Op: graph.OpReduceMean, DType: f32, Shape: []int{2, 3, 5, 5}, Axes: []int{2, 3}}))
	// depthwise conv with dilation and the whole epilogue
	add(EmitConv(&Conv{Name: name("conv_dw"), DType: f32, Window: kdesc.Window{N: 1, C: 6, H: 9, W: 9, KH: 3, KW: 3, OH: 5, OW: 5, SH: 1, SW: 1, PT: 0, PL: 0,
		DH: 2, DW: 2}, M: 6, Groups: 6, Bias: true, Act: graph.OpSilu}))
	// transposed conv: 2-D grouped with output padding and bias, 3-D
	// dilated, in each float dtype
	for _, dt := range []tensor.DType{f32, tensor.F16, tensor.BF16} {
		add(EmitConvTranspose(&ConvTranspose{Name: name("convtranspose"), DType: dt, In: []int{2, 4, 5, 4}, Kernel: []int{3, 3}, M: 6, Groups: 2,
			Strides: []int{2, 2}, Dilations: []int{1, 1}, Pads: []int{1, 1, 0, -1}, Out: []int{2, 6, 10, 9}, Bias: true}))
		add(EmitConvTranspose(&ConvTranspose{Name: name("convtranspose3d"), DType: dt, In: []int{1, 2, 2, 3, 2}, Kernel: []int{2, 2, 3}, M: 2, Groups: 1,
			Strides: []int{2, 1, 2}, Dilations: []int{1, 2, 1}, Pads: []int{0, 1, 1, -1, 0, 0}, Out: []int{1, 2, 5, 4, 4}}))
	}
	// per-channel and per-pair kernels
	for _, dt := range []tensor.DType{f32, tensor.BF16} {
		add(EmitBatchNorm(&BatchNorm{Name: name("batchnorm"), DType: dt, N: 2, C: 3, Spatial: 10, Eps: 1e-5}))
		for _, il := range []bool{false, true} {
			add(EmitRoPE(&RoPE{Name: name("rope"), DType: dt, Rows: 12, Seq: 6, Half: 4, Interleaved: il}))
		}
	}
	return ks
}

var (
	reKernel = regexp.MustCompile(`kernel void (\w+)\(`)
	reBuffer = regexp.MustCompile(`device (const )?(\w+)\* (\w+) \[\[buffer\((\d+)\)\]\]`)
	reBound  = regexp.MustCompile(`if \([^)]*>= [^)]*\) \{ return; \}`)
)

// TestKernelStructure checks every variant's source: one kernel with the
// Kernel's name, buffers 0..n-1 in order matching Buffers (name, type,
// const), a bounds check returning early, balanced delimiters, and a
// dispatch within Metal's limits.
func TestKernelStructure(t *testing.T) {
	for _, k := range variants(t) {
		t.Run(k.Name, func(t *testing.T) {
			src := k.Source
			ms := reKernel.FindAllStringSubmatch(src, -1)
			if len(ms) != 1 || ms[0][1] != k.Name {
				t.Fatalf("kernel declarations %v, want one named %s", ms, k.Name)
			}
			bs := reBuffer.FindAllStringSubmatch(src, -1)
			if len(bs) != len(k.Buffers) {
				t.Fatalf("%d buffer arguments in source, %d in Buffers", len(bs), len(k.Buffers))
			}
			for i, b := range bs {
				want := k.Buffers[i]
				if b[4] != fmt.Sprint(i) || b[3] != want.Name || b[2] != want.Type || (b[1] != "") != want.Const {
					t.Errorf("argument %d is %q, want buffer(%d) %+v", i, b[0], i, want)
				}
				// the concat variant's in1 is empty: nothing reads it
				if !strings.Contains(src[strings.Index(src, "{"):], want.Name+"[") && !(strings.HasSuffix(k.Name, "_concat") && want.Name == "in1") {
					t.Errorf("buffer %s is never indexed", want.Name)
				}
			}
			if !reBound.MatchString(src) {
				t.Errorf("no bounds check:\n%s", src)
			}
			for _, pair := range []string{"{}", "()", "[]"} {
				if err := balanced(src, pair[0], pair[1]); err != nil {
					t.Errorf("%v:\n%s", err, src)
				}
			}
			th := k.Threads[0] * k.Threads[1] * k.Threads[2]
			if th < 1 || th > MaxThreads || min(k.Groups[0], k.Groups[1], k.Groups[2]) < 1 {
				t.Errorf("dispatch %v groups of %v", k.Groups, k.Threads)
			}
			if strings.Contains(src, "simd_") || strings.Contains(src, "kiln_tg_") || strings.Contains(src, "simdgroup") {
				if th%SimdWidth != 0 {
					t.Errorf("simdgroup kernel with %d threads, not a multiple of %d", th, SimdWidth)
				}
			}
			if k.Variant == "" {
				t.Error("no variant")
			}
		})
	}
}

// balanced checks open/close nesting, outside // comments.
func balanced(src string, open, close byte) error {
	depth := 0
	for line := range strings.SplitSeq(src, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case open:
				depth++
			case close:
				if depth--; depth < 0 {
					return fmt.Errorf("unbalanced %c", close)
				}
			}
		}
	}
	if depth != 0 {
		return fmt.Errorf("%d unclosed %c", depth, open)
	}
	return nil
}

// TestLibrary: the header is balanced and every kernel name occurs once
// as a declaration in the joined library.
func TestLibrary(t *testing.T) {
	ks := variants(t)
	lib := Library(ks...)
	for _, pair := range []string{"{}", "()", "[]"} {
		if err := balanced(Header, pair[0], pair[1]); err != nil {
			t.Errorf("header: %v", err)
		}
	}
	seen := map[string]int{}
	for _, m := range reKernel.FindAllStringSubmatch(lib, -1) {
		seen[m[1]]++
	}
	if len(seen) != len(ks) {
		t.Errorf("%d kernel names for %d kernels", len(seen), len(ks))
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("kernel %s declared %d times", n, c)
		}
	}
	for _, h := range []string{"#include <metal_stdlib>", "kiln_erf", "kiln_tg_sum", "simd_sum", "kiln_bf16_store"} {
		if !strings.Contains(lib, h) {
			t.Errorf("library lacks %q", h)
		}
	}
}

// TestVariantFeatures: the features each variant promises are in its source.
func TestVariantFeatures(t *testing.T) {
	for _, k := range variants(t) {
		var want []string
		switch {
		case strings.Contains(k.Name, "gemm") && k.Variant == "simdgroup":
			want = []string{"simdgroup_float8x8", "simdgroup_multiply_accumulate", "simdgroup_load", "simdgroup_store", "threadgroup_barrier"}
		case strings.Contains(k.Name, "gemm"):
			want = []string{"threadgroup float As", "threadgroup_barrier"}
		case strings.Contains(k.Name, "softmax"):
			want = []string{"kiln_tg_max", "kiln_tg_sum"}
		case strings.HasSuffix(k.Name, "_batchnorm"):
			want = []string{"sqrt(", "var[c]", "mean[c]"} // not rsqrt: divides like the CPU
		case strings.Contains(k.Name, "norm"):
			want = []string{"kiln_tg_sum", "rsqrt"}
		case strings.Contains(k.Name, "attn"):
			want = []string{"simd_sum", "exp(m - mn)"} // online softmax rescale
		case strings.Contains(k.Name, "gemm_epi"):
			want = []string{"kiln_erf", "res[o]"}
		}
		for _, w := range want {
			if !strings.Contains(k.Source, w) {
				t.Errorf("%s (%s) lacks %q", k.Name, k.Variant, w)
			}
		}
	}
}

// TestRejects: unsupported dtypes and malformed descriptions are errors.
func TestRejects(t *testing.T) {
	errs := []error{
		func() error {
			_, err := EmitElementwise(&Elementwise{Name: "a", Shape: []int{2}, Out: tensor.F64, Inputs: []Operand{{DType: tensor.F64, Strides: []int{1}}}, Body: []Instr{{Op: graph.OpNeg, Args: []int{0}, DType: tensor.F64}}})
			return err
		}(),
		func() error {
			_, err := EmitElementwise(&Elementwise{Name: "b", Shape: []int{2}, Out: tensor.F32, Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}}, Body: []Instr{{Op: graph.OpNeg, Args: []int{1}, DType: tensor.F32}}})
			return err
		}(),
		func() error {
			_, err := EmitElementwise(&Elementwise{Name: "c", Shape: []int{2}, Out: tensor.I32, Inputs: []Operand{{DType: tensor.I32, Strides: []int{1}}}, Body: []Instr{{Op: graph.OpExp, Args: []int{0}, DType: tensor.I32}}})
			return err
		}(),
		func() error {
			_, err := EmitGemm(&Gemm{Name: "d", A: tensor.I32, B: tensor.F32, Out: tensor.F32, M: 2, N: 2, K: 2})
			return err
		}(),
		func() error {
			_, err := EmitConcat(&Concat{Name: "e", DType: tensor.F32, Shape: []int{2, 5}, Axis: 1, Sizes: []int{2, 2}})
			return err
		}(),
		func() error {
			_, err := EmitAttention(&Attention{Name: "f", DType: tensor.F32, B: 1, H: 3, HK: 2, SQ: 1, SK: 1, D: 4, DV: 4})
			return err
		}(),
		func() error {
			_, err := EmitCopy(&Copy{Name: "g", DType: tensor.F32, Shape: []int{1 << 16, 1 << 16}, Strides: []int{1, 1}})
			return err
		}(),
		func() error {
			_, err := EmitCumSum(&CumSum{Name: "h", DType: tensor.Bool, Lines: kdesc.Lines{Outer: 1, Size: 2, Inner: 1}})
			return err
		}(),
		func() error {
			_, err := EmitArg(&Arg{Name: "i", DType: tensor.F64, Lines: kdesc.Lines{Outer: 1, Size: 2, Inner: 1}, Max: true})
			return err
		}(),
		func() error {
			_, err := EmitArg(&Arg{Name: "j", DType: tensor.F32, Lines: kdesc.Lines{Outer: 2, Size: 0, Inner: 1}})
			return err
		}(),
		func() error {
			_, err := EmitPool(&Pool{Name: "k", DType: tensor.F32, Window: kdesc.Window{N: 1, C: 1, H: 4, W: 4, OH: 1, OW: 1, KH: 2, KW: 2, SH: 1, SW: 1, DH: 2, DW: 1}, Max: true})
			return err
		}(),
		func() error {
			_, err := EmitBatchNorm(&BatchNorm{Name: "l", DType: tensor.I32, N: 1, C: 2, Spatial: 3})
			return err
		}(),
		func() error {
			_, err := EmitRoPE(&RoPE{Name: "m", DType: tensor.I64, Rows: 2, Seq: 2, Half: 2})
			return err
		}(),
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}
