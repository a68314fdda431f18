package onnx

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// constOfShape is y = ReduceSum(ConstantOfShape(dims, value)) + x.
func constOfShape(dims []int64, value float32) *ModelProto {
	return model(13, &GraphProto{
		Nodes: []*NodeProto{
			{Name: "c", OpType: "ConstantOfShape", Inputs: []string{"s"}, Outputs: []string{"big"},
				Attrs: []*Attribute{{Name: "value", Type: AttrTensor, T: f32Init("v", []int64{1}, value)}}},
			{Name: "r", OpType: "ReduceSum", Inputs: []string{"big"}, Outputs: []string{"sum"}, Attrs: []*Attribute{intAttr("keepdims", 0)}},
			{Name: "a", OpType: "Add", Inputs: []string{"x", "sum"}, Outputs: []string{"y"}},
		},
		Initializers: []*TensorProto{{Name: "s", Dims: []int64{int64(len(dims))}, DataType: typeInt64, Int64Data: dims}},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat)},
		Outputs:      []*ValueInfo{tensorInfo("y", typeFloat)},
	})
}

// TestLargeConstantsStayRunTime: a constant expression past the fold
// limit is built as graph nodes (an Expand of a scalar), not allocated
// at import, and still computes the right value.
func TestLargeConstantsStayRunTime(t *testing.T) {
	for _, c := range []struct {
		dims   []int64
		folded bool
	}{{[]int64{4, 5}, true}, {[]int64{1100, 1000}, false}} {
		m, err := Parse(encModel(constOfShape(c.dims, 0.5)))
		if err != nil {
			t.Fatal(err)
		}
		expand := false
		for _, n := range m.Graph.Nodes {
			expand = expand || n.Op == graph.OpExpand
		}
		if expand == c.folded {
			t.Errorf("dims %v: Expand node present %v, want %v", c.dims, expand, !c.folded)
		}
		cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
		if err != nil {
			t.Fatal(err)
		}
		out, err := cg.Run(kiln.In("x", []float32{1}))
		cg.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := 1 + 0.5*float32(c.dims[0]*c.dims[1])
		if out[0][0] != want {
			t.Errorf("dims %v: got %v, want %v", c.dims, out[0][0], want)
		}
	}
}

// TestFoldBudget: many import-time constants from a tiny file stop being
// folded once the budget is spent, rather than growing memory without end.
func TestFoldBudget(t *testing.T) {
	g := &GraphProto{
		Initializers: []*TensorProto{{Name: "s", Dims: []int64{1}, DataType: typeInt64, Int64Data: []int64{1 << 20}}},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 1)},
	}
	prev := "x"
	for i := range 40 { // 40 x 4 MiB would be 160 MiB of folded constants
		c, s := "c"+string(rune('A'+i)), "s"+string(rune('A'+i))
		g.Nodes = append(g.Nodes,
			&NodeProto{Name: c, OpType: "ConstantOfShape", Inputs: []string{"s"}, Outputs: []string{c}},
			&NodeProto{Name: s, OpType: "Slice", Inputs: []string{c, "zero", "one"}, Outputs: []string{s + "v"}},
			&NodeProto{Name: "add" + s, OpType: "Add", Inputs: []string{prev, s + "v"}, Outputs: []string{s + "o"}})
		prev = s + "o"
	}
	g.Initializers = append(g.Initializers,
		&TensorProto{Name: "zero", Dims: []int64{1}, DataType: typeInt64, Int64Data: []int64{0}},
		&TensorProto{Name: "one", Dims: []int64{1}, DataType: typeInt64, Int64Data: []int64{1}})
	g.Outputs = []*ValueInfo{tensorInfo(prev, typeFloat, 1)}
	data := encModel(model(13, g))
	imp := 0
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range m.Graph.Nodes {
		if n.Op == graph.OpExpand {
			imp++
		}
	}
	if imp == 0 {
		t.Error("every ConstantOfShape was folded; the budget did not apply")
	}
}

func TestSetParamsErrors(t *testing.T) {
	m, err := Parse(encModel(goodModel()))
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	x := g.Input("x", tensor.F32, 3)
	g.Output(g.Add(g.Add(x, g.Param("w", tensor.F32, 3)), g.Param("extra", tensor.F32, 3)))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := m.SetParams(cg); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("missing initializer: %v", err)
	}
	m.Close()
	if err := m.SetParams(cg); err == nil {
		t.Error("SetParams after Close succeeded")
	}
}

func TestDropoutTrainingUnsupported(t *testing.T) {
	mp := model(13, &GraphProto{
		Nodes:        []*NodeProto{{Name: "d", OpType: "Dropout", Inputs: []string{"x", "", "t"}, Outputs: []string{"y"}}},
		Initializers: []*TensorProto{{Name: "t", DataType: typeBool, Int32Data: []int32{1}}},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 2)},
		Outputs:      []*ValueInfo{tensorInfo("y", typeFloat, 2)},
	})
	_, err := Parse(encModel(mp))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(ue.Ops[0].Reason, "training_mode") {
		t.Errorf("got %v", err)
	}
}

// TestRangeBounds: integer Range counts exactly for either sign of delta,
// and hostile bounds are errors, not huge or negative allocations.
func TestRangeBounds(t *testing.T) {
	rng := func(start, limit, delta int64) ([]int64, error) {
		scalar := func(name string, v int64) *TensorProto {
			return &TensorProto{Name: name, DataType: typeInt64, Int64Data: []int64{v}}
		}
		mp := model(13, &GraphProto{
			Nodes:        []*NodeProto{{Name: "r", OpType: "Range", Inputs: []string{"a", "b", "d"}, Outputs: []string{"y"}}},
			Initializers: []*TensorProto{scalar("a", start), scalar("b", limit), scalar("d", delta)},
			Outputs:      []*ValueInfo{{Name: "y", IsTensor: true, ElemType: typeInt64}},
		})
		m, err := Parse(encModel(mp))
		if err != nil {
			return nil, err
		}
		out := m.Graph.Outputs()[0]
		if out.Op != graph.OpConstant {
			t.Fatalf("Range did not fold: %v", out)
		}
		return append([]int64(nil), out.Value.I64()...), nil
	}
	for _, c := range []struct {
		a, b, d int64
		want    []int64
	}{
		{0, 5, 2, []int64{0, 2, 4}}, {0, 6, 2, []int64{0, 2, 4}}, {5, 0, -2, []int64{5, 3, 1}},
		{5, 1, -2, []int64{5, 3}}, {3, 3, 1, nil}, {3, 0, 1, nil}, {0, 3, -1, nil}, {-3, -1, 1, []int64{-3, -2}},
	} {
		got, err := rng(c.a, c.b, c.d)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) && len(got)+len(c.want) > 0 {
			t.Errorf("Range(%d, %d, %d) = %v, %v; want %v", c.a, c.b, c.d, got, err, c.want)
		}
	}
	for _, c := range [][3]int64{{math.MinInt64, math.MaxInt64, 1}, {0, 1 << 40, 1}, {0, 1, 0}, {math.MaxInt64, math.MinInt64, math.MinInt64}} {
		if _, err := rng(c[0], c[1], c[2]); err == nil {
			t.Errorf("Range%v accepted", c)
		}
	}
}
