package onnx

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated test files (testdata/special/kinds.onnx)")

// golden checks that testdata/special/name holds b (-update writes it).
func golden(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join("testdata", "special", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if disk, err := os.ReadFile(path); err != nil || !bytes.Equal(disk, b) {
		t.Errorf("%s is stale or missing (%v): rerun with -update", path, err)
	}
}

// kindsModel has one node of each kind kiln cannot import: an unknown
// op, an unsupported attribute value, a shape computed at run time, and
// a Loop whose trip count is a run-time input and which has a scan output
// but no bound for its rows, with an unknown op in its body; and nodes
// kiln imports between them.
func kindsModel() *ModelProto {
	body := &GraphProto{
		Nodes:   []*NodeProto{{Name: "frob", OpType: "Frobnicate", Inputs: []string{"v_in"}, Outputs: []string{"v_out"}}, nd("Identity", []string{"c_in"}, []string{"c_out"})},
		Inputs:  []*ValueInfo{tensorInfo("i", typeInt64), tensorInfo("c_in", typeBool), info("v_in", typeFloat)},
		Outputs: []*ValueInfo{info("c_out", typeBool), info("v_out", typeFloat), info("v_in", typeFloat)},
	}
	return model(13, &GraphProto{
		Nodes: []*NodeProto{
			{Name: "mystery", OpType: "NoSuchOp", Inputs: []string{"x"}, Outputs: []string{"a"}},
			{Name: "fine", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"b"}},
			{Name: "to_string", OpType: "Cast", Inputs: []string{"b"}, Outputs: []string{"s"}, Attrs: []*Attribute{intAttr("to", 8)}},
			{Name: "reshape_dyn", OpType: "Reshape", Inputs: []string{"b", "dims"}, Outputs: []string{"r"}},
			{Name: "loop", OpType: "Loop", Inputs: []string{"n", "", "x"}, Outputs: []string{"l", "ls"}, Attrs: []*Attribute{graphAttr("body", body)}},
		},
		Inputs:  []*ValueInfo{tensorInfo("x", typeFloat, 2, 3), tensorInfo("dims", typeInt64, 2), tensorInfo("n", typeInt64)},
		Outputs: []*ValueInfo{info("a", typeFloat), info("s", typeFloat), info("r", typeFloat), info("l", typeFloat)},
	})
}

// TestUnsupportedKinds: one import lists every node kiln cannot import,
// of every kind, each with its op, opset, name and reason. The model is
// also kept as testdata/special/kinds.onnx (and kinds_symbolic.onnx) for
// cmd/kiln's inspect tests (go test -run TestUnsupportedKinds -update
// rewrites them).
func TestUnsupportedKinds(t *testing.T) {
	b := encModel(kindsModel())
	golden(t, "kinds.onnx", b)
	// The same with x's first dim symbolic: the import stops at the
	// inputs, and inspect falls back on Unsupported's op-type list.
	sym := kindsModel()
	sym.Graph.Inputs[0].Dims[0] = Dim{Param: "batch"}
	golden(t, "kinds_symbolic.onnx", encModel(sym))
	_, err := Parse(b)
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("want *UnsupportedError, got %v", err)
	}
	want := map[string]struct{ op, reason string }{
		"mystery":        {"NoSuchOp", ""},
		"to_string":      {"Cast", "STRING"},
		"reshape_dyn":    {"Reshape", "computed at run time"},
		"loop":           {"Loop", "scan outputs, whose rows need a bound"},
		"loop/body/frob": {"Frobnicate", ""},
	}
	if len(ue.Ops) != len(want) {
		t.Errorf("got %d entries, want %d:\n%v", len(ue.Ops), len(want), err)
	}
	for _, u := range ue.Ops {
		w, ok := want[u.Node]
		if !ok || u.OpType != w.op || u.Opset != 13 || (w.reason == "") != (u.Reason == "") || !strings.Contains(u.Reason, w.reason) {
			t.Errorf("entry %+v, want %+v", u, w)
		}
		if !strings.Contains(err.Error(), u.String()) {
			t.Errorf("message lacks %q:\n%v", u, err)
		}
	}
	for _, s := range []string{`NoSuchOp (node "mystery", ai.onnx opset 13): unknown op`, "5 unsupported"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q:\n%v", s, err)
		}
	}
}
