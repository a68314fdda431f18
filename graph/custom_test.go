package graph

import (
	"errors"
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func noopCPU(out tensor.Tensor, ins ...tensor.Tensor) error { return nil }

// TestCustomBuild: a custom node gets its result from the spec (fixed or
// inferred), passes Verify, keeps the spec through Clone and shows its
// name in the dump.
func TestCustomBuild(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F16, 2, 3)
	same := &CustomSpec{Name: "Twice", Infer: SameAsInput(0), CPU: noopCPU}
	fixed := &CustomSpec{Name: "RowSums", DType: tensor.F32, Shape: tensor.Shape{2}, CPU: noopCPU}
	scalar := &CustomSpec{Name: "Total", DType: tensor.F64, CPU: noopCPU}
	a := g.Custom(same, x)
	b := g.Custom(fixed, a, x)
	c := g.Custom(scalar, b)
	g.Output(c)
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n  *Node
		dt tensor.DType
		s  tensor.Shape
	}{{a, tensor.F16, tensor.Shape{2, 3}}, {b, tensor.F32, tensor.Shape{2}}, {c, tensor.F64, tensor.Shape{}}} {
		if tc.n.Op != OpCustom || tc.n.DType != tc.dt || !tc.n.Shape.Equal(tc.s) {
			t.Errorf("%s: want Custom %v%v", tc.n, tc.dt, tc.s)
		}
	}
	dump := Dump(g)
	for _, want := range []string{"Custom(x) f16[2 3] {Custom:Twice}", "{Custom:RowSums}", "{Custom:Total}"} {
		if !strings.Contains(dump, want) {
			t.Errorf("dump lacks %q:\n%s", want, dump)
		}
	}
	h := g.Clone()
	if err := Verify(h); err != nil || h.Nodes[b.ID].Attrs.Custom != fixed {
		t.Errorf("clone: %v, spec %v", err, h.Nodes[b.ID].Attrs.Custom)
	}
	if op, err := ParseOp("Custom"); err != nil || op != OpCustom {
		t.Errorf("ParseOp: %v %v", op, err)
	}
}

func TestCustomErrors(t *testing.T) {
	ptxOK := &CustomPTX{Module: ".version 7.0", Entry: "k"}
	cases := []struct {
		spec *CustomSpec
		want string
	}{
		{nil, "no CustomSpec"},
		{&CustomSpec{CPU: noopCPU, DType: tensor.F32}, "has no name"},
		{&CustomSpec{Name: "Empty", DType: tensor.F32}, "custom op Empty has no implementation"},
		{&CustomSpec{Name: "NoDType", CPU: noopCPU}, "custom op NoDType: invalid result dtype"},
		{&CustomSpec{Name: "Far", CPU: noopCPU, Infer: SameAsInput(3)}, "custom op Far: needs input 3, has 1 inputs"},
		{&CustomSpec{Name: "Says", CPU: noopCPU, Infer: func([]*Node) (tensor.DType, tensor.Shape, error) {
			return 0, nil, errors.New("wants a matrix")
		}}, "custom op Says: wants a matrix"},
		{&CustomSpec{Name: "BadShape", CPU: noopCPU, DType: tensor.F32, Shape: tensor.Shape{-1}}, "BadShape"},
		{&CustomSpec{Name: "NoEntry", DType: tensor.F32, PTX: &CustomPTX{Module: ptxOK.Module}}, "needs a module and an entry"},
		{&CustomSpec{Name: "Int", DType: tensor.F32, PTX: &CustomPTX{Module: ptxOK.Module, Entry: "k", Scalars: []any{3}}},
			"PTX scalar 0 has Go type int"},
		{&CustomSpec{Name: "Block", DType: tensor.F32, PTX: &CustomPTX{Module: ptxOK.Module, Entry: "k", Block: -1}}, "negative"},
	}
	for _, c := range cases {
		g := New()
		x := g.Input("x", tensor.F32, 4)
		if y := g.Custom(c.spec, x); y.Valid() || g.Err() == nil || !strings.Contains(g.Err().Error(), c.want) {
			t.Errorf("spec %v: node %v, error %v; want %q", c.spec, y, g.Err(), c.want)
		}
	}
	// Apply with no spec, as a generic pass or importer might call it.
	g := New()
	if y := g.Apply(OpCustom, Attrs{}, g.Input("x", tensor.F32, 4)); y.Valid() || !strings.Contains(g.Err().Error(), "no CustomSpec") {
		t.Errorf("Apply: %v %v", y, g.Err())
	}
	// The PTX itself is checked by package ptx, which graph cannot import:
	// a well-formed spec with a bogus module builds.
	g = New()
	if y := g.Custom(&CustomSpec{Name: "Later", Infer: SameAsInput(0), PTX: ptxOK}, g.Input("x", tensor.F32, 4)); !y.Valid() {
		t.Errorf("Custom with unparsed PTX: %v", g.Err())
	}
}
