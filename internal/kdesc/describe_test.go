package kdesc

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestDescribe: one node of each descriptor family describes as the
// kind KindOf names, reads the inputs it should, and carries the
// node's attributes.
func TestDescribe(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 4)
	img := g.Input("img", tensor.F32, 1, 2, 5, 5)
	s, b := g.Param("s", tensor.F32, 3, 4), g.Param("b", tensor.F32, 3, 4)
	r := g.Input("r", tensor.F32, 3, 4)
	sq := g.Mul(x, x)
	resh := g.Reshape(x, 6, 4)
	tr := g.Transpose(x, 2, 1, 0)
	gap := g.GlobalAvgPool(img)
	ln := g.LayerNorm(x, s, b, 1, 1e-5)
	lsm := g.LogSoftmax(x, 2)
	red := g.ReduceMax(x, false, 0, 2)
	mm := g.MatMul(x, g.Param("w", tensor.F32, 4, 5))
	_, topi := g.TopK(x, 2, 1, true)
	inorm := g.InstanceNorm(x, g.Param("is", tensor.F32, 3), g.Param("ib", tensor.F32, 3), 1e-3)
	tok, ids := g.Input("tok", tensor.F32, 5, 4), g.Input("ids", tensor.I32, 5, 2)
	gmm := g.GroupedMatMul(g.Input("slots", tensor.F32, 5, 2, 4), g.Param("ew", tensor.F32, 3, 4, 6), ids)
	moe := g.MoEExperts(tok, ids, g.Input("rw", tensor.F32, 5, 2), g.Param("eg", tensor.F32, 3, 4, 7), g.Param("eu", tensor.F32, 3, 4, 7), g.Param("ed", tensor.F32, 3, 7, 4))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	arn, err := g.Insert(graph.OpAddRMSNorm, graph.Attrs{Axis: 1, Eps: 1e-6}, x, r, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    *graph.Node
		kind Kind
		ins  []*graph.Node
		want Desc
	}{
		{sq, KindElementwise, []*graph.Node{x}, &Elementwise{Name: "k", Shape: []int{2, 3, 4}, Out: tensor.F32,
			Inputs: []Operand{{DType: tensor.F32, Strides: []int{12, 4, 1}}},
			Body:   []Instr{{Op: graph.OpMul, Args: []int{0, 0}, DType: tensor.F32}}}},
		{resh, KindCopy, []*graph.Node{x}, &Copy{Name: "k", DType: tensor.U8, Shape: []int{96}, Strides: []int{1}}},
		{tr, KindCopy, []*graph.Node{x}, &Copy{Name: "k", DType: tensor.F32, Shape: []int{4, 3, 2}, Strides: []int{1, 4, 12}}},
		{gap, KindReduce, []*graph.Node{img}, &Reduce{Name: "k", Op: graph.OpReduceMean, DType: tensor.F32, Shape: []int{1, 2, 5, 5}, Axes: []int{2, 3}}},
		{red, KindReduce, []*graph.Node{x}, &Reduce{Name: "k", Op: graph.OpReduceMax, DType: tensor.F32, Shape: []int{2, 3, 4}, Axes: []int{0, 2}}},
		{ln, KindNorm, []*graph.Node{x, s, b}, &Norm{Name: "k", DType: tensor.F32, Shape: []int{2, 3, 4}, Axis: 1, Eps: 1e-5, Scale: true, Bias: true}},
		{arn, KindNorm, []*graph.Node{x, r, s}, &Norm{Name: "k", DType: tensor.F32, Shape: []int{2, 3, 4}, Axis: 1, Eps: 1e-6, RMS: true, Scale: true,
			Residual: true, ResStrides: []int{0, 4, 1}}},
		{inorm, KindNorm, inorm.Inputs, &Norm{Name: "k", DType: tensor.F32, Shape: []int{2, 3, 4}, Axis: 2, Eps: 1e-3, Scale: true, Bias: true, Channels: 3}},
		{topi, KindTopK, []*graph.Node{x}, &TopK{Name: "k", DType: tensor.F32, Lines: Lines{Outer: 2, Size: 3, Inner: 4}, K: 2, Smallest: true, Indices: true}},
		{gmm, KindRouted, gmm.Inputs, &Routed{Name: "k", Op: graph.OpGroupedMatMul, DType: tensor.F32, IDs: tensor.I32, T: 5, K: 2, E: 3, In: 4, Out: 6, PerSlot: true}},
		{moe, KindRouted, moe.Inputs, &Routed{Name: "k", Op: graph.OpMoE, DType: tensor.F32, IDs: tensor.I32, T: 5, K: 2, E: 3, In: 4, Out: 4, Hidden: 7}},
		{lsm, KindSoftmax, []*graph.Node{x}, &Softmax{Name: "k", DType: tensor.F32, Shape: []int{2, 3, 4}, Axis: 2, Log: true}},
	} {
		d, ins, err := Describe("k", c.n)
		if err != nil {
			t.Errorf("%s: %v", c.n, err)
			continue
		}
		if d.Kind() != c.kind || KindOf(c.n.Op) != c.kind {
			t.Errorf("%s: kind %v, KindOf %v, want %v", c.n, d.Kind(), KindOf(c.n.Op), c.kind)
		}
		if !slices.Equal(ins, c.ins) {
			t.Errorf("%s: reads %v, want %v", c.n, ins, c.ins)
		}
		if !reflect.DeepEqual(d, c.want) {
			t.Errorf("%s: %+v, want %+v", c.n, d, c.want)
		}
	}
	if d, ins, err := Describe("k", mm); err != nil || d.Kind() != KindGemm || len(ins) != 2 || d.(*Gemm).K != 4 {
		t.Errorf("MatMul: %+v %v %v", d, ins, err)
	}
	if _, _, err := Describe("k", x); err == nil || !strings.Contains(err.Error(), "no GPU kernel for Input") {
		t.Errorf("Describe(Input) = %v, want no GPU kernel", err)
	}
}

// TestNormChecks: the scale/bias and residual checks every GPU backend
// relied on are made here, once.
func TestNormChecks(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 8)
	bad := g.Param("s", tensor.F32, 7)
	half := g.Input("h", tensor.F16, 2, 8)
	ok := g.Param("o", tensor.F32, 8)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op   graph.Op
		ins  []*graph.Node
		want string
	}{
		{graph.OpLayerNorm, []*graph.Node{x, bad}, "scale/bias Param(s"},
		{graph.OpRMSNorm, []*graph.Node{x, ok, bad}, "scale/bias Param(s"},
		{graph.OpAddLayerNorm, []*graph.Node{x, half, ok}, "residual Input(h"},
		{graph.OpAddRMSNorm, []*graph.Node{x, x, bad}, "scale/bias Param(s"},
	} {
		n := &graph.Node{Op: c.op, DType: tensor.F32, Shape: x.Shape, Inputs: c.ins, Attrs: graph.Attrs{Axis: 1}}
		if _, err := NormOf("k", n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v of %v: %v, want an error naming %q", c.op, c.ins, err, c.want)
		}
	}
	n := &graph.Node{Op: graph.OpLayerNorm, DType: tensor.F32, Shape: x.Shape, Inputs: []*graph.Node{x}, Attrs: graph.Attrs{Axis: 3}}
	if _, err := NormOf("k", n); err == nil {
		t.Error("axis 3 of rank 2: no error")
	}
}

// TestKindOfCoversOps: every op but the sources, OpCustom and the loop
// ops has a descriptor, so an op added without one fails here rather
// than at a user's Compile.
func TestKindOfCoversOps(t *testing.T) {
	none := []graph.Op{graph.OpInput, graph.OpParam, graph.OpConstant, graph.OpCustom, graph.OpLoop, graph.OpLoopOutput}
	for _, op := range append(append(graph.Ops(), graph.FusedOps()...), graph.OpCustom) {
		if got := KindOf(op) == KindNone; got != slices.Contains(none, op) {
			t.Errorf("KindOf(%v) = %v", op, KindOf(op))
		}
	}
}

// TestSupportedOps: an emitter handling only elementwise kinds, without
// a formula for Sin, supports every elementwise op but Sin, and fused
// regions.
func TestSupportedOps(t *testing.T) {
	var probed []graph.Op
	emit := func(d Desc) (string, error) {
		e := d.(*Elementwise)
		op := e.Body[0].Op
		probed = append(probed, op)
		if op == graph.OpSin {
			return "", errors.New("no formula")
		}
		return op.String(), nil
	}
	got := SupportedOps(func(k Kind) bool { return k == KindElementwise }, emit)
	var want []graph.Op
	for _, op := range graph.Ops() {
		if op.IsElementwise() && op != graph.OpSin {
			want = append(want, op)
		}
	}
	want = append(want, graph.OpFusedElementwise)
	if !slices.Equal(got, want) {
		t.Errorf("SupportedOps = %v, want %v", got, want)
	}
	if len(probed) != len(want) { // every single elementwise op, Sin included
		t.Errorf("probed %d ops, want %d", len(probed), len(want))
	}
}

// TestProbe: Bool operands where the op takes them, F32 elsewhere, and
// one operand per argument.
func TestProbe(t *testing.T) {
	for op, want := range map[graph.Op][]tensor.DType{
		graph.OpExp:   {tensor.F32},
		graph.OpAdd:   {tensor.F32, tensor.F32},
		graph.OpLess:  {tensor.F32, tensor.F32},
		graph.OpAnd:   {tensor.Bool, tensor.Bool},
		graph.OpWhere: {tensor.Bool, tensor.F32, tensor.F32},
	} {
		p := Probe(op)
		var got []tensor.DType
		for _, in := range p.Inputs {
			got = append(got, in.DType)
		}
		if !slices.Equal(got, want) || len(p.Body) != 1 || len(p.Body[0].Args) != len(want) {
			t.Errorf("Probe(%v) = %+v", op, p)
		}
	}
	if p := Probe(graph.OpLess); p.Out != tensor.Bool || p.Body[0].DType != tensor.Bool {
		t.Errorf("Probe(Less) stores %v", p.Out)
	}
}

// TestEmitter: a backend writing only copies dispatches them, refuses
// other kinds by name, lists the copy and view ops and its extra op,
// and checks nodes as compiling would.
func TestEmitter(t *testing.T) {
	e := NewEmitter("fake", "Dev", map[Kind]func(Desc) (string, error){
		KindCopy: Writes(func(c *Copy) (string, error) { return fmt.Sprintf("copy %v of %v", c.Shape, c.DType), nil }),
	}, graph.OpCustom)
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	tr := g.Transpose(x, 1, 0)
	sm := g.Softmax(x, 1)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if k, ins, err := e.Lower("k", tr); err != nil || k != "copy [3 2] of f32" || !slices.Equal(ins, []*graph.Node{x}) {
		t.Errorf("Lower(Transpose) = %q %v %v", k, ins, err)
	}
	if err := e.Check(sm); err == nil || err.Error() != "fake: no Dev kernel for a softmax yet (the CPU backend has one)" {
		t.Errorf("Check(Softmax) = %v", err)
	}
	if err := e.Check(x); err != nil {
		t.Errorf("Check(Input) = %v, want nil (no kernel)", err)
	}
	if _, err := Writes(func(*Gemm) (string, error) { return "", nil })(&Copy{}); err == nil {
		t.Error("a Copy written as a Gemm: no error")
	}
	want := []graph.Op{graph.OpReshape, graph.OpTranspose, graph.OpSplit, graph.OpSlice, graph.OpExpand,
		graph.OpSqueeze, graph.OpUnsqueeze, graph.OpFlatten, graph.OpTile, graph.OpCustom}
	if got := e.Ops(); !slices.Equal(got, want) || !e.Supports(graph.OpTile) || e.Supports(graph.OpSoftmax) {
		t.Errorf("Ops() = %v, want %v", got, want)
	}
}
