package graph

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func TestDumpExact(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 2, 3)
	a := g.Add(x, g.Param("b", tensor.F32, 3))
	s := g.Softmax(a, -1)
	r := g.ReduceSum(a, true, 0)
	g.Pad(x, []int{1, 0, 0, 1}, PadReflect, 0)
	c := g.Cast(x, tensor.F16)
	g.SetName(g.LeakyRelu(x, 0.25), "leaky")
	g.Transpose(x)
	g.Output(s, r)
	g.OutputNamed("half", c)
	want := `graph: 9 nodes, 1 inputs, 1 params, 3 outputs
  %0 x = Input() f32[2 3]
  %1 b = Param() f32[3]
  %2 add_2 = Add(x, b) f32[2 3]
  %3 softmax_3 = Softmax(add_2) f32[2 3] {Axis:1}
  %4 reducesum_4 = ReduceSum(add_2) f32[1 3] {Axes:[0] KeepDims:true}
  %5 pad_5 = Pad(x) f32[3 4] {Pads:[1 0 0 1] Mode:reflect}
  %6 cast_6 = Cast(x) f16[2 3] {To:f16}
  %7 leaky = LeakyRelu(x) f32[2 3] {Alpha:0.25}
  %8 transpose_8 = Transpose(x) f32[3 2] {Perm:[1 0]}
  output output0 = softmax_3
  output output1 = reducesum_4
  output half = cast_6
`
	if got := Dump(g); got != want {
		t.Errorf("Dump:\n%s\nwant:\n%s", got, want)
	}
	g.Relu(nil)
	if d := Dump(g); !strings.Contains(d, "error: graph: Relu: input 0 is nil") {
		t.Errorf("Dump of a failed graph does not show the error:\n%s", d)
	}
}

// TestDumpMentionsEverything checks, for whole models, that each node's
// line carries its name, op, inputs, dtype and shape, and every non-zero
// attribute.
func TestDumpMentionsEverything(t *testing.T) {
	g := New()
	g.Output(buildEncoder(g), buildCNN(g))
	g.Output(g.Slice(g.Input("seq", tensor.I64, 9), SliceSpec{Starts: []int{-1}, Ends: []int{-100}, Steps: []int{-2}}))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(Dump(g), "\n")
	if len(lines) < len(g.Nodes)+1 {
		t.Fatalf("%d lines for %d nodes", len(lines), len(g.Nodes))
	}
	for i, n := range g.Nodes {
		line := lines[i+1]
		prefix := fmt.Sprintf("  %%%d %s = %s(", n.ID, n.Name, n.Op)
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("line %q does not start with %q", line, prefix)
			continue
		}
		ins := make([]string, len(n.Inputs))
		for j, in := range n.Inputs {
			ins[j] = in.Name
		}
		if want := "(" + strings.Join(ins, ", ") + ") " + n.DType.String() + n.Shape.String(); !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
		v := reflect.ValueOf(n.Attrs)
		nonZero := 0
		for f := 0; f < v.NumField(); f++ {
			if !v.Field(f).IsZero() {
				nonZero++
				if name := v.Type().Field(f).Name + ":"; !strings.Contains(line, name) {
					t.Errorf("line %q lacks attribute %s", line, name)
				}
			}
		}
		if nonZero == 0 && strings.Contains(line, "{") {
			t.Errorf("line %q shows attributes for a node without any", line)
		}
	}
	for i, name := range g.OutputNames() {
		if want := "  output " + name + " = " + g.Outputs()[i].Name; !strings.Contains(Dump(g), want+"\n") {
			t.Errorf("dump lacks %q", want)
		}
	}
	// Spot checks of values, not just field names.
	for _, want := range []string{"Steps:[-2]", "Starts:[8]", "Ends:[-1]", "Perm:[0 2 1 3]", "Pads:[1 1 1 1]",
		"Kernel:[2 2]", "TransB:true", "Groups:1", "Eps:1e-05", "Sizes:[16 16 16]", "Index:2"} {
		if !strings.Contains(Dump(g), want) {
			t.Errorf("dump lacks %q", want)
		}
	}
}

func TestParseOpRoundTrip(t *testing.T) {
	ops := Ops()
	// Ops leaves out OpInvalid and OpCustom.
	if len(ops) != int(numOps)-2-len(FusedOps()) || ops[0] != OpInput || ops[len(ops)-1] != OpMoE {
		t.Fatalf("Ops() = %v", ops)
	}
	seen := map[string]bool{}
	for _, op := range ops {
		s := op.String()
		if s == "" || strings.HasPrefix(s, "Op(") || seen[s] {
			t.Errorf("op %d has name %q (empty, unnamed or repeated)", uint8(op), s)
		}
		seen[s] = true
		got, err := ParseOp(s)
		if err != nil || got != op {
			t.Errorf("ParseOp(%q) = %v, %v; want %v", s, got, err, uint8(op))
		}
	}
	for _, bad := range []string{"", "Invalid", "add", "Op(5)", "MatMul "} {
		if op, err := ParseOp(bad); err == nil {
			t.Errorf("ParseOp(%q) = %v, want an error", bad, op)
		}
	}
	if s := Op(200).String(); s != "Op(200)" {
		t.Errorf("Op(200).String() = %q", s)
	}
}

func TestOpFamilies(t *testing.T) {
	type fam struct {
		name string
		is   func(Op) bool
		yes  []Op
		no   []Op
	}
	for _, f := range []fam{
		{"IsSource", Op.IsSource, []Op{OpInput, OpParam, OpConstant}, []Op{OpInvalid, OpNeg}},
		{"IsUnary", Op.IsUnary, []Op{OpNeg, OpGelu, OpClip, OpNot}, []Op{OpConstant, OpAdd, OpCast}},
		{"IsBinary", Op.IsBinary, []Op{OpAdd, OpMin, OpEqual, OpOr}, []Op{OpNot, OpWhere, OpMatMul}},
		{"IsCompare", Op.IsCompare, []Op{OpEqual, OpGreaterOrEqual}, []Op{OpMin, OpAnd}},
		{"IsElementwise", Op.IsElementwise, []Op{OpExp, OpPow, OpWhere, OpCast}, []Op{OpMatMul, OpSoftmax, OpExpand}},
		{"IsReduce", Op.IsReduce, []Op{OpReduceSum, OpReduceProd}, []Op{OpArgMax, OpSoftmax, OpMin}},
		{"IsView", Op.IsView, []Op{OpReshape, OpSqueeze, OpUnsqueeze, OpFlatten}, []Op{OpTranspose, OpSlice, OpExpand}},
	} {
		for _, op := range f.yes {
			if !f.is(op) {
				t.Errorf("%s(%v) = false", f.name, op)
			}
		}
		for _, op := range f.no {
			if f.is(op) {
				t.Errorf("%s(%v) = true", f.name, op)
			}
		}
	}
	for m, want := range map[PadMode]string{PadConstant: "constant", PadReflect: "reflect", PadEdge: "edge", PadMode(7): "padmode?"} {
		if m.String() != want {
			t.Errorf("PadMode %d = %q, want %q", uint8(m), m.String(), want)
		}
	}
}
