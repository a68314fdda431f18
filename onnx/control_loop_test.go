package onnx

import (
	"errors"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
)

// runTimeCondModel is loopModel with trip count M (nil: a run-time input)
// and the condition cond_out = max(s_next) < 10, computed by the body.
func runTimeCondModel(trip *int64) *ModelProto {
	mp := loopModel(trip, nd("ReduceMax", []string{"s_next"}, []string{"m"}, intAttr("keepdims", 0)))
	body := mp.Graph.Nodes[0].Attrs[0].G
	body.Nodes = append(body.Nodes, nd("Less", []string{"m", "ten"}, []string{"cond_out"}))
	body.Initializers = []*TensorProto{f32Init("ten", nil, 10)}
	return mp
}

// TestLoopRunTime: Loops whose iteration count is only known at run time
// import as one OpLoop (not unrolled) and run it. Expected values by hand:
// s = x, then s + 0, s + 1, ... per iteration; the scan output holds 2·s
// after each iteration, zero rows past the last one.
func TestLoopRunTime(t *testing.T) {
	five := int64(5)
	for _, c := range []struct {
		name  string
		mp    *ModelProto
		opts  []Option
		ins   map[string]any
		s, ys []float32
	}{
		{"run-time M, bound option", loopModel(nil, nil), []Option{WithLoopBound(4)},
			map[string]any{"x": []float32{1, 2}, "M": []int64{3}}, []float32{4, 5}, []float32{2, 4, 4, 6, 8, 10, 0, 0}},
		{"run-time M of 0", loopModel(nil, nil), []Option{WithLoopBound(2)},
			map[string]any{"x": []float32{1, 2}, "M": []int64{0}}, []float32{1, 2}, []float32{0, 0, 0, 0}},
		// max(s) after each iteration: 8, 9, 11: the body stops it after 3
		// of M = 5; the bound is M, so ys has 5 rows.
		{"run-time condition", runTimeCondModel(&five), nil,
			map[string]any{"x": []float32{7, 8}}, []float32{10, 11}, []float32{14, 16, 16, 18, 20, 22, 0, 0, 0, 0}},
		{"run-time M and condition", runTimeCondModel(nil), []Option{WithLoopBound(3)},
			map[string]any{"x": []float32{7, 8}, "M": []int64{2}}, []float32{8, 9}, []float32{14, 16, 16, 18, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, outs := runF32(t, c.mp, c.ins, c.opts...)
			if countOps(m.Graph, graph.OpLoop) != 1 {
				t.Errorf("want one OpLoop, the graph is:\n%v", m.Graph)
			}
			approx.Slices(t, "final s", outs[0], c.s, 0, 0)
			approx.Slices(t, "scan output", outs[1], c.ys, 0, 0)
		})
	}
}

// TestLoopPastUnrollBound: a known trip count too large to unroll runs as
// a run-time loop; the sums are checked against the same float32
// additions done here.
func TestLoopPastUnrollBound(t *testing.T) {
	const n = 20000 // 5 nodes a body: 100000 past maxUnrolled
	trip := int64(n)
	m, outs := runF32(t, loopModel(&trip, nil), map[string]any{"x": []float32{1, -2}})
	if countOps(m.Graph, graph.OpLoop) != 1 {
		t.Fatalf("want one OpLoop, the graph has %d nodes", len(m.Graph.Nodes))
	}
	s := []float32{1, -2}
	for i := range n {
		s[0] += float32(i)
		s[1] += float32(i)
	}
	approx.Slices(t, "final s", outs[0], s, 0, 0)
	approx.Slices(t, "last scan row", outs[1][2*(n-1):], []float32{2 * s[0], 2 * s[1]}, 0, 0)
}

// TestLoopRunTimeErrors: what kiln refuses at import says why, and bad
// run-time values fail the run naming the problem.
func TestLoopRunTimeErrors(t *testing.T) {
	_, err := Parse(encModel(loopModel(nil, nil)))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].OpType != "Loop" || !strings.Contains(ue.Ops[0].Reason, "WithLoopBound") {
		t.Errorf("scan outputs without a bound: %v, want an unsupported Loop naming WithLoopBound", err)
	}
	grow := loopModel(nil, nil) // s_next = Concat(s_in, i_f): a carried value that grows
	body := grow.Graph.Nodes[0].Attrs[0].G
	body.Nodes[1] = nd("Concat", []string{"s_in", "i_f1"}, []string{"s_next"}, intAttr("axis", 0))
	body.Nodes = append(body.Nodes, nd("Unsqueeze", []string{"i_f", "zero"}, []string{"i_f1"}))
	body.Initializers = []*TensorProto{i64Init("zero", []int64{1}, 0)}
	_, err = Parse(encModel(grow), WithLoopBound(3))
	if !errors.As(err, &ue) || len(ue.Ops) != 1 || !strings.Contains(ue.Ops[0].Reason, "keeps carried values' dtype and shape") {
		t.Errorf("a growing carried value: %v, want an unsupported Loop saying carried values keep their shape", err)
	}

	m, err := Parse(encModel(loopModel(nil, nil)), WithLoopBound(2))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	for _, c := range []struct {
		m    int64
		want string
	}{{-2, "trip count -2 is negative"}, {3, "exceeds the loop's bound of 2"}} {
		x := kiln.TypedInput{Name: "x", Data: make([]byte, 8), DType: 0}
		x.DType = m.Graph.Inputs()[0].DType
		mv := kiln.TypedInput{Name: "M", Data: le64(c.m), DType: m.Graph.Inputs()[1].DType}
		if _, err := cg.RunTyped(x, mv); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("M = %d: %v, want an error containing %q", c.m, err, c.want)
		}
	}
}

func le64(v int64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(uint64(v) >> (8 * i))
	}
	return b
}

// TestIfGated: an If on a run-time condition whose branches are larger
// than gateIfNodes runs as two gated loops (only the taken branch runs)
// joined by Where. then adds one nine times, else halves nine times:
// x + 9 and x / 512, exact in float32.
func TestIfGated(t *testing.T) {
	then := &GraphProto{Initializers: []*TensorProto{f32Init("one", nil, 1)}}
	els := &GraphProto{Initializers: []*TensorProto{f32Init("half", nil, 0.5)}}
	prevT, prevE := "x", "x"
	for i := range 9 {
		nt, ne := "t"+string(rune('0'+i)), "e"+string(rune('0'+i))
		then.Nodes = append(then.Nodes, nd("Add", []string{prevT, "one"}, []string{nt}))
		els.Nodes = append(els.Nodes, nd("Mul", []string{prevE, "half"}, []string{ne}))
		prevT, prevE = nt, ne
	}
	then.Outputs = []*ValueInfo{info(prevT, typeFloat)}
	els.Outputs = []*ValueInfo{info(prevE, typeFloat)}
	mp := model(13, &GraphProto{
		Nodes:   []*NodeProto{nd("If", []string{"c"}, []string{"y"}, graphAttr("then_branch", then), graphAttr("else_branch", els))},
		Inputs:  []*ValueInfo{tensorInfo("x", typeFloat, 3), tensorInfo("c", typeBool, 1)},
		Outputs: []*ValueInfo{info("y", typeFloat)},
	})
	x := []float32{1, -2, 512}
	for _, c := range []struct {
		cond bool
		want []float32
	}{{true, []float32{10, 7, 521}}, {false, []float32{1.0 / 512, -2.0 / 512, 1}}} {
		m, outs := runF32(t, mp, map[string]any{"x": x, "c": []bool{c.cond}})
		if n := countOps(m.Graph, graph.OpLoop); n != 2 {
			t.Errorf("%d Loop nodes, want 2 (one per branch)", n)
		}
		approx.Slices(t, "If output", outs[0], c.want, 0, 0)
	}
}
