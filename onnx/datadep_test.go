package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestUniqueConstantInput runs ONNX's own Unique cases (copied from the
// node suite into testdata/unique, outside special/, which
// gen_models.py rewrites) with X bound at import, so Unique is computed
// there, and checks all four outputs against the
// suite's expected values; with X left a run-time input the import
// reports why it cannot.
func TestUniqueConstantInput(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "unique", "test_unique_*"))
	if len(dirs) != 5 {
		t.Fatalf("%d Unique cases, want the suite's 5", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			set := filepath.Join(dir, "test_data_set_0")
			ins, err := readPBs(set, "input")
			if err != nil {
				t.Fatal(err)
			}
			want, err := readPBs(set, "output")
			if err != nil {
				t.Fatal(err)
			}
			model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(model)
			if err == nil || !strings.Contains(err.Error(), "Unique's output length depends on its values") {
				t.Errorf("run-time X: %v, want the data-dependent shape error", err)
			}
			m, err := Parse(model, WithInputValue("X", ins[0]))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, o := range m.Graph.Outputs() {
				if o.Op != graph.OpConstant {
					t.Errorf("output %v is not folded", o)
				}
			}
			cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
			if err != nil {
				t.Fatal(err)
			}
			defer cg.Close()
			outs, err := cg.RunTyped()
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != len(want) {
				t.Fatalf("%d outputs, want %d", len(outs), len(want))
			}
			for i, o := range outs {
				if err := conformClose(tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: o.Data}, want[i]); err != nil {
					t.Errorf("output %d: %v", i, err)
				}
			}
		})
	}
}

// TestDataDependentListed: Compress over a run-time condition, NonZero
// and Unique over a run-time input are each listed with the reason.
func TestDataDependentListed(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "special", "datadep.onnx"))
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("want *UnsupportedError, got %v", err)
	}
	want := map[string]string{
		"compress_runtime": "condition (input 1) is computed at run time: Compress's output length would depend on its values",
		"nonzero_runtime":  "NonZero's output length depends on its values, and kiln's shapes are static",
		"unique_runtime":   "Unique's output length depends on its values, and kiln's shapes are static",
	}
	if len(ue.Ops) != len(want) {
		t.Fatalf("got %v", err)
	}
	for _, u := range ue.Ops {
		if w, ok := want[u.Node]; !ok || !strings.Contains(u.Reason, w) {
			t.Errorf("%+v: want reason containing %q", u, w)
		}
	}
}

// TestEinsumEquationErrors: a malformed or unsupported equation is an
// error naming it and the problem.
func TestEinsumEquationErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 3)
	y := g.Input("y", tensor.F32, 2, 3, 3)
	for eq, want := range map[string]string{
		"ij,jk->ikk":   "output label k is repeated",
		"ij,jk->iz":    "output label z is repeated or in no operand",
		"ij":           "has 1 operands, the node 2 inputs",
		"ijk,jk->i":    "operand 0 \"ijk\" has rank 2",
		"i1,jk->i":     "'1' is not a label",
		"......,ij->i": "more than one ellipsis",
		"...j,ij->ij":  "leaves out the ellipsis dims",
	} {
		_, err := parseEinsum(eq, []einsumTerm{{n: x}, {n: x}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), eq) {
			t.Errorf("%q: %v, want an error containing %q", eq, err, want)
		}
	}
	// Ellipsis dims of different sizes would need broadcasting.
	c := &ctx{g: g, attrs: map[string]*Attribute{"equation": {Name: "equation", Type: AttrString, S: []byte("...ij,...jk->...ik")}},
		ins: []*value{{node: y}, {node: g.Input("z", tensor.F32, 4, 3, 3)}}}
	c.imp = &importer{g: g}
	if _, err := mapEinsum(c); err == nil || !strings.Contains(err.Error(), "ellipsis dims 2 and 4 differ") {
		t.Errorf("broadcast ellipsis: %v", err)
	}
}

// TestReverseSequenceRunTimeLengths: with sequence_lens a run-time input,
// a length past the time axis is a run-time error naming the bad index,
// not a read of another sequence's rows; valid lengths reverse.
func TestReverseSequenceRunTimeLengths(t *testing.T) {
	model, err := os.ReadFile(filepath.Join("testdata", "node", "test_reversesequence_batch", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	mp, err := Decode(model)
	if err != nil {
		t.Fatal(err)
	}
	if model, _ = liftOpset(model, mp); model == nil { // the suite writes it at opset 10
		t.Fatal("not lifted to opset 11")
	}
	m, err := Parse(model)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	x := make([]float32, 16)
	for i := range x {
		x[i] = float32(i)
	}
	xt, _ := tensor.FromF32(tensor.Shape{4, 4}, x)
	run := func(lens ...int64) (tensor.Tensor, error) {
		lt, _ := tensor.FromI64(tensor.Shape{4}, lens)
		outs, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: xt.Data, DType: tensor.F32},
			kiln.TypedInput{Name: "sequence_lens", Data: lt.Data, DType: tensor.I64})
		if err != nil {
			return tensor.Tensor{}, err
		}
		return tensor.Tensor{DType: outs[0].DType, Shape: outs[0].Shape, Data: outs[0].Data}, nil
	}
	got, err := run(4, 0, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := tensor.FromF32(tensor.Shape{4, 4}, []float32{3, 2, 1, 0, 4, 5, 6, 7, 9, 8, 10, 11, 12, 13, 14, 15})
	if err := conformClose(got, want); err != nil {
		t.Errorf("lengths 4 0 2 1: %v", err)
	}
	if _, err := run(1, 5, 1, 1); err == nil || !strings.Contains(err.Error(), "GatherND: index 4 (position 4 of indices) is out of range [-4, 4)") {
		t.Errorf("length 5 of 4: %v, want GatherND's index error", err)
	}
}
