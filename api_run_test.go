package kiln_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// typedGraph has an F32 input x [2, 3] and an F16 input h [4], and four
// outputs of different dtypes: ArgMax(x, 1) (I64), x > 0 (Bool), 2·h
// widened (F32) and 2·h narrowed back to F16.
func typedGraph() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	h := g.Input("h", tensor.F16, 4)
	g.Output(g.ArgMax(x, 1, false))
	g.Output(g.Greater(x, g.Scalar(0)))
	h2 := g.Mul(g.Cast(h, tensor.F32), g.Scalar(2))
	g.Output(h2)
	g.Output(g.Cast(h2, tensor.F16))
	return g
}

var (
	typedX = []float32{1, 5, 2, 7, -1, 7}
	// Expected by hand: the first maximum of each row, x > 0, and twice
	// the f16 values 1, -2.5, 0.333251953125, 65504 (the last overflows
	// when narrowed: 131008 is past f16's largest finite 65504).
	typedArgMax = []int64{1, 0}
	typedPos    = []byte{1, 1, 1, 1, 0, 1}
	typedH2     = []float32{2, -5, 0.66650390625, 131008}
	typedH2Bits = []uint16{0x4000, 0xC500, 0x3955, 0x7C00}
)

func TestRunTyped(t *testing.T) {
	cg, err := kiln.NewSession(kiln.CPU).Compile(typedGraph())
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	hBits := []uint16{0x3C00, 0xC100, 0x3555, 0x7BFF}
	hVals := []float32{1, -2.5, 0.333251953125, 65504}
	for _, c := range []struct {
		name string
		h    kiln.TypedInput
	}{
		{"f16 input", kiln.TypedInput{Name: "h", Data: tensor.Bytes(hBits), DType: tensor.F16}},
		{"f32 into f16 input", kiln.TypedInput{Name: "h", Data: tensor.Bytes(hVals), DType: tensor.F32}},
	} {
		t.Run(c.name, func(t *testing.T) {
			outs, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: tensor.Bytes(typedX), DType: tensor.F32}, c.h)
			if err != nil {
				t.Fatal(err)
			}
			wantDT := []tensor.DType{tensor.I64, tensor.Bool, tensor.F32, tensor.F16}
			wantShape := []tensor.Shape{{2}, {2, 3}, {4}, {4}}
			for i, o := range outs {
				if o.DType != wantDT[i] || !o.Shape.Equal(wantShape[i]) {
					t.Fatalf("output %d is %v%v, want %v%v", i, o.DType, o.Shape, wantDT[i], wantShape[i])
				}
			}
			if got := tensor.Elems[int64](outs[0].Data); !equal(got, typedArgMax) {
				t.Errorf("ArgMax: got %v, want %v", got, typedArgMax)
			}
			if got := outs[1].Data; !equal(got, typedPos) {
				t.Errorf("x > 0: got %v, want %v", got, typedPos)
			}
			if got := tensor.Elems[float32](outs[2].Data); !equal(got, typedH2) {
				t.Errorf("2h: got %v, want %v", got, typedH2)
			}
			if got := tensor.Elems[uint16](outs[3].Data); !equal(got, typedH2Bits) {
				t.Errorf("f16(2h): got %#04x, want %#04x", got, typedH2Bits)
			}
		})
	}
	// Run converts every output to float32.
	outs, err := cg.Run(kiln.In("x", typedX), kiln.In("h", hVals))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{1, 0}, {1, 1, 1, 1, 0, 1}, typedH2, {2, -5, 0.66650390625, float32(math.Inf(1))}}
	for i := range want {
		if !equal(outs[i], want[i]) {
			t.Errorf("Run output %d: got %v, want %v", i, outs[i], want[i])
		}
	}
	// Non-F32 outputs have no float32 view; OutputTensor has them all.
	if cg.Output(0) != nil {
		t.Error("Output(0) of an I64 output is not nil")
	}
	ot, err := cg.OutputTensor(0)
	if err != nil || ot.DType != tensor.I64 || !equal(ot.I64(), typedArgMax) {
		t.Errorf("OutputTensor(0) = %v %v, want i64 %v", ot, err, typedArgMax)
	}
	if _, err := cg.OutputTensor(4); err == nil {
		t.Error("OutputTensor(4) of 4 outputs: no error")
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// twoOutputMLP is smallMLP with the hidden activation as a second output.
func twoOutputMLP(t testing.TB) (*kiln.CompiledGraph, map[string]tensor.Tensor) {
	t.Helper()
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	h := g.Relu(g.Add(g.MatMul(x, g.Param("w1", tensor.F32, 3, 4)), g.Param("b1", tensor.F32, 4)))
	g.Output(g.Add(g.MatMul(h, g.Param("w2", tensor.F32, 4, 2)), g.Param("b2", tensor.F32, 2)))
	g.Output(h)
	_, feeds := smallMLP(t)
	return compileSet(t, kiln.NewSession(kiln.CPU), g, feeds), feeds
}

// smallMLPHidden is relu(x·w1 + b1) for smallMLP's x (see smallMLPWant).
var smallMLPHidden = []float32{1, 2, 1, 4, 0, 0, 0, 2}

// TestRunSlotsViews checks that spans, Output(i) and Arena() describe the
// same bytes and hold the hand-computed results.
func TestRunSlotsViews(t *testing.T) {
	cg, feeds := twoOutputMLP(t)
	spans, err := cg.RunSlots(feeds["x"].F32())
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	arena := cg.Arena()
	for i, want := range [][]float32{smallMLPWant, smallMLPHidden} {
		sp := spans[i]
		if sp.Len != len(want) || sp.Offset < 0 || sp.Offset+4*sp.Len > len(arena) {
			t.Fatalf("span %d = %+v outside an arena of %d bytes", i, sp, len(arena))
		}
		fromArena := tensor.Elems[float32](arena[sp.Offset : sp.Offset+4*sp.Len])
		out := cg.Output(i)
		if !equal(fromArena, want) || !equal(out, want) {
			t.Errorf("output %d: arena %v, Output %v, want %v", i, fromArena, out, want)
		}
		if unsafe.SliceData(out) != unsafe.SliceData(fromArena) {
			t.Errorf("output %d: Output(i) and the span are different memory", i)
		}
	}
	if cg.Output(2) != nil || cg.Output(-1) != nil {
		t.Error("Output out of range is not nil")
	}
	// Views are live: the next run rewrites them in place.
	view := cg.Output(0)
	x2 := []float32{0, 0, 0, 0, 0, 0} // relu(b1) = [0 0 0 0], so out = b2
	if _, err := cg.RunSlots(x2); err != nil {
		t.Fatal(err)
	}
	if !equal(view, []float32{0.5, -0.5, 0.5, -0.5}) {
		t.Errorf("old view after a second run: %v, want b2 repeated", view)
	}
}

// TestRunRaw checks that RunRaw returns the live views of Output(i).
func TestRunRaw(t *testing.T) {
	cg, feeds := twoOutputMLP(t)
	outs, err := cg.RunRaw(kiln.In("x", feeds["x"].F32()))
	if err != nil {
		t.Fatal(err)
	}
	if !equal(outs[0], smallMLPWant) || !equal(outs[1], smallMLPHidden) {
		t.Fatalf("RunRaw: %v, want %v and %v", outs, smallMLPWant, smallMLPHidden)
	}
	for i := range outs {
		if unsafe.SliceData(outs[i]) != unsafe.SliceData(cg.Output(i)) {
			t.Errorf("RunRaw output %d is a copy, not a view", i)
		}
	}
	// Run, by contrast, copies: its result survives the next run.
	copied, err := cg.Run(kiln.In("x", feeds["x"].F32()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cg.RunRaw(kiln.In("x", make([]float32, 6))); err != nil {
		t.Fatal(err)
	}
	if !equal(copied[0], smallMLPWant) {
		t.Errorf("Run's copy changed by a later run: %v", copied[0])
	}
	if !equal(outs[0], []float32{0.5, -0.5, 0.5, -0.5}) {
		t.Errorf("RunRaw view after a later run: %v, want b2 repeated", outs[0])
	}
}

// TestCommitNoWait checks the asynchronous pair (synchronous on the CPU).
func TestCommitNoWait(t *testing.T) {
	cg, feeds := twoOutputMLP(t)
	if err := cg.CommitNoWait(kiln.In("x", feeds["x"].F32())); err != nil {
		t.Fatal(err)
	}
	if err := cg.SyncPending(); err != nil {
		t.Fatal(err)
	}
	if !equal(cg.Output(0), smallMLPWant) {
		t.Errorf("after CommitNoWait+SyncPending: %v, want %v", cg.Output(0), smallMLPWant)
	}
	if err := cg.CommitNoWait(kiln.In("y", nil)); err == nil {
		t.Error("CommitNoWait with an unknown input: no error")
	}
}

// TestRunPipelined runs several input sets and checks each run's outputs
// separately against the interpreter.
func TestRunPipelined(t *testing.T) {
	g, feeds := smallMLP(t)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	xs := [][]float32{{1, 2, 3, -1, 0, 1}, {0, 0, 0, 0, 0, 0}, {-3, 0.5, 2, 4, 4, -4}}
	var sets [][]kiln.Input
	for _, x := range xs {
		sets = append(sets, []kiln.Input{kiln.In("x", x)})
	}
	outs, err := cg.RunPipelined(sets)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(xs) {
		t.Fatalf("%d results for %d sets", len(outs), len(xs))
	}
	for i, x := range xs {
		feeds["x"] = mustF32(t, x, 2, 3)
		want := interpret(t, g, feeds)
		if err := closeTo(outs[i][0], want[0].F32(), refTol); err != nil {
			t.Errorf("set %d: %v", i, err)
		}
	}
	if !equal(outs[0][0], smallMLPWant) {
		t.Errorf("set 0: %v, want %v", outs[0][0], smallMLPWant)
	}
	// A bad set reports its position.
	sets[1] = []kiln.Input{kiln.In("x", []float32{1})}
	if _, err := cg.RunPipelined(sets); err == nil {
		t.Error("RunPipelined with a short input: no error")
	}
	if outs, err := cg.RunPipelined(nil); err != nil || len(outs) != 0 {
		t.Errorf("RunPipelined(nil) = %v, %v", outs, err)
	}
}
