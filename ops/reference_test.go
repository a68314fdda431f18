package ops_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// TestReference runs every numpy/torch reference case through a one-op
// graph and ops.Interpret. A missing kernel fails its case: coverage is
// the point.
func TestReference(t *testing.T) {
	cases, err := loadRefCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			g, feeds, err := buildCase(c)
			if err != nil {
				t.Fatalf("%s: building: %v", c.file, err)
			}
			got, err := ops.Interpret(g, feeds)
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			if len(got) != len(c.Outputs) {
				t.Fatalf("%d outputs, want %d", len(got), len(c.Outputs))
			}
			for i, j := range c.Outputs {
				want, err := j.Decode()
				if err != nil {
					t.Fatal(err)
				}
				if err := compare(got[i], want, c.RTol, c.ATol); err != nil {
					t.Errorf("%s: output %d: %v", c.file, i, err)
				}
			}
		})
	}
}

// TestReferenceCoverage keeps the data from silently shrinking: every op
// kind except the sources has cases, names are unique, every op name
// parses.
func TestReferenceCoverage(t *testing.T) {
	cases, err := loadRefCases()
	if err != nil {
		t.Fatal(err)
	}
	count := map[graph.Op]int{}
	names := map[string]bool{}
	for _, c := range cases {
		op, err := graph.ParseOp(c.Op)
		if err != nil {
			t.Errorf("case %s: %v", c.Name, err)
		}
		count[op]++
		if names[c.Name] {
			t.Errorf("duplicate case name %s", c.Name)
		}
		names[c.Name] = true
		if c.RTol < 0 || c.ATol < 0 || len(c.Outputs) == 0 {
			t.Errorf("case %s: rtol %v atol %v, %d outputs", c.Name, c.RTol, c.ATol, len(c.Outputs))
		}
	}
	for _, op := range graph.Ops() {
		if op == graph.OpLoop || op == graph.OpLoopOutput {
			continue // a body graph does not fit these one-op cases: api_loop_test.go and onnx's loop tests check them
		}
		if !op.IsSource() && count[op] == 0 {
			t.Errorf("no reference case for %v", op)
		}
	}
	if len(cases) < 600 {
		t.Errorf("only %d reference cases, want at least 600", len(cases))
	}
}

// TestReferenceDataSane checks the generator's own output, independent of
// any kernel: for same-shape Add, Sub, Mul and Neg on f32/f64 the expected
// values must be the Go float64 result rounded to the dtype.
func TestReferenceDataSane(t *testing.T) {
	cases, err := loadRefCases()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range cases {
		f, ok := map[string]func(x, y float64) float64{
			"Add": func(x, y float64) float64 { return x + y },
			"Sub": func(x, y float64) float64 { return x - y },
			"Mul": func(x, y float64) float64 { return x * y },
			"Neg": func(x, _ float64) float64 { return -x },
		}[c.Op]
		if !ok || (c.Inputs[0].DType != "f32" && c.Inputs[0].DType != "f64") {
			continue
		}
		ins := make([]tensor.Tensor, len(c.Inputs))
		for i, j := range c.Inputs {
			if ins[i], err = j.Decode(); err != nil {
				t.Fatal(err)
			}
		}
		want, err := c.Outputs[0].Decode()
		if err != nil {
			t.Fatal(err)
		}
		if len(ins) == 2 && !ins[1].Shape.Equal(ins[0].Shape) {
			continue
		}
		x, w := ins[0].Float64s(), want.Float64s()
		y := make([]float64, len(x))
		if len(ins) == 2 {
			y = ins[1].Float64s()
		}
		for i := range x {
			v := f(x[i], y[i])
			if want.DType == tensor.F32 {
				v = float64(float32(v))
			}
			if v != w[i] && !(math.IsNaN(v) && math.IsNaN(w[i])) {
				t.Fatalf("%s element %d: data says %v, Go computes %v", c.Name, i, w[i], v)
			}
		}
		checked++
	}
	if checked < 8 {
		t.Fatalf("only %d cases cross-checked", checked)
	}
}

// buildCase makes the one-op graph of a case, with inputs in0, in1, ...
func buildCase(c refCase) (*graph.Graph, map[string]tensor.Tensor, error) {
	op, err := graph.ParseOp(c.Op)
	if err != nil {
		return nil, nil, err
	}
	g := graph.New()
	feeds := map[string]tensor.Tensor{}
	in := make([]*graph.Node, len(c.Inputs))
	for i, j := range c.Inputs {
		v, err := j.Decode()
		if err != nil {
			return nil, nil, fmt.Errorf("input %d: %w", i, err)
		}
		name := fmt.Sprintf("in%d", i)
		in[i] = g.Input(name, v.DType, v.Shape...)
		feeds[name] = v
	}
	a := &attrReader{m: c.Attrs}
	out, err := buildOp(g, op, a, in)
	if err == nil {
		err = a.err
	}
	if err != nil {
		return nil, nil, err
	}
	g.Output(out)
	if err := g.Err(); err != nil {
		return nil, nil, err
	}
	return g, feeds, nil
}

// Builder methods of the ops whose only arguments are their inputs.
var (
	unaryBuilders = map[graph.Op]func(*graph.Graph, *graph.Node) *graph.Node{
		graph.OpNeg: (*graph.Graph).Neg, graph.OpAbs: (*graph.Graph).Abs, graph.OpExp: (*graph.Graph).Exp,
		graph.OpLog: (*graph.Graph).Log, graph.OpSqrt: (*graph.Graph).Sqrt, graph.OpRsqrt: (*graph.Graph).Rsqrt,
		graph.OpReciprocal: (*graph.Graph).Reciprocal, graph.OpTanh: (*graph.Graph).Tanh,
		graph.OpSigmoid: (*graph.Graph).Sigmoid, graph.OpRelu: (*graph.Graph).Relu, graph.OpGelu: (*graph.Graph).Gelu,
		graph.OpGeluTanh: (*graph.Graph).GeluTanh, graph.OpSilu: (*graph.Graph).Silu, graph.OpErf: (*graph.Graph).Erf,
		graph.OpSin: (*graph.Graph).Sin, graph.OpCos: (*graph.Graph).Cos, graph.OpFloor: (*graph.Graph).Floor,
		graph.OpCeil: (*graph.Graph).Ceil, graph.OpRound: (*graph.Graph).Round, graph.OpNot: (*graph.Graph).Not,
		graph.OpGlobalAvgPool: (*graph.Graph).GlobalAvgPool,
		graph.OpTan:           (*graph.Graph).Tan, graph.OpSinh: (*graph.Graph).Sinh, graph.OpCosh: (*graph.Graph).Cosh,
		graph.OpAsin: (*graph.Graph).Asin, graph.OpAcos: (*graph.Graph).Acos, graph.OpAtan: (*graph.Graph).Atan,
		graph.OpAsinh: (*graph.Graph).Asinh, graph.OpAcosh: (*graph.Graph).Acosh, graph.OpAtanh: (*graph.Graph).Atanh,
		graph.OpSoftplus: (*graph.Graph).Softplus, graph.OpSoftsign: (*graph.Graph).Softsign,
		graph.OpSign: (*graph.Graph).Sign,
	}
	binaryBuilders = map[graph.Op]func(*graph.Graph, *graph.Node, *graph.Node) *graph.Node{
		graph.OpAdd: (*graph.Graph).Add, graph.OpSub: (*graph.Graph).Sub, graph.OpMul: (*graph.Graph).Mul,
		graph.OpDiv: (*graph.Graph).Div, graph.OpPow: (*graph.Graph).Pow, graph.OpMax: (*graph.Graph).Max,
		graph.OpMin: (*graph.Graph).Min, graph.OpEqual: (*graph.Graph).Equal, graph.OpLess: (*graph.Graph).Less,
		graph.OpLessOrEqual: (*graph.Graph).LessOrEqual, graph.OpGreater: (*graph.Graph).Greater,
		graph.OpGreaterOrEqual: (*graph.Graph).GreaterOrEqual, graph.OpAnd: (*graph.Graph).And,
		graph.OpOr: (*graph.Graph).Or, graph.OpMatMul: (*graph.Graph).MatMul,
		graph.OpXor: (*graph.Graph).Xor, graph.OpMod: (*graph.Graph).Mod, graph.OpFmod: (*graph.Graph).Fmod,
		graph.OpShiftLeft: (*graph.Graph).ShiftLeft, graph.OpShiftRight: (*graph.Graph).ShiftRight,
	}
	reduceBuilders = map[graph.Op]func(*graph.Graph, *graph.Node, bool, ...int) *graph.Node{
		graph.OpReduceSum: (*graph.Graph).ReduceSum, graph.OpReduceMean: (*graph.Graph).ReduceMean,
		graph.OpReduceMax: (*graph.Graph).ReduceMax, graph.OpReduceMin: (*graph.Graph).ReduceMin,
		graph.OpReduceProd: (*graph.Graph).ReduceProd,
	}
	padModes = map[string]graph.PadMode{"constant": graph.PadConstant, "reflect": graph.PadReflect, "edge": graph.PadEdge}
)

// buildOp maps an op name and its JSON attributes to the builder call.
func buildOp(g *graph.Graph, op graph.Op, a *attrReader, in []*graph.Node) (*graph.Node, error) {
	need := func(lo, hi int) error {
		if len(in) < lo || len(in) > hi {
			return fmt.Errorf("%v with %d inputs, want %d..%d", op, len(in), lo, hi)
		}
		return nil
	}
	opt := func(i int) *graph.Node { // optional trailing input
		if i < len(in) {
			return in[i]
		}
		return nil
	}
	if f, ok := unaryBuilders[op]; ok {
		if err := need(1, 1); err != nil {
			return nil, err
		}
		return f(g, in[0]), nil
	}
	if f, ok := binaryBuilders[op]; ok {
		if err := need(2, 2); err != nil {
			return nil, err
		}
		return f(g, in[0], in[1]), nil
	}
	if f, ok := reduceBuilders[op]; ok {
		if err := need(1, 1); err != nil {
			return nil, err
		}
		return f(g, in[0], a.bool("keepdims"), a.ints("axes")...), nil
	}
	if err := need(1, 1<<20); err != nil {
		return nil, err
	}
	x := in[0]
	switch op {
	case graph.OpLeakyRelu:
		return g.LeakyRelu(x, a.f32("alpha")), nil
	case graph.OpElu:
		return g.Elu(x, a.f32("alpha")), nil
	case graph.OpCelu:
		return g.Celu(x, a.f32("alpha")), nil
	case graph.OpThresholdedRelu:
		return g.ThresholdedRelu(x, a.f32("alpha")), nil
	case graph.OpSelu:
		return g.Selu(x, a.f32("alpha"), a.f32("gamma")), nil
	case graph.OpShrink:
		return g.Shrink(x, a.f32("lambd"), a.f32("bias")), nil
	case graph.OpClip:
		return g.Clip(x, a.bound("min", -inf), a.bound("max", inf)), nil
	case graph.OpWhere:
		if err := need(3, 3); err != nil {
			return nil, err
		}
		return g.Where(x, in[1], in[2]), nil
	case graph.OpCast:
		dt, err := tensor.ParseDType(a.str("to"))
		if err != nil && a.err == nil {
			return nil, err
		}
		return g.Cast(x, dt), nil
	case graph.OpGemm:
		if err := need(2, 3); err != nil {
			return nil, err
		}
		return g.Gemm(x, in[1], opt(2), a.f32("alpha"), a.f32("beta"), a.bool("transA"), a.bool("transB")), nil
	case graph.OpArgMax:
		return g.ArgMax(x, a.int("axis"), a.bool("keepdims")), nil
	case graph.OpArgMin:
		return g.ArgMin(x, a.int("axis"), a.bool("keepdims")), nil
	case graph.OpSoftmax:
		return g.Softmax(x, a.int("axis")), nil
	case graph.OpLogSoftmax:
		return g.LogSoftmax(x, a.int("axis")), nil
	case graph.OpCumSum:
		return g.CumSum(x, a.int("axis"), a.bool("exclusive"), a.bool("reverse")), nil
	case graph.OpLayerNorm:
		if err := need(1, 3); err != nil {
			return nil, err
		}
		return g.LayerNorm(x, opt(1), opt(2), a.int("axis"), a.f32("eps")), nil
	case graph.OpRMSNorm:
		if err := need(1, 2); err != nil {
			return nil, err
		}
		return g.RMSNorm(x, opt(1), a.int("axis"), a.f32("eps")), nil
	case graph.OpBatchNorm:
		if err := need(5, 5); err != nil {
			return nil, err
		}
		return g.BatchNorm(x, in[1], in[2], in[3], in[4], a.f32("eps")), nil
	case graph.OpInstanceNorm:
		if err := need(3, 3); err != nil {
			return nil, err
		}
		return g.InstanceNorm(x, in[1], in[2], a.f32("eps")), nil
	case graph.OpTopK: // output 0: the values, 1: the indices
		v, i := g.TopK(x, a.int("k"), a.int("axis"), a.bool("smallest"))
		if a.int("output") == 1 {
			return i, nil
		}
		return v, nil
	case graph.OpConv2D:
		if err := need(2, 3); err != nil {
			return nil, err
		}
		o := graph.ConvOpts{Strides: a.ints("strides"), Pads: a.ints("pads"), Dilations: a.ints("dilations"), Groups: a.int("groups")}
		return g.Conv2D(x, in[1], opt(2), o), nil
	case graph.OpMaxPool2D, graph.OpAvgPool2D:
		o := graph.PoolOpts{Kernel: a.ints("kernel"), Strides: a.ints("strides"), Pads: a.ints("pads"), CountPad: a.bool("count_pad")}
		if op == graph.OpMaxPool2D {
			return g.MaxPool2D(x, o), nil
		}
		return g.AvgPool2D(x, o), nil
	case graph.OpMaxPoolND, graph.OpAvgPoolND: // MaxPoolND output 0: the values, 1: the flat indices
		o := graph.PoolNDOpts{Kernel: a.ints("kernel"), Strides: a.ints("strides"), Pads: a.ints("pads"),
			Dilations: a.ints("dilations"), CountPad: a.bool("count_pad"), ColMajor: a.bool("col_major")}
		if op == graph.OpAvgPoolND {
			return g.AvgPoolND(x, o), nil
		}
		v, i := g.MaxPoolND(x, o)
		if a.int("output") == 1 {
			return i, nil
		}
		return v, nil
	case graph.OpMaxUnpool:
		if err := need(2, 2); err != nil {
			return nil, err
		}
		return g.MaxUnpool(x, in[1], a.ints("shape")), nil
	case graph.OpGridSample:
		if err := need(2, 2); err != nil {
			return nil, err
		}
		return g.GridSample(x, in[1], graph.GridSampleSpec{Mode: graph.SampleMode(a.int("mode")),
			Padding: graph.SamplePadding(a.int("padding")), AlignCorners: a.bool("align_corners")}), nil
	case graph.OpRoiAlign:
		if err := need(3, 3); err != nil {
			return nil, err
		}
		return g.RoiAlign(x, in[1], in[2], graph.RoiAlignSpec{OutH: a.int("out_h"), OutW: a.int("out_w"),
			SamplingRatio: a.int("sampling_ratio"), SpatialScale: a.f32("spatial_scale"), HalfPixel: a.bool("half_pixel")}), nil
	case graph.OpNonMaxSuppression:
		if err := need(2, 2); err != nil {
			return nil, err
		}
		s := graph.NMSSpec{MaxPerClass: a.int("max_per_class"), IOU: float64(a.f32("iou")), CenterPoint: a.bool("center_point")}
		if _, ok := a.m["min_score"]; ok {
			s.MinScore, s.HasMinScore = float64(a.f32("min_score")), true
		}
		return g.NonMaxSuppression(x, in[1], s), nil
	case graph.OpDet:
		return g.Det(x), nil
	case graph.OpGroupedMatMul:
		if err := need(3, 3); err != nil {
			return nil, err
		}
		return g.GroupedMatMul(x, in[1], in[2]), nil
	case graph.OpMoE:
		if err := need(6, 6); err != nil {
			return nil, err
		}
		return g.MoEExperts(x, in[1], in[2], in[3], in[4], in[5]), nil
	case graph.OpQuantizeLinear, graph.OpDequantizeLinear: // x, scale [, zero point]
		if err := need(2, 3); err != nil {
			return nil, err
		}
		if op == graph.OpQuantizeLinear {
			return g.QuantizeLinear(x, in[1], opt(2), a.int("axis")), nil
		}
		return g.DequantizeLinear(x, in[1], opt(2), a.int("axis")), nil
	case graph.OpDynamicQuantizeLinear: // output 0: q, 1: the scale, 2: the zero point
		outs := make([]*graph.Node, 3)
		outs[0], outs[1], outs[2] = g.DynamicQuantizeLinear(x)
		if o := a.int("output"); o >= 0 && o < 3 {
			return outs[o], nil
		}
		return nil, fmt.Errorf("DynamicQuantizeLinear output %d", a.int("output"))
	case graph.OpMatMulInteger, graph.OpConvInteger: // a, b [, a's zero point [, b's]]
		if err := need(2, 4); err != nil {
			return nil, err
		}
		if op == graph.OpMatMulInteger {
			return g.MatMulInteger(x, in[1], opt(2), opt(3)), nil
		}
		o := graph.ConvOpts{Strides: a.ints("strides"), Pads: a.ints("pads"), Dilations: a.ints("dilations"), Groups: a.int("groups")}
		return g.ConvInteger(x, in[1], opt(2), opt(3), o), nil
	case graph.OpReshape:
		return g.Reshape(x, a.ints("shape")...), nil
	case graph.OpTranspose:
		return g.Transpose(x, a.ints("perm")...), nil
	case graph.OpConcat:
		return g.Concat(a.int("axis"), in...), nil
	case graph.OpSplit:
		pieces := g.Split(x, a.int("axis"), a.ints("sizes")...)
		i := a.int("index")
		if i < 0 || i >= len(pieces) {
			return nil, fmt.Errorf("split piece %d of %d", i, len(pieces))
		}
		return pieces[i], nil
	case graph.OpSlice:
		sp := graph.SliceSpec{Axes: a.ints("axes"), Starts: a.ints("starts"), Ends: a.ints("ends"), Steps: a.ints("steps")}
		return g.Slice(x, sp), nil
	case graph.OpGather:
		if err := need(2, 2); err != nil {
			return nil, err
		}
		return g.Gather(x, in[1], a.int("axis")), nil
	case graph.OpExpand:
		return g.Expand(x, a.ints("shape")...), nil
	case graph.OpGatherElements, graph.OpGatherND:
		if err := need(2, 2); err != nil {
			return nil, err
		}
		if op == graph.OpGatherND {
			return g.GatherND(x, in[1], a.int("batch_dims")), nil
		}
		return g.GatherElements(x, in[1], a.int("axis")), nil
	case graph.OpScatterElements, graph.OpScatterND:
		if err := need(3, 3); err != nil {
			return nil, err
		}
		red, ok := graph.ParseReduction(a.str("reduction"))
		if !ok && a.err == nil {
			return nil, fmt.Errorf("unknown reduction %q", a.str("reduction"))
		}
		if op == graph.OpScatterND {
			return g.ScatterND(x, in[1], in[2], red), nil
		}
		return g.ScatterElements(x, in[1], in[2], a.int("axis"), red), nil
	case graph.OpSqueeze:
		return g.Squeeze(x, a.ints("axes")...), nil
	case graph.OpUnsqueeze:
		return g.Unsqueeze(x, a.ints("axes")...), nil
	case graph.OpFlatten:
		return g.Flatten(x, a.int("axis")), nil
	case graph.OpPad:
		mode, ok := padModes[a.str("mode")]
		if !ok && a.err == nil {
			return nil, fmt.Errorf("unknown pad mode %q", a.str("mode"))
		}
		return g.Pad(x, a.ints("pads"), mode, a.f32("value")), nil
	case graph.OpTile:
		return g.Tile(x, a.ints("reps")...), nil
	case graph.OpResize:
		return g.Resize(x, resizeSpecOf(a)), nil
	case graph.OpConvTranspose:
		if err := need(2, 3); err != nil {
			return nil, err
		}
		o := graph.ConvTransposeOpts{Strides: a.ints("strides"), Dilations: a.ints("dilations"), Pads: a.ints("pads"), Groups: a.int("groups")}
		return g.ConvTranspose(x, in[1], opt(2), o), nil
	case graph.OpAttention:
		if err := need(3, 4); err != nil {
			return nil, err
		}
		return g.Attention(x, in[1], in[2], opt(3), graph.AttentionOpts{Causal: a.bool("causal"), Scale: a.f32("scale")}), nil
	case graph.OpRoPE:
		if err := need(3, 3); err != nil {
			return nil, err
		}
		return g.RoPE(x, in[1], in[2], a.bool("interleaved")), nil
	}
	return nil, fmt.Errorf("no builder mapping for op %v", op)
}

// compare checks got against want: same dtype and shape; integers and
// bools exactly; floats within atol + rtol*|want|, NaN only with NaN and
// infinities only with the same infinity. It reports the first few bad
// elements.
func compare(got, want tensor.Tensor, rtol, atol float64) error {
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		return fmt.Errorf("got %v, want %v", got, want)
	}
	if len(got.Data) != len(want.Data) {
		return fmt.Errorf("got %d bytes, want %d", len(got.Data), len(want.Data))
	}
	var bad []string
	report := func(i int, g, w any) {
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("[%d] got %v want %v", i, g, w))
		} else if len(bad) == 5 {
			bad = append(bad, "...")
		}
	}
	switch {
	case want.DType == tensor.Bool:
		for i := range want.Data {
			if (got.Data[i] != 0) != (want.Data[i] != 0) {
				report(i, got.Data[i] != 0, want.Data[i] != 0)
			}
		}
	case want.DType.IsInt():
		// Bytes, not float64s: I64 beyond 2^53 must match exactly.
		sz := want.DType.Size()
		gv, wv := got.Float64s(), want.Float64s()
		for i := range wv {
			if string(got.Data[i*sz:(i+1)*sz]) != string(want.Data[i*sz:(i+1)*sz]) {
				report(i, gv[i], wv[i])
			}
		}
	default:
		gv, wv := got.Float64s(), want.Float64s()
		for i, w := range wv {
			if g := gv[i]; !approx.Close(g, w, atol+rtol*math.Abs(w)) {
				report(i, g, w)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%v (rtol %g, atol %g): %v", want, rtol, atol, bad)
	}
	return nil
}
