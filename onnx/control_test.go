package onnx

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

func nd(op string, ins, outs []string, attrs ...*Attribute) *NodeProto {
	return &NodeProto{Name: outs[0] + "_node", OpType: op, Inputs: ins, Outputs: outs, Attrs: attrs}
}

// info declares a tensor value without a shape.
func info(name string, elem int32) *ValueInfo {
	return &ValueInfo{Name: name, IsTensor: true, ElemType: elem}
}

func boolInit(name string, v bool) *TensorProto {
	b := int32(0)
	if v {
		b = 1
	}
	return &TensorProto{Name: name, DataType: typeBool, Int32Data: []int32{b}}
}

func i64Init(name string, dims []int64, v ...int64) *TensorProto {
	return &TensorProto{Name: name, Dims: dims, DataType: typeInt64, Int64Data: v}
}

// runF32 imports, compiles and runs a model on the CPU, returning its
// float32 outputs; bool inputs are given as []bool, int64 ones as []int64.
func runF32(t *testing.T, mp *ModelProto, ins map[string]any, opts ...Option) (*Model, [][]float32) {
	t.Helper()
	m, err := Parse(encModel(mp), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := m.SetParams(cg); err != nil {
		t.Fatal(err)
	}
	var typed []kiln.TypedInput
	for name, v := range ins {
		switch v := v.(type) {
		case []float32:
			b := make([]byte, 4*len(v))
			for i, f := range v {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
			}
			typed = append(typed, kiln.TypedInput{Name: name, Data: b, DType: tensor.F32})
		case []int64:
			b := make([]byte, 8*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
			}
			typed = append(typed, kiln.TypedInput{Name: name, Data: b, DType: tensor.I64})
		case []bool:
			b := make([]byte, len(v))
			for i, x := range v {
				if x {
					b[i] = 1
				}
			}
			typed = append(typed, kiln.TypedInput{Name: name, Data: b, DType: tensor.Bool})
		}
	}
	outs, err := cg.RunTyped(typed...)
	if err != nil {
		t.Fatal(err)
	}
	var res [][]float32
	for _, o := range outs {
		f := make([]float32, len(o.Data)/4)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(o.Data[4*i:]))
		}
		res = append(res, f)
	}
	return m, res
}

func countOps(g *graph.Graph, op graph.Op) int {
	n := 0
	for _, x := range g.Nodes {
		if x.Op == op {
			n++
		}
	}
	return n
}

// ifModel: y = If(cond) then x + one (one is the branch's own
// initializer) else x * x, both reading the outer x. cond is an
// initializer when known, else a bool[1] input.
func ifModel(cond *bool, elseShape []int64) *ModelProto {
	then := &GraphProto{
		Nodes:        []*NodeProto{nd("Add", []string{"x", "one"}, []string{"t"})},
		Initializers: []*TensorProto{f32Init("one", []int64{3}, 1, 1, 1)},
		Outputs:      []*ValueInfo{info("t", typeFloat)},
	}
	els := &GraphProto{
		Nodes:   []*NodeProto{nd("Mul", []string{"x", "x"}, []string{"t"})}, // the same local name as then's: both are renamed
		Outputs: []*ValueInfo{info("t", typeFloat)},
	}
	if elseShape != nil {
		els.Nodes = append(els.Nodes, nd("Reshape", []string{"t", "shape"}, []string{"u"}))
		els.Initializers = []*TensorProto{i64Init("shape", []int64{int64(len(elseShape))}, elseShape...)}
		els.Outputs[0].Name = "u"
	}
	g := &GraphProto{
		Nodes:   []*NodeProto{nd("If", []string{"c"}, []string{"y"}, graphAttr("then_branch", then), graphAttr("else_branch", els))},
		Inputs:  []*ValueInfo{tensorInfo("x", typeFloat, 3)},
		Outputs: []*ValueInfo{info("y", typeFloat)},
	}
	if cond != nil {
		g.Initializers = []*TensorProto{boolInit("c", *cond)}
	} else {
		g.Inputs = append(g.Inputs, tensorInfo("c", typeBool, 1))
	}
	return model(13, g)
}

// TestIfKnownCondition: the taken branch is imported alone (no Where, no
// node of the other branch), with outer and branch-local names resolved.
func TestIfKnownCondition(t *testing.T) {
	x := []float32{1, 2, -3}
	for _, c := range []struct {
		cond bool
		want []float32
		op   graph.Op
	}{{true, []float32{2, 3, -2}, graph.OpAdd}, {false, []float32{1, 4, 9}, graph.OpMul}} {
		m, outs := runF32(t, ifModel(&c.cond, nil), map[string]any{"x": x})
		approx.Slices(t, "If output", outs[0], c.want, 0, 0)
		if countOps(m.Graph, graph.OpWhere) != 0 || countOps(m.Graph, graph.OpAdd)+countOps(m.Graph, graph.OpMul) != 1 || countOps(m.Graph, c.op) != 1 {
			t.Errorf("cond %v: the graph holds more than the taken branch:\n%v", c.cond, m.Graph)
		}
	}
}

// TestIfRunTimeCondition: both branches are computed and Where selects;
// branches whose outputs differ in shape are reported, saying why.
func TestIfRunTimeCondition(t *testing.T) {
	x := []float32{1, 2, -3}
	for _, c := range []struct {
		cond bool
		want []float32
	}{{true, []float32{2, 3, -2}}, {false, []float32{1, 4, 9}}} {
		_, outs := runF32(t, ifModel(nil, nil), map[string]any{"x": x, "c": []bool{c.cond}})
		approx.Slices(t, "If output", outs[0], c.want, 0, 0)
	}
	_, err := Parse(encModel(ifModel(nil, []int64{3, 1})))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].OpType != "If" ||
		!strings.Contains(ue.Ops[0].Reason, "computed at run time") || !strings.Contains(ue.Ops[0].Reason, "[3 1] in else_branch") {
		t.Errorf("branches of different shapes: %v, want an unsupported If naming the shapes", err)
	}
}

// loopModel: s = x; for i in 0..M-1 (while cond): s = s + float(i);
// scan output: If(cond_in) then s*two else s, a nested subgraph that
// reads the body's s_next and the model's initializer two.
func loopModel(trip *int64, condOut *NodeProto) *ModelProto {
	nested := &GraphProto{
		Nodes:   []*NodeProto{nd("Mul", []string{"s_next", "two"}, []string{"d"})},
		Outputs: []*ValueInfo{info("d", typeFloat)},
	}
	other := &GraphProto{
		Nodes:   []*NodeProto{nd("Identity", []string{"s_next"}, []string{"d"})},
		Outputs: []*ValueInfo{info("d", typeFloat)},
	}
	if condOut == nil {
		condOut = nd("Identity", []string{"cond_in"}, []string{"cond_out"})
	}
	body := &GraphProto{
		Nodes: []*NodeProto{
			nd("Cast", []string{"i"}, []string{"i_f"}, intAttr("to", typeFloat)),
			nd("Add", []string{"s_in", "i_f"}, []string{"s_next"}),
			nd("If", []string{"cond_in"}, []string{"scan"}, graphAttr("then_branch", nested), graphAttr("else_branch", other)),
			condOut,
		},
		Inputs:  []*ValueInfo{info("i", typeInt64), info("cond_in", typeBool), info("s_in", typeFloat)},
		Outputs: []*ValueInfo{info("cond_out", typeBool), info("s_next", typeFloat), info("scan", typeFloat)},
	}
	g := &GraphProto{
		Nodes:        []*NodeProto{nd("Loop", []string{"M", "cond", "x"}, []string{"s", "ys"}, graphAttr("body", body))},
		Initializers: []*TensorProto{boolInit("cond", true), f32Init("two", nil, 2)},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 2)},
		Outputs:      []*ValueInfo{info("s", typeFloat), info("ys", typeFloat)},
	}
	if trip != nil {
		g.Initializers = append(g.Initializers, i64Init("M", nil, *trip))
	} else {
		g.Inputs = append(g.Inputs, tensorInfo("M", typeInt64)) // a scalar
	}
	return model(13, g)
}

// TestLoopUnrolls: a Loop with a known trip count becomes its body three
// times; a condition the body computes from the iteration number ends it.
func TestLoopUnrolls(t *testing.T) {
	three := int64(3)
	_, outs := runF32(t, loopModel(&three, nil), map[string]any{"x": []float32{1, 2}})
	// s: [1 2] → +0 → +1 → +2; ys stacks 2·s after each iteration.
	approx.Slices(t, "final s", outs[0], []float32{4, 5}, 0, 0)
	approx.Slices(t, "scan output", outs[1], []float32{2, 4, 4, 6, 8, 10}, 0, 0)

	// M = 100 but cond_out = i < 1: two iterations.
	hundred := int64(100)
	mp := loopModel(&hundred, nd("Less", []string{"i", "limit"}, []string{"cond_out"}))
	mp.Graph.Nodes[0].Attrs[0].G.Initializers = []*TensorProto{i64Init("limit", nil, 1)}
	_, outs = runF32(t, mp, map[string]any{"x": []float32{1, 2}})
	approx.Slices(t, "final s (condition)", outs[0], []float32{2, 3}, 0, 0)
	approx.Slices(t, "scan output (condition)", outs[1], []float32{2, 4, 4, 6}, 0, 0)
}

// nestedLoops: s = x, then n × n times s = s + s, as a Loop whose body
// is a Loop, each run n times by an outer-scope trip count.
func nestedLoops(n int64) *ModelProto {
	inner := &GraphProto{
		Nodes:   []*NodeProto{nd("Add", []string{"v", "v"}, []string{"w"}), nd("Identity", []string{"ci"}, []string{"co"})},
		Inputs:  []*ValueInfo{tensorInfo("j", typeInt64), tensorInfo("ci", typeBool), info("v", typeFloat)},
		Outputs: []*ValueInfo{info("co", typeBool), info("w", typeFloat)},
	}
	outer := &GraphProto{
		Nodes:   []*NodeProto{nd("Loop", []string{"M", "", "u"}, []string{"u2"}, graphAttr("body", inner)), nd("Identity", []string{"c"}, []string{"c2"})},
		Inputs:  []*ValueInfo{tensorInfo("i", typeInt64), tensorInfo("c", typeBool), info("u", typeFloat)},
		Outputs: []*ValueInfo{info("c2", typeBool), info("u2", typeFloat)},
	}
	return model(13, &GraphProto{
		Nodes:        []*NodeProto{nd("Loop", []string{"M", "", "x"}, []string{"s"}, graphAttr("body", outer))},
		Initializers: []*TensorProto{i64Init("M", nil, n)},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 2)},
		Outputs:      []*ValueInfo{info("s", typeFloat)},
	})
}

// TestNestedLoops: an inner Loop reads its trip count from the model
// scope and runs n times per outer iteration.
func TestNestedLoops(t *testing.T) {
	_, outs := runF32(t, nestedLoops(3), map[string]any{"x": []float32{1, -0.5}})
	approx.Slices(t, "s", outs[0], []float32{512, -256}, 0, 0) // 2^9 · x
}

// TestScanUnrolls: a Scan over axis 1 of x, last step first, sums into
// its state and stacks the running sums along axis 1.
func TestScanUnrolls(t *testing.T) {
	body := &GraphProto{
		Nodes: []*NodeProto{
			nd("Add", []string{"s_in", "x_t"}, []string{"s_out"}),
			nd("Identity", []string{"s_out"}, []string{"y_t"}),
		},
		Inputs:  []*ValueInfo{tensorInfo("s_in", typeFloat, 2), tensorInfo("x_t", typeFloat, 2)},
		Outputs: []*ValueInfo{tensorInfo("s_out", typeFloat, 2), tensorInfo("y_t", typeFloat, 2)},
	}
	g := &GraphProto{
		Nodes: []*NodeProto{nd("Scan", []string{"s0", "x"}, []string{"s", "y"}, graphAttr("body", body),
			intAttr("num_scan_inputs", 1), intsAttr("scan_input_axes", 1), intsAttr("scan_input_directions", 1),
			intsAttr("scan_output_axes", -1))},
		Initializers: []*TensorProto{f32Init("s0", []int64{2}, 0, 0)},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 2, 3)},
		Outputs:      []*ValueInfo{tensorInfo("s", typeFloat, 2), tensorInfo("y", typeFloat, 2, 3)},
	}
	_, outs := runF32(t, model(16, g), map[string]any{"x": []float32{1, 2, 3, 4, 5, 6}})
	// Steps x[:,2]=[3 6], x[:,1]=[2 5], x[:,0]=[1 4]: sums [3 6], [5 11], [6 15].
	approx.Slices(t, "final state", outs[0], []float32{6, 15}, 0, 0)
	approx.Slices(t, "scan output", outs[1], []float32{3, 5, 6, 6, 11, 15}, 0, 0)
}
