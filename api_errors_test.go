package kiln_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// twoInputMLP is smallMLP's output plus a second input y [2, 2], so that
// a run can fail on its second input after the first was accepted.
func twoInputMLP(t testing.TB) (*graph.Graph, map[string]tensor.Tensor) {
	t.Helper()
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	y := g.Input("y", tensor.F32, 2, 2)
	h := g.Relu(g.Add(g.MatMul(x, g.Param("w1", tensor.F32, 3, 4)), g.Param("b1", tensor.F32, 4)))
	g.Output(g.Add(g.Add(g.MatMul(h, g.Param("w2", tensor.F32, 4, 2)), g.Param("b2", tensor.F32, 2)), y))
	_, feeds := smallMLP(t)
	feeds["y"] = mustF32(t, []float32{1, 2, 3, 4}, 2, 2)
	return g, feeds
}

// twoInputWant is smallMLPWant + y.
var twoInputWant = []float32{11.5, 0.5, 7.5, 1.5}

// TestBadInputs runs a table of bad calls. Each must return an error and
// leave the arena exactly as the last good run left it (no input written
// by a call that fails); a good run afterwards must still be right.
func TestBadInputs(t *testing.T) {
	g, feeds := twoInputMLP(t)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	x, y := feeds["x"].F32(), feeds["y"].F32()
	x2 := []float32{9, 9, 9, 9, 9, 9} // differs from x, so a stray write shows
	y2 := []float32{7, 7, 7, 7}
	ti := func(name string, v []float32) kiln.TypedInput {
		return kiln.TypedInput{Name: name, Data: tensor.Bytes(v), DType: tensor.F32}
	}
	cases := []struct {
		name string
		call func() error
		msg  string // a piece of the error message
	}{
		{"RunSlots no inputs", func() error { _, err := cg.RunSlots(); return err }, "0 inputs"},
		{"RunSlots one input", func() error { _, err := cg.RunSlots(x2); return err }, "1 inputs"},
		{"RunSlots three inputs", func() error { _, err := cg.RunSlots(x2, y2, y2); return err }, "3 inputs"},
		{"RunSlots short x", func() error { _, err := cg.RunSlots(x2[:5], y2); return err }, `"x"`},
		{"RunSlots long x", func() error { _, err := cg.RunSlots(append(x2, 1), y2); return err }, `"x"`},
		{"RunSlots good x, short y", func() error { _, err := cg.RunSlots(x2, y2[:3]); return err }, `"y"`},
		{"RunSlots nil x", func() error { _, err := cg.RunSlots(nil, y2); return err }, `"x"`},
		{"Run missing y", func() error { _, err := cg.Run(kiln.In("x", x2)); return err }, "y"},
		{"Run no inputs", func() error { _, err := cg.Run(); return err }, "missing"},
		{"Run unknown name", func() error { _, err := cg.Run(kiln.In("x", x2), kiln.In("y", y2), kiln.In("z", y2)); return err }, `"z"`},
		{"Run duplicate x", func() error { _, err := cg.Run(kiln.In("x", x2), kiln.In("x", x2), kiln.In("y", y2)); return err }, "twice"},
		{"Run short x", func() error { _, err := cg.Run(kiln.In("x", x2[:4]), kiln.In("y", y2)); return err }, `"x"`},
		{"Run good x, long y", func() error { _, err := cg.Run(kiln.In("x", x2), kiln.In("y", append(y2, 1))); return err }, `"y"`},
		{"RunRaw good x, short y", func() error { _, err := cg.RunRaw(kiln.In("x", x2), kiln.In("y", y2[:1])); return err }, `"y"`},
		{"RunTyped wrong byte count", func() error {
			_, err := cg.RunTyped(ti("x", x2), kiln.TypedInput{Name: "y", Data: make([]byte, 15), DType: tensor.F32})
			return err
		}, `"y"`},
		{"RunTyped invalid dtype", func() error {
			_, err := cg.RunTyped(ti("x", x2), kiln.TypedInput{Name: "y", Data: make([]byte, 16), DType: tensor.Invalid})
			return err
		}, `"y"`},
		{"RunTyped too few i64", func() error {
			_, err := cg.RunTyped(ti("x", x2), kiln.TypedInput{Name: "y", Data: make([]byte, 16), DType: tensor.I64})
			return err
		}, `"y"`},
		{"SetParam unknown", func() error { return cg.SetParam("w3", y2) }, "w1"},
		{"SetParam wrong size", func() error { return cg.SetParam("b2", y2) }, "b2"},
		{"RunPipelined bad second set", func() error {
			_, err := cg.RunPipelined([][]kiln.Input{{kiln.In("x", x), kiln.In("y", y)}, {kiln.In("x", x2)}})
			return err
		}, "set 1"},
		{"BindHandle wrong length", func() error { return cg.BindHandle("y", y2[:3]) }, "y"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := cg.RunSlots(x, y); err != nil {
				t.Fatal(err)
			}
			before := bytes.Clone(cg.Arena())
			err := c.call()
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not mention %s", err, c.msg)
			}
			if c.name != "RunPipelined bad second set" && !bytes.Equal(before, cg.Arena()) {
				t.Errorf("the failed call changed the arena")
			}
			if _, err := cg.RunSlots(x, y); err != nil {
				t.Fatalf("good run after the failure: %v", err)
			}
			if !equal(cg.Output(0), twoInputWant) {
				t.Errorf("good run after the failure: %v, want %v", cg.Output(0), twoInputWant)
			}
		})
	}
}

// TestParamsNeverSet checks that a run before every param is set fails,
// names each missing param and writes nothing.
func TestParamsNeverSet(t *testing.T) {
	g, feeds := twoInputMLP(t)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := cg.SetParam("w1", feeds["w1"].F32()); err != nil {
		t.Fatal(err)
	}
	before := bytes.Clone(cg.Arena())
	x, y := feeds["x"].F32(), feeds["y"].F32()
	for name, call := range map[string]func() error{
		"RunSlots": func() error { _, err := cg.RunSlots(x, y); return err },
		"Run":      func() error { _, err := cg.Run(kiln.In("x", x), kiln.In("y", y)); return err },
	} {
		err := call()
		if err == nil {
			t.Fatalf("%s with unset params: no error", name)
		}
		for _, p := range []string{"b1", "w2", "b2"} {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: error %q does not name %s", name, err, p)
			}
		}
		if strings.Contains(err.Error(), "w1") {
			t.Errorf("%s: error %q names w1, which was set", name, err)
		}
		if !bytes.Equal(before, cg.Arena()) {
			t.Errorf("%s: the failed run changed the arena", name)
		}
	}
	for _, p := range []string{"b1", "w2", "b2"} {
		if err := cg.SetParam(p, feeds[p].F32()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cg.RunSlots(x, y); err != nil {
		t.Fatal(err)
	}
	if !equal(cg.Output(0), twoInputWant) {
		t.Errorf("after setting the params: %v, want %v", cg.Output(0), twoInputWant)
	}
}

func TestCompileErrors(t *testing.T) {
	s := kiln.NewSession(kiln.CPU)
	if cg, err := s.Compile(nil); err == nil || cg != nil {
		t.Errorf("Compile(nil) = %v, %v; want an error", cg, err)
	}
	g := graph.New()
	a := g.Input("a", tensor.F32, 2, 3)
	b := g.Input("b", tensor.F32, 4)
	g.Output(g.Relu(g.Add(a, b))) // [2 3] + [4] does not broadcast
	if g.Err() == nil {
		t.Fatal("the builder accepted [2 3] + [4]")
	}
	if _, err := s.Compile(g); !errors.Is(err, g.Err()) {
		t.Errorf("Compile = %v, want the build error %v", err, g.Err())
	}
	if _, err := kiln.NewSession(kiln.Device{Kind: "tpu"}).Compile(testModelGraph(t)); err == nil {
		t.Error("Compile for an unknown device kind: no error")
	}
}

func testModelGraph(t testing.TB) *graph.Graph {
	g, _ := smallMLP(t)
	return g
}

// TestRunSlotsNonF32 checks that RunSlots refuses an I64 input (the demo
// encoder's token ids) instead of reinterpreting float bits.
func TestRunSlotsNonF32(t *testing.T) {
	g := demo.Encoder(demo.Tiny)
	feeds := randomFeeds(t, g, 1)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	ids := make([]float32, 2*demo.Tiny.Batch*demo.Tiny.Seq) // the bytes of the i64 ids
	mask := feeds["attention_mask"].F32()
	before := bytes.Clone(cg.Arena())
	if _, err := cg.RunSlots(ids, mask); err == nil || !strings.Contains(err.Error(), "input_ids") {
		t.Errorf("RunSlots with an I64 input: %v, want an error naming input_ids", err)
	}
	if !bytes.Equal(before, cg.Arena()) {
		t.Error("the failed run changed the arena")
	}
	if err := cg.BindHandle("input_ids", ids[:len(ids)/2]); err == nil {
		t.Error("BindHandle on an I64 input: no error")
	}
}

// TestKernelError makes a Gather index go out of range at run time: the
// run fails with the kernel's error, and the next good run is right.
func TestKernelError(t *testing.T) {
	g := graph.New()
	table := g.Param("table", tensor.F32, 5, 2)
	idx := g.Input("idx", tensor.I64, 3)
	g.Output(g.Mul(g.Gather(table, idx, 0), g.Scalar(10)))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := cg.SetParam("table", seq(10, 0, 1)); err != nil { // row r is [2r, 2r+1]
		t.Fatal(err)
	}
	run := func(ids ...int64) ([]float32, error) {
		out, err := cg.RunTyped(kiln.TypedInput{Name: "idx", Data: tensor.Bytes(ids), DType: tensor.I64})
		if err != nil {
			return nil, err
		}
		return tensor.Elems[float32](out[0].Data), nil
	}
	for _, bad := range [][]int64{{0, 7, 1}, {5, 0, 0}, {0, 0, -6}} {
		if _, err := run(bad...); err == nil || !strings.Contains(err.Error(), "range") {
			t.Errorf("indices %v: %v, want an out-of-range error", bad, err)
		}
	}
	got, err := run(4, 0, -1) // -1 is the last row
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{80, 90, 0, 10, 80, 90}; !equal(got, want) {
		t.Errorf("after failed runs: %v, want %v", got, want)
	}
}
