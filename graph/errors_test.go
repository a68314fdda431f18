package graph

import (
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// fixture holds valid nodes every error case can use.
type fixture struct {
	x     *Node // f32[2 3]
	v     *Node // f32[4]
	i     *Node // i32[2 3]
	b     *Node // bool[2 3]
	img   *Node // f32[1 4 8 8]
	other *Node // f32[2 3] of another graph
}

func newFixture(g *Graph) fixture {
	return fixture{
		x:     g.Input("x", tensor.F32, 2, 3),
		v:     g.Input("v", tensor.F32, 4),
		i:     g.Input("i", tensor.I32, 2, 3),
		b:     g.Input("b", tensor.Bool, 2, 3),
		img:   g.Input("img", tensor.F32, 1, 4, 8, 8),
		other: New().Input("x", tensor.F32, 2, 3),
	}
}

type errCase struct {
	name  string
	build func(g *Graph, f fixture)
	words []string // the error names the op or node and the problem
}

func typeErrCases() []errCase {
	return []errCase{
		{"Add/shape", func(g *Graph, f fixture) { g.Add(f.x, f.v) }, []string{"Add", "broadcast", "[2 3]", "[4]"}},
		{"Mul/dtypes", func(g *Graph, f fixture) { g.Mul(f.x, f.i) }, []string{"Mul", "f32", "i32", "differ"}},
		{"Less/dtypes", func(g *Graph, f fixture) { g.Less(f.b, f.x) }, []string{"Less", "differ"}},
		{"Where/branch-dtypes", func(g *Graph, f fixture) { g.Where(f.b, f.x, f.i) }, []string{"Where", "differ"}},
		{"Where/cond", func(g *Graph, f fixture) { g.Where(f.x, f.x, f.x) }, []string{"Where", "condition", "bool"}},
		{"Where/shape", func(g *Graph, f fixture) { g.Where(f.b, f.x, f.v) }, []string{"Where", "broadcast"}},
		{"MatMul/inner", func(g *Graph, f fixture) { g.MatMul(f.x, g.Input("w", tensor.F32, 4, 5)) }, []string{"MatMul", "inner dims", "3 vs 4"}},
		{"MatMul/vec-inner", func(g *Graph, f fixture) { g.MatMul(f.v, f.x) }, []string{"MatMul", "inner dims"}},
		{"MatMul/batch", func(g *Graph, f fixture) {
			g.MatMul(g.Input("a", tensor.F32, 2, 3, 4), g.Input("c", tensor.F32, 3, 4, 5))
		}, []string{"MatMul", "batch"}},
		{"MatMul/scalar", func(g *Graph, f fixture) { g.MatMul(g.Input("s", tensor.F32), f.v) }, []string{"MatMul", "rank"}},
		{"MatMul/int", func(g *Graph, f fixture) { g.MatMul(f.i, g.Input("j", tensor.I32, 3, 2)) }, []string{"MatMul", "i32", "not supported"}},
		{"MatMul/mixed", func(g *Graph, f fixture) { g.MatMul(f.x, g.Input("h", tensor.F16, 3, 2)) }, []string{"MatMul", "f16", "differs"}},
		{"Gemm/inner", func(g *Graph, f fixture) { g.Gemm(f.x, f.x, nil, 1, 0, false, false) }, []string{"Gemm", "inner dims"}},
		{"Gemm/transposed-inner", func(g *Graph, f fixture) { g.Gemm(f.x, f.x, nil, 1, 0, true, true) }, []string{"Gemm", "inner dims"}},
		{"Gemm/rank", func(g *Graph, f fixture) { g.Gemm(f.v, f.v, nil, 1, 0, false, false) }, []string{"Gemm", "2-D"}},
		{"Gemm/C", func(g *Graph, f fixture) { g.Gemm(f.x, g.Input("w", tensor.F32, 3, 5), f.v, 1, 1, false, false) }, []string{"Gemm", "C [4]"}},
		{"Exp/i32", func(g *Graph, f fixture) { g.Exp(f.i) }, []string{"Exp", "i32", "not supported"}},
		{"Gelu/bool", func(g *Graph, f fixture) { g.Gelu(f.b) }, []string{"Gelu", "bool", "not supported"}},
		{"Neg/u8", func(g *Graph, f fixture) { g.Neg(g.Input("u", tensor.U8, 2)) }, []string{"Neg", "u8"}},
		{"Not/f32", func(g *Graph, f fixture) { g.Not(f.x) }, []string{"Not", "f32"}},
		{"And/f32", func(g *Graph, f fixture) { g.And(f.x, f.x) }, []string{"And", "bool", "f32"}},
		{"Or/i32", func(g *Graph, f fixture) { g.Or(f.i, f.i) }, []string{"Or", "bool"}},
		{"Xor/f32", func(g *Graph, f fixture) { g.Xor(f.x, f.x) }, []string{"Xor", "bool", "f32"}},
		{"ShiftLeft/i32", func(g *Graph, f fixture) { g.ShiftLeft(f.i, f.i) }, []string{"ShiftLeft", "u8", "i32"}},
		{"Mod/bool", func(g *Graph, f fixture) { g.Mod(f.b, f.b) }, []string{"Mod", "bool", "not supported"}},
		{"Celu/alpha0", func(g *Graph, f fixture) { g.Celu(f.x, 0) }, []string{"Celu", "alpha 0"}},
		{"Asin/i32", func(g *Graph, f fixture) { g.Asin(f.i) }, []string{"Asin", "i32", "not supported"}},
		{"Sign/bool", func(g *Graph, f fixture) { g.Sign(f.b) }, []string{"Sign", "bool", "not supported"}},
		{"Add/bool", func(g *Graph, f fixture) { g.Add(f.b, f.b) }, []string{"Add", "bool", "not supported"}},
		{"Greater/bool", func(g *Graph, f fixture) { g.Greater(f.b, f.b) }, []string{"Greater", "bool"}},
		{"ReduceMean/i32", func(g *Graph, f fixture) { g.ReduceMean(f.i, false) }, []string{"ReduceMean", "i32"}},
		{"ReduceSum/bool", func(g *Graph, f fixture) { g.ReduceSum(f.b, false) }, []string{"ReduceSum", "bool"}},
		{"Softmax/i32", func(g *Graph, f fixture) { g.Softmax(f.i, 0) }, []string{"Softmax", "i32"}},
		{"ArgMax/bool", func(g *Graph, f fixture) { g.ArgMax(f.b, 0, false) }, []string{"ArgMax", "bool"}},
		{"LayerNorm/int", func(g *Graph, f fixture) { g.LayerNorm(f.i, nil, nil, -1, 1e-5) }, []string{"LayerNorm", "i32"}},
		{"Conv2D/int", func(g *Graph, f fixture) {
			g.Conv2D(g.Input("xi", tensor.I32, 1, 1, 3, 3), g.Input("wi", tensor.I32, 1, 1, 1, 1), nil, ConvOpts{})
		}, []string{"Conv2D", "i32"}},
		{"Cast/invalid", func(g *Graph, f fixture) { g.Cast(f.x, tensor.Invalid) }, []string{"Cast", "invalid target dtype"}},
		{"Cast/out-of-range", func(g *Graph, f fixture) { g.Cast(f.x, tensor.DType(99)) }, []string{"Cast", "invalid"}},
		{"Gather/float-indices", func(g *Graph, f fixture) { g.Gather(f.x, f.v, 0) }, []string{"Gather", "indices", "f32"}},
		{"Attention/mask-dtype", func(g *Graph, f fixture) {
			q := g.Input("q", tensor.F32, 1, 2, 3, 4)
			g.Attention(q, q, q, g.Input("m", tensor.I32, 3, 3), AttentionOpts{})
		}, []string{"Attention", "mask dtype"}},
		{"Clip/min>max", func(g *Graph, f fixture) { g.Clip(f.x, 2, 1) }, []string{"Clip", "min 2 > max 1"}},
	}
}

// axisErrCases covers out-of-range (positive and negative) and repeated
// axes for every op that takes an axis; inputs are rank 2.
func axisErrCases() []errCase {
	type ax struct {
		name string
		f    func(g *Graph, x *Node, axis int)
		bad  []int // out of range for rank 2
	}
	std := []int{2, -3}
	all := []ax{
		{"ReduceSum", func(g *Graph, x *Node, a int) { g.ReduceSum(x, false, a) }, std},
		{"ReduceMean", func(g *Graph, x *Node, a int) { g.ReduceMean(x, true, 0, a) }, std},
		{"ReduceMax", func(g *Graph, x *Node, a int) { g.ReduceMax(x, false, a) }, std},
		{"ReduceMin", func(g *Graph, x *Node, a int) { g.ReduceMin(x, false, a) }, std},
		{"ReduceProd", func(g *Graph, x *Node, a int) { g.ReduceProd(x, false, a) }, std},
		{"ArgMax", func(g *Graph, x *Node, a int) { g.ArgMax(x, a, false) }, std},
		{"ArgMin", func(g *Graph, x *Node, a int) { g.ArgMin(x, a, true) }, std},
		{"Softmax", func(g *Graph, x *Node, a int) { g.Softmax(x, a) }, std},
		{"LogSoftmax", func(g *Graph, x *Node, a int) { g.LogSoftmax(x, a) }, std},
		{"CumSum", func(g *Graph, x *Node, a int) { g.CumSum(x, a, false, false) }, std},
		{"TopK", func(g *Graph, x *Node, a int) { g.TopK(x, 1, a, false) }, std},
		{"LayerNorm", func(g *Graph, x *Node, a int) { g.LayerNorm(x, nil, nil, a, 1e-5) }, std},
		{"LayerNorm", func(g *Graph, x *Node, a int) { g.LayerNorm(x, nil, g.Param("bias", tensor.F32, 3), a, 1e-5) }, []int{3, -3}},
		{"RMSNorm", func(g *Graph, x *Node, a int) { g.RMSNorm(x, nil, a, 1e-5) }, std},
		{"Concat", func(g *Graph, x *Node, a int) { g.Concat(a, x, x) }, std},
		{"Split", func(g *Graph, x *Node, a int) { g.Split(x, a, 1, 1) }, std},
		{"Split", func(g *Graph, x *Node, a int) { g.SplitEqual(x, a, 1) }, std},
		{"Slice", func(g *Graph, x *Node, a int) {
			g.Slice(x, SliceSpec{Axes: []int{a}, Starts: []int{0}, Ends: []int{1}})
		}, std},
		{"Gather", func(g *Graph, x *Node, a int) { g.Gather(x, g.Input("idx", tensor.I64, 2), a) }, std},
		{"Squeeze", func(g *Graph, x *Node, a int) { g.Squeeze(x, a) }, std},
		{"Unsqueeze", func(g *Graph, x *Node, a int) { g.Unsqueeze(x, a) }, []int{3, -4}}, // result rank 3
		{"Flatten", func(g *Graph, x *Node, a int) { g.Flatten(x, a) }, []int{3, -3}},     // axis == rank is fine
		{"Transpose", func(g *Graph, x *Node, a int) { g.Transpose(x, 0, a) }, []int{2, -1}},
	}
	var cs []errCase
	for _, c := range all {
		for _, a := range c.bad {
			word := "axis"
			if c.name == "Transpose" {
				word = "perm"
			}
			cs = append(cs, errCase{
				name:  c.name + "/axis" + itoa(a),
				build: func(g *Graph, f fixture) { c.f(g, f.x, a) },
				words: []string{c.name, word, itoa(a)},
			})
		}
	}
	rep := func(name string, f func(g *Graph, x *Node), words ...string) errCase {
		return errCase{"repeated/" + name, func(g *Graph, fx fixture) { f(g, fx.x) }, append([]string{name}, words...)}
	}
	return append(cs,
		rep("ReduceSum", func(g *Graph, x *Node) { g.ReduceSum(x, false, 1, -1) }, "repeated"),
		rep("ReduceMax", func(g *Graph, x *Node) { g.ReduceMax(x, true, 0, 0) }, "repeated"),
		rep("Squeeze", func(g *Graph, x *Node) { g.Squeeze(g.Reshape(x, 1, 6), 0, -2) }, "repeated"),
		rep("Unsqueeze", func(g *Graph, x *Node) { g.Unsqueeze(x, 1, -3) }, "repeated"),
		rep("Slice", func(g *Graph, x *Node) {
			g.Slice(x, SliceSpec{Axes: []int{0, -2}, Starts: []int{0, 0}, Ends: []int{1, 1}})
		}, "repeated"),
		rep("Transpose", func(g *Graph, x *Node) { g.Transpose(x, 1, 1) }, "perm"),
	)
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func nameErrCases() []errCase {
	return []errCase{
		{"Input/negative-dim", func(g *Graph, f fixture) { g.Input("neg", tensor.F32, 2, -1) }, []string{"Input", `"neg"`, "negative"}},
		{"Param/negative-dim", func(g *Graph, f fixture) { g.Param("w", tensor.F32, -3) }, []string{"Param", `"w"`, "negative"}},
		{"Input/too-large", func(g *Graph, f fixture) { g.Input("big", tensor.F32, 1<<30, 1<<30) }, []string{"Input", `"big"`, "elements"}},
		{"Input/invalid-dtype", func(g *Graph, f fixture) { g.Input("bad", tensor.Invalid, 2) }, []string{"Input", `"bad"`, "invalid dtype"}},
		{"Param/unknown-dtype", func(g *Graph, f fixture) { g.Param("bad", tensor.DType(200), 2) }, []string{"Param", `"bad"`, "invalid dtype"}},
		{"Input/empty-name", func(g *Graph, f fixture) { g.Input("", tensor.F32, 2) }, []string{"Input", "empty name"}},
		{"Input/duplicate", func(g *Graph, f fixture) { g.Input("x", tensor.F32, 2) }, []string{"Input", "duplicate name", `"x"`}},
		{"Param/duplicate-of-input", func(g *Graph, f fixture) { g.Param("v", tensor.F32, 4) }, []string{"Param", "duplicate name", `"v"`}},
		{"Input/duplicate-of-generated", func(g *Graph, f fixture) {
			r := g.Relu(f.x)
			g.Input(r.Name, tensor.F32, 2)
		}, []string{"Input", "duplicate name", "relu_"}},
		{"SetName/collision", func(g *Graph, f fixture) { g.SetName(g.Relu(f.x), "v") }, []string{"SetName", "duplicate name", `"v"`}},
		{"SetName/empty", func(g *Graph, f fixture) { g.SetName(f.x, "") }, []string{"SetName", "empty name"}},
		{"SetName/foreign", func(g *Graph, f fixture) { g.SetName(f.other, "y") }, []string{"SetName", "another graph"}},
		{"SetName/nil", func(g *Graph, f fixture) { g.SetName(nil, "y") }, []string{"SetName", `"y"`, "invalid node"}},
		{"Output/duplicate", func(g *Graph, f fixture) {
			g.OutputNamed("out", f.x)
			g.OutputNamed("out", f.v)
		}, []string{"Output", "duplicate output name", `"out"`}},
		{"Output/duplicate-generated", func(g *Graph, f fixture) {
			g.OutputNamed("output1", f.x)
			g.Output(f.v, f.i)
		}, []string{"duplicate output name", `"output1"`}},
		{"Output/empty-name", func(g *Graph, f fixture) { g.OutputNamed("", f.x) }, []string{"Output", "empty name"}},
		{"Output/nil", func(g *Graph, f fixture) { g.Output(nil) }, []string{"Output", "invalid node"}},
		{"Output/foreign", func(g *Graph, f fixture) { g.Output(f.other) }, []string{"Output", "another graph"}},
		{"Add/nil", func(g *Graph, f fixture) { g.Add(f.x, nil) }, []string{"Add", "input 1 is nil"}},
		{"Relu/nil", func(g *Graph, f fixture) { g.Relu(nil) }, []string{"Relu", "nil"}},
		{"Reshape/nil", func(g *Graph, f fixture) { g.Reshape(nil, 2) }, []string{"Reshape", "nil"}},
		{"Slice/nil", func(g *Graph, f fixture) { g.Slice(nil, SliceSpec{}) }, []string{"Slice", "nil"}},
		{"Split/nil", func(g *Graph, f fixture) { g.SplitEqual(nil, 0, 2) }, []string{"Split", "nil"}},
		{"Attention/nil-q", func(g *Graph, f fixture) { g.Attention(nil, f.img, f.img, nil, AttentionOpts{}) }, []string{"Attention", "input 0 is nil"}},
		// Without the mask in q's place the call would be a valid attention.
		{"Attention/nil-q-with-mask", func(g *Graph, f fixture) { g.Attention(nil, f.img, f.img, f.img, AttentionOpts{}) }, []string{"Attention", "input 0 is nil"}},
		{"Conv2D/nil-w", func(g *Graph, f fixture) { g.Conv2D(f.img, nil, f.v, ConvOpts{}) }, []string{"Conv2D", "input 1 is nil"}},
		{"Add/foreign", func(g *Graph, f fixture) { g.Add(f.x, f.other) }, []string{"Add", "another graph"}},
		{"Reshape/foreign", func(g *Graph, f fixture) { g.Reshape(f.other, 6) }, []string{"Reshape", "another graph"}},
		{"Add/invalid-placeholder", func(g *Graph, f fixture) {
			h := New()
			bad := h.Relu(nil) // fails h, not g
			g.Add(f.x, bad)
		}, []string{"Add", "input 1 is invalid"}},
		{"Apply/source", func(g *Graph, f fixture) { g.Apply(OpInput, Attrs{}) }, []string{"Apply", "Input"}},
		{"Apply/invalid-op", func(g *Graph, f fixture) { g.Apply(OpInvalid, Attrs{}, f.x) }, []string{"Apply", "Invalid"}},
		{"Apply/unknown-op", func(g *Graph, f fixture) { g.Apply(Op(250), Attrs{}, f.x) }, []string{"Op(250)", "unknown op"}},
		{"Apply/arity", func(g *Graph, f fixture) { g.Apply(OpAdd, Attrs{}, f.x) }, []string{"Add", "wrong number of inputs (1)"}},
		{"Apply/pool-dilations", func(g *Graph, f fixture) {
			g.Apply(OpMaxPool2D, Attrs{Kernel: []int{2, 2}, Dilations: []int{1}}, f.img)
		}, []string{"MaxPool2D", "dilations"}},
		{"Apply/pool-dilated", func(g *Graph, f fixture) {
			g.Apply(OpMaxPool2D, Attrs{Kernel: []int{2, 2}, Dilations: []int{2, 2}}, f.img)
		}, []string{"MaxPool2D", "dilations are not supported"}},
		{"Apply/slice-unnormalised", func(g *Graph, f fixture) {
			g.Apply(OpSlice, Attrs{Axes: []int{0}, Starts: []int{-1}, Ends: []int{2}, Steps: []int{1}}, f.x)
		}, []string{"Slice", "not normalised"}},
		{"Constant/bad-data", func(g *Graph, f fixture) {
			g.Constant(tensor.Tensor{DType: tensor.F32, Shape: sh(2), Data: make([]byte, 3)})
		}, []string{"Constant"}},
		{"ConstF32/count", func(g *Graph, f fixture) { g.ConstF32(sh(2, 2), []float32{1, 2, 3}) }, []string{"Constant"}},
	}
}

func shapeErrCases() []errCase {
	img := func(g *Graph, c int) *Node { return g.Input("xc", tensor.F32, 1, c, 8, 8) }
	w := func(g *Graph, dims ...int) *Node { return g.Param("w", tensor.F32, dims...) }
	return []errCase{
		{"Reshape/count", func(g *Graph, f fixture) { g.Reshape(f.x, 4, 2) }, []string{"Reshape", "cannot reshape", "[2 3]", "[4 2]"}},
		{"Reshape/two-minus-one", func(g *Graph, f fixture) { g.Reshape(f.x, -1, -1) }, []string{"Reshape", "more than one -1"}},
		{"Reshape/negative", func(g *Graph, f fixture) { g.Reshape(f.x, -2, -3) }, []string{"Reshape", "negative dim"}},
		{"Reshape/infer-indivisible", func(g *Graph, f fixture) { g.Reshape(f.x, 4, -1) }, []string{"Reshape", "cannot infer"}},
		{"Reshape/infer-with-zero", func(g *Graph, f fixture) { g.Reshape(f.x, 0, -1) }, []string{"Reshape", "cannot infer"}},
		{"Transpose/short", func(g *Graph, f fixture) { g.Transpose(f.x, 0) }, []string{"Transpose", "perm [0]", "rank 2"}},
		{"Transpose/long", func(g *Graph, f fixture) { g.Transpose(f.v, 0, 1) }, []string{"Transpose", "perm"}},
		{"Concat/none", func(g *Graph, f fixture) { g.Concat(0) }, []string{"Concat", "wrong number of inputs (0)"}},
		{"Concat/dtype", func(g *Graph, f fixture) { g.Concat(0, f.x, f.i) }, []string{"Concat", "dtype"}},
		{"Concat/shape", func(g *Graph, f fixture) { g.Concat(0, f.x, g.Input("y", tensor.F32, 2, 4)) }, []string{"Concat", "outside axis 0"}},
		{"Concat/rank", func(g *Graph, f fixture) { g.Concat(0, f.x, f.v) }, []string{"Concat", "rank"}},
		{"Split/sum", func(g *Graph, f fixture) { g.Split(f.x, 1, 1, 1) }, []string{"Split", "sum to 2", "has 3"}},
		{"Split/negative-size", func(g *Graph, f fixture) { g.Split(f.x, 1, 4, -1) }, []string{"Split", "negative"}},
		{"Split/no-sizes", func(g *Graph, f fixture) { g.Split(f.x, 0) }, []string{"Split", "no sizes"}},
		{"SplitEqual/indivisible", func(g *Graph, f fixture) { g.SplitEqual(f.x, 1, 2) }, []string{"Split", "equal pieces"}},
		{"SplitEqual/zero", func(g *Graph, f fixture) { g.SplitEqual(f.x, 1, 0) }, []string{"Split", "equal pieces"}},
		{"Slice/step0", func(g *Graph, f fixture) {
			g.Slice(f.x, SliceSpec{Starts: []int{0}, Ends: []int{2}, Steps: []int{0}})
		}, []string{"Slice", "step 0"}},
		{"Slice/lengths", func(g *Graph, f fixture) {
			g.Slice(f.x, SliceSpec{Starts: []int{0, 1}, Ends: []int{2}})
		}, []string{"Slice", "differ in length"}},
		{"Expand/incompatible", func(g *Graph, f fixture) { g.Expand(f.x, 4, 3) }, []string{"Expand", "broadcast"}},
		{"Expand/negative", func(g *Graph, f fixture) { g.Expand(f.v, -1, 1) }, []string{"Expand", "negative"}},
		{"Squeeze/not-one", func(g *Graph, f fixture) { g.Squeeze(f.x, 1) }, []string{"Squeeze", "size 3"}},
		{"Unsqueeze/none", func(g *Graph, f fixture) { g.Unsqueeze(f.x) }, []string{"Unsqueeze", "no axes"}},
		{"Pad/count", func(g *Graph, f fixture) { g.Pad(f.x, []int{1, 1}, PadConstant, 0) }, []string{"Pad", "need 4"}},
		{"Pad/negative", func(g *Graph, f fixture) { g.Pad(f.x, []int{0, -1, 0, 0}, PadConstant, 0) }, []string{"Pad", "negative"}},
		{"Pad/reflect-too-large", func(g *Graph, f fixture) { g.Pad(f.x, []int{0, 3, 0, 0}, PadReflect, 0) }, []string{"Pad", "reflect", "axis 1", "size 3"}},
		{"Pad/reflect-end", func(g *Graph, f fixture) { g.Pad(f.x, []int{0, 0, 2, 0}, PadReflect, 0) }, []string{"Pad", "reflect", "axis 0"}},
		{"Pad/edge-empty", func(g *Graph, f fixture) { g.Pad(g.Input("e", tensor.F32, 0), []int{1, 0}, PadEdge, 0) }, []string{"Pad", "edge", "empty"}},
		{"Pad/mode", func(g *Graph, f fixture) { g.Pad(f.x, []int{0, 0, 0, 0}, PadMode(9), 0) }, []string{"Pad", "mode"}},
		{"Pad/huge", func(g *Graph, f fixture) { g.Pad(f.v, []int{1 << 62, 1 << 62}, PadConstant, 0) }, []string{"Pad", "too large"}},
		{"Tile/count", func(g *Graph, f fixture) { g.Tile(f.x, 2) }, []string{"Tile", "one value per dim"}},
		{"Tile/negative", func(g *Graph, f fixture) { g.Tile(f.x, 1, -2) }, []string{"Tile", "negative"}},
		{"Tile/overflow", func(g *Graph, f fixture) { g.Tile(f.v, 1<<62) }, []string{"Tile", "too large"}},
		{"Conv2D/groups", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 6, 2, 3, 3), nil, ConvOpts{Groups: 3}) }, []string{"Conv2D", "groups 3", "divide"}},
		{"Conv2D/negative-groups", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 4, 4, 3, 3), nil, ConvOpts{Groups: -1}) }, []string{"Conv2D", "groups -1"}},
		{"Conv2D/weight-channels", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 6, 3, 3, 3), nil, ConvOpts{}) }, []string{"Conv2D", "channels/groups = 4"}},
		{"Conv2D/bias", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 6, 4, 3, 3), f.v, ConvOpts{}) }, []string{"Conv2D", "bias [4]", "[6]"}},
		{"Conv2D/rank", func(g *Graph, f fixture) { g.Conv2D(f.x, w(g, 6, 4, 3, 3), nil, ConvOpts{}) }, []string{"Conv2D", "4-D"}},
		{"Conv2D/window", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 6, 4, 9, 3), nil, ConvOpts{}) }, []string{"Conv2D", "larger than padded input"}},
		{"Conv2D/dilated-window", func(g *Graph, f fixture) {
			g.Conv2D(f.img, w(g, 6, 4, 3, 3), nil, ConvOpts{Dilations: []int{4, 1}})
		}, []string{"Conv2D", "dilated 9"}},
		{"Conv2D/empty-kernel", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 6, 4, 0, 3), nil, ConvOpts{}) }, []string{"Conv2D", "kernel dims"}},
		{"Conv2D/stride0", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 6, 4, 3, 3), nil, ConvOpts{Strides: []int{0, 1}}) }, []string{"Conv2D", "strides"}},
		{"Conv2D/pads-count", func(g *Graph, f fixture) { g.Conv2D(f.img, w(g, 6, 4, 3, 3), nil, ConvOpts{Pads: []int{1, 1}}) }, []string{"Conv2D", "pads"}},
		{"Conv2D/negative-pads", func(g *Graph, f fixture) {
			g.Conv2D(img(g, 4), w(g, 6, 4, 3, 3), nil, ConvOpts{Pads: []int{0, 0, -1, 0}})
		}, []string{"Conv2D", "non-negative"}},
		{"MaxPool2D/pads>=kernel", func(g *Graph, f fixture) {
			g.MaxPool2D(f.img, PoolOpts{Kernel: []int{2, 2}, Pads: []int{2, 0, 0, 0}})
		}, []string{"MaxPool2D", "pads", "smaller than the kernel"}},
		{"AvgPool2D/pads>=kernel-w", func(g *Graph, f fixture) {
			g.AvgPool2D(f.img, PoolOpts{Kernel: []int{3, 1}, Pads: []int{0, 0, 0, 1}})
		}, []string{"AvgPool2D", "smaller than the kernel"}},
		{"MaxPool2D/no-kernel", func(g *Graph, f fixture) { g.MaxPool2D(f.img, PoolOpts{}) }, []string{"MaxPool2D", "kernel"}},
		{"MaxPool2D/kernel-0", func(g *Graph, f fixture) { g.MaxPool2D(f.img, PoolOpts{Kernel: []int{0, 2}}) }, []string{"MaxPool2D", "kernel"}},
		{"AvgPool2D/window", func(g *Graph, f fixture) { g.AvgPool2D(f.img, PoolOpts{Kernel: []int{9, 9}}) }, []string{"AvgPool2D", "larger"}},
		{"AvgPool2D/rank", func(g *Graph, f fixture) { g.AvgPool2D(f.x, PoolOpts{Kernel: []int{1, 1}}) }, []string{"AvgPool2D", "4-D"}},
		{"GlobalAvgPool/rank", func(g *Graph, f fixture) { g.GlobalAvgPool(f.x) }, []string{"GlobalAvgPool", "rank >= 3"}},
		{"Attention/heads", func(g *Graph, f fixture) {
			g.Attention(g.Input("q", tensor.F32, 1, 6, 3, 8), g.Input("k", tensor.F32, 1, 4, 5, 8), g.Input("vv", tensor.F32, 1, 4, 5, 8), nil, AttentionOpts{})
		}, []string{"Attention", "multiple", "6", "4"}},
		{"Attention/head-dim", func(g *Graph, f fixture) {
			g.Attention(g.Input("q", tensor.F32, 1, 4, 3, 8), g.Input("k", tensor.F32, 1, 4, 5, 6), g.Input("vv", tensor.F32, 1, 4, 5, 6), nil, AttentionOpts{})
		}, []string{"Attention", "head dim"}},
		{"Attention/kv-length", func(g *Graph, f fixture) {
			g.Attention(g.Input("q", tensor.F32, 1, 4, 3, 8), g.Input("k", tensor.F32, 1, 4, 5, 8), g.Input("vv", tensor.F32, 1, 4, 6, 8), nil, AttentionOpts{})
		}, []string{"Attention", "key length"}},
		{"Attention/rank", func(g *Graph, f fixture) { g.Attention(f.x, f.x, f.x, nil, AttentionOpts{}) }, []string{"Attention", "4-D"}},
		{"Attention/mask-shape", func(g *Graph, f fixture) {
			q := g.Input("q", tensor.F32, 1, 2, 3, 4)
			g.Attention(q, q, q, g.Input("m", tensor.Bool, 4, 3), AttentionOpts{})
		}, []string{"Attention", "mask [4 3]", "[1 2 3 3]"}},
		{"Attention/mask-grows", func(g *Graph, f fixture) {
			q := g.Input("q", tensor.F32, 1, 2, 3, 4)
			g.Attention(q, q, q, g.Input("m", tensor.F32, 2, 2, 3, 3), AttentionOpts{})
		}, []string{"Attention", "does not broadcast"}},
		{"RoPE/odd", func(g *Graph, f fixture) {
			g.RoPE(f.x, g.Input("c", tensor.F32, 2, 1), g.Input("s", tensor.F32, 2, 1), false)
		}, []string{"RoPE", "even"}},
		{"RoPE/table", func(g *Graph, f fixture) {
			g.RoPE(f.img, g.Input("c", tensor.F32, 8, 8), g.Input("s", tensor.F32, 8, 4), false)
		}, []string{"RoPE", "cos [8 8]", "[8 4]"}},
		{"LayerNorm/scale-shape", func(g *Graph, f fixture) { g.LayerNorm(f.x, f.v, nil, -1, 1e-5) }, []string{"LayerNorm", "normalised shape", "[3]"}},
		{"LayerNorm/negative-eps", func(g *Graph, f fixture) { g.LayerNorm(f.x, nil, nil, -1, -1) }, []string{"LayerNorm", "negative epsilon"}},
		{"RMSNorm/scale-shape", func(g *Graph, f fixture) { g.RMSNorm(f.x, f.x, -1, 1e-5) }, []string{"RMSNorm", "normalised shape"}},
		{"BatchNorm/param-shape", func(g *Graph, f fixture) { g.BatchNorm(f.img, f.v, f.v, f.v, f.x, 1e-5) }, []string{"BatchNorm", "input 4", "[4]"}},
		{"BatchNorm/rank", func(g *Graph, f fixture) { g.BatchNorm(f.v, f.v, f.v, f.v, f.v, 1e-5) }, []string{"BatchNorm", "rank >= 2"}},
		{"InstanceNorm/rank", func(g *Graph, f fixture) { g.InstanceNorm(f.x, f.v, f.v, 1e-5) }, []string{"InstanceNorm", "rank >= 3"}},
		{"InstanceNorm/param-shape", func(g *Graph, f fixture) { g.InstanceNorm(f.img, f.v, f.x, 1e-5) }, []string{"InstanceNorm", "input 2", "[4]"}},
		{"ArgMax/empty-axis", func(g *Graph, f fixture) { g.ArgMax(g.Input("e", tensor.F32, 2, 0), 1, false) }, []string{"ArgMax", "empty axis 1"}},
		{"ReduceMax/empty-axis", func(g *Graph, f fixture) { g.ReduceMax(g.Input("e", tensor.F32, 2, 0), false) }, []string{"ReduceMax", "empty axis 1"}},
	}
}

func TestBuilderErrors(t *testing.T) {
	var cs []errCase
	for _, f := range []func() []errCase{typeErrCases, axisErrCases, nameErrCases, shapeErrCases} {
		cs = append(cs, f()...)
	}
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			g := New()
			f := newFixture(g)
			if err := g.Err(); err != nil {
				t.Fatalf("fixture: %v", err)
			}
			c.build(g, f)
			first := g.Err()
			mustContain(t, first, c.words...)
			if first == nil {
				return
			}
			if err := Verify(g); err != first {
				t.Errorf("Verify = %v, want the recorded error", err)
			}
			afterError(t, g, f, first)
		})
	}
}

// afterError calls builder methods on a failed graph: each must return an
// invalid node without panicking or adding a node, and Err must still be
// the first error.
func afterError(t *testing.T, g *Graph, f fixture, first error) {
	t.Helper()
	nodes, outs := len(g.Nodes), len(g.Outputs())
	calls := map[string]func() []*Node{
		"Add":       func() []*Node { return []*Node{g.Add(f.x, f.x)} },
		"Relu":      func() []*Node { return []*Node{g.Relu(f.x)} },
		"Relu(nil)": func() []*Node { return []*Node{g.Relu(nil)} },
		"MatMul":    func() []*Node { return []*Node{g.MatMul(f.x, f.x)} },
		"Input":     func() []*Node { return []*Node{g.Input("fresh", tensor.F32, 2)} },
		"Param":     func() []*Node { return []*Node{g.Param("fresh", tensor.F32, -1)} },
		"Constant":  func() []*Node { return []*Node{g.Scalar(1), g.ConstF32(sh(2), []float32{1})} },
		"Reshape":   func() []*Node { return []*Node{g.Reshape(f.x, 6), g.Reshape(f.x, 7)} },
		"Slice":     func() []*Node { return []*Node{g.Slice(f.x, SliceSpec{Starts: []int{0}, Ends: []int{1}})} },
		"Split":     func() []*Node { return append(g.Split(f.x, 1, 1, 2), g.SplitEqual(f.x, 1, 3)...) },
		"Split()":   func() []*Node { return g.Split(f.x, 0) },
		"SetName":   func() []*Node { return []*Node{g.SetName(f.x, "renamed")} },
		"Apply":     func() []*Node { return []*Node{g.Apply(OpNeg, Attrs{}, f.x), g.Apply(OpInput, Attrs{})} },
		"LayerNorm": func() []*Node { return []*Node{g.LayerNorm(f.x, nil, g.Param("lb", tensor.F32, 3), -1, 0)} },
		"Conv2D":    func() []*Node { return []*Node{g.Conv2D(f.img, f.img, nil, ConvOpts{})} },
		"Attention": func() []*Node { return []*Node{g.Attention(f.img, f.img, f.img, nil, AttentionOpts{})} },
		"Foreign":   func() []*Node { return []*Node{g.Add(f.other, f.other)} },
	}
	for name, call := range calls {
		for i, n := range call() {
			if n.Valid() {
				t.Errorf("%s result %d is valid after an error", name, i)
			}
		}
	}
	g.Output(f.x)
	g.OutputNamed("o", f.v)
	if len(g.Nodes) != nodes || len(g.Outputs()) != outs {
		t.Errorf("graph grew after the error: %d→%d nodes, %d→%d outputs", nodes, len(g.Nodes), outs, len(g.Outputs()))
	}
	if _, ok := g.Lookup("renamed"); ok || f.x.Name != "x" {
		t.Errorf("SetName renamed a node after the error")
	}
	if g.Err() != first {
		t.Errorf("Err changed from %v to %v", first, g.Err())
	}
}

// TestZeroGraph checks that a zero Graph value builds like New().
func TestZeroGraph(t *testing.T) {
	var g Graph
	x := g.Input("x", tensor.F32, 2)
	g.Output(g.SetName(g.Exp(x), "e"))
	if err := Verify(&g); err != nil {
		t.Fatal(err)
	}
	if n, ok := g.Lookup("e"); !ok || n.Op != OpExp {
		t.Fatalf("Lookup(e) = %v, %v", n, ok)
	}
}

// TestSetNameForeignKeepsNames checks that a refused SetName leaves both
// graphs' names alone.
func TestSetNameForeignKeepsNames(t *testing.T) {
	g, h := New(), New()
	g.Input("x", tensor.F32, 1)
	hx := h.Input("x", tensor.F32, 1)
	g.SetName(hx, "y")
	if g.Err() == nil {
		t.Fatal("no error")
	}
	if _, ok := g.Lookup("x"); !ok || hx.Name != "x" {
		t.Fatalf("names changed: g has x = %v, h's node is %q", ok, hx.Name)
	}
}
