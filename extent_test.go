package kiln_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// Sizes of the row-wise MLP used by the extent and bucket tests:
// relu(x·w1 + b1)·w2 over rows x [rows, extIn].
const extIn, extHid, extOut = 6, 10, 3

// extMLP builds the row-wise MLP at a number of rows.
func extMLP(rows int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, rows, extIn)
	h := g.Relu(g.Add(g.MatMul(x, g.Param("w1", tensor.F32, extIn, extHid)), g.Param("b1", tensor.F32, extHid)))
	g.Output(g.MatMul(h, g.Param("w2", tensor.F32, extHid, extOut)))
	return g
}

// extWeights are seeded MLP weights, by param name.
func extWeights(seed uint64) map[string][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	w := map[string][]float32{}
	for name, n := range map[string]int{"w1": extIn * extHid, "b1": extHid, "w2": extHid * extOut} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		w[name] = v
	}
	return w
}

// extRandom is n seeded values in [-1, 1).
func extRandom(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 3))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(2*r.Float64() - 1)
	}
	return v
}

// extMLPWant computes the MLP row by row in float64, independently of
// kiln.
func extMLPWant(x []float32, w map[string][]float32, rows int) []float64 {
	out := make([]float64, rows*extOut)
	for r := range rows {
		h := make([]float64, extHid)
		for j := range extHid {
			s := float64(w["b1"][j])
			for k := range extIn {
				s += float64(x[r*extIn+k]) * float64(w["w1"][k*extHid+j])
			}
			h[j] = math.Max(s, 0)
		}
		for j := range extOut {
			for k := range extHid {
				out[r*extOut+j] += h[k] * float64(w["w2"][k*extOut+j])
			}
		}
	}
	return out
}

// extCheck fails unless got equals want within tol relative to want's
// scale (at least 1).
func extCheck(t testing.TB, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func extSetAll(t testing.TB, cg *kiln.CompiledGraph, w map[string][]float32) {
	t.Helper()
	for name, v := range w {
		if err := cg.SetParam(name, v); err != nil {
			t.Fatal(err)
		}
	}
}

func extCompile(t testing.TB, g *graph.Graph) *kiln.CompiledGraph {
	t.Helper()
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	return cg
}

// TestActiveExtentMLP runs a batch-bucketed MLP compiled at 8 rows with
// the extent set to 3: padded rows hold NaN, which must not reach the
// results, and every output path is actual-sized.
func TestActiveExtentMLP(t *testing.T) {
	const upper, actual = 8, 3
	cg := extCompile(t, extMLP(upper))
	// The extent is set before any param: params set later must reach the
	// specialised program through the shared weights.
	if err := cg.SetActiveExtent(actual, upper); err != nil {
		t.Fatal(err)
	}
	w := extWeights(1)
	extSetAll(t, cg, w)
	x := extRandom(upper*extIn, 2)
	for i := actual * extIn; i < len(x); i++ {
		x[i] = float32(math.NaN())
	}
	want := extMLPWant(x, w, actual)

	outs, err := cg.Run(kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "Run", outs[0], want, 1e-5)
	if a, u, ok := cg.ActiveExtent(); !ok || a != actual || u != upper {
		t.Errorf("ActiveExtent = %d, %d, %v", a, u, ok)
	}

	spans, err := cg.RunSlots(x)
	if err != nil {
		t.Fatal(err)
	}
	if spans[0].Len != actual*extOut {
		t.Fatalf("span length %d, want %d", spans[0].Len, actual*extOut)
	}
	arena := tensor.Elems[float32](cg.Arena()[spans[0].Offset : spans[0].Offset+4*spans[0].Len])
	extCheck(t, "RunSlots span", arena, want, 1e-5)
	extCheck(t, "Output", cg.Output(0), want, 1e-5)
	ot, err := cg.OutputTensor(0)
	if err != nil || !ot.Shape.Equal(tensor.Shape{actual, extOut}) {
		t.Fatalf("OutputTensor: %v %v", ot, err)
	}
	typed, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: tensor.Bytes(x), DType: tensor.F32})
	if err != nil || !typed[0].Shape.Equal(tensor.Shape{actual, extOut}) {
		t.Fatalf("RunTyped: %v %v", typed, err)
	}
	extCheck(t, "RunTyped", tensor.Elems[float32](typed[0].Data), want, 1e-5)

	// The same as a graph compiled at the actual size.
	direct := extCompile(t, extMLP(actual))
	extSetAll(t, direct, w)
	d, err := direct.Run(kiln.In("x", x[:actual*extIn]))
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "vs direct compile", outs[0], widen(d[0]), 1e-6)

	// A param changed now reaches the specialised program too.
	w["w2"] = extRandom(extHid*extOut, 9)
	if err := cg.SetParam("w2", w["w2"]); err != nil {
		t.Fatal(err)
	}
	outs, err = cg.Run(kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "after SetParam", outs[0], extMLPWant(x, w, actual), 1e-5)

	if n := testing.AllocsPerRun(20, func() { cg.RunSlots(x) }); n != 0 {
		t.Errorf("RunSlots with an active extent allocates %v times per run", n)
	}

	// Clones carry the extent.
	c, err := cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	co, err := c.Run(kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "clone", co[0], extMLPWant(x, w, actual), 1e-5)
	c.Close()

	// Back to the full size.
	cg.ClearActiveExtent()
	if _, _, ok := cg.ActiveExtent(); ok {
		t.Error("ActiveExtent still set after ClearActiveExtent")
	}
	full := extRandom(upper*extIn, 4)
	outs, err = cg.Run(kiln.In("x", full))
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "cleared", outs[0], extMLPWant(full, w, upper), 1e-5)
	c, err = cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if co, err = c.Run(kiln.In("x", full)); err != nil || len(co[0]) != upper*extOut {
		t.Fatalf("clone of a cleared graph: %d values, %v", len(co[0]), err)
	}

	// actual == upper is the full program; then back to the cached 3.
	if err := cg.SetActiveExtent(upper, upper); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := cg.ActiveExtent(); ok {
		t.Error("SetActiveExtent(upper, upper) left a specialised program active")
	}
	if err := cg.SetActiveExtent(actual, upper); err != nil {
		t.Fatal(err)
	}
	if outs, err = cg.Run(kiln.In("x", x)); err != nil {
		t.Fatal(err)
	}
	extCheck(t, "reselected", outs[0], extMLPWant(x, w, actual), 1e-5)
}

// TestActiveExtentHandle feeds an accumulator output back into its
// handle: only the active rows change.
func TestActiveExtentHandle(t *testing.T) {
	g := graph.New()
	state := g.Input("state", tensor.F32, 4, 2)
	x := g.Input("x", tensor.F32, 4, 2)
	g.Output(g.Add(state, x))
	cg := extCompile(t, g)
	if err := cg.BindHandle("state", []float32{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	if err := cg.FeedHandle("state", 0); err != nil {
		t.Fatal(err)
	}
	if err := cg.SetActiveExtent(2, 4); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := cg.Run(kiln.In("x", []float32{10, 20, 30, 40, 50, 60, 70, 80})); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cg.ReadHandle("state")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{21, 42, 63, 84, 5, 6, 7, 8}
	extCheck(t, "handle", got, want, 0)
}

// extEncoder is demo.Encoder with its position embeddings cut from a
// [maxPos, hidden] table (a param that does not depend on the sequence
// length), so the graph can be resized along the sequence.
func extEncoder(t testing.TB, c demo.Config, maxPos int) *graph.Graph {
	t.Helper()
	g := demo.Encoder(c)
	pos, ok := g.Lookup("embeddings.position")
	if !ok {
		t.Fatal("demo encoder has no embeddings.position")
	}
	table := g.Param("embeddings.position_table", tensor.F32, maxPos, c.Hidden)
	cut := g.Slice(table, graph.SliceSpec{Starts: []int{0}, Ends: []int{c.Seq}})
	if err := g.ReplaceUses(pos, cut); err != nil {
		t.Fatal(err)
	}
	if err := graph.Verify(g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestActiveExtentEncoder compiles the tiny demo encoder at sequence 16,
// runs it at 5 with inputs padded by garbage, and compares with the same
// encoder compiled at 5 (bitwise: the same kernels run) and with the
// reference interpreter.
func TestActiveExtentEncoder(t *testing.T) {
	const upper, actual, maxPos = 16, 5, 40
	c16, c5 := demo.Tiny, demo.Tiny
	c16.Seq, c5.Seq = upper, actual
	g16, g5 := extEncoder(t, c16, maxPos), extEncoder(t, c5, maxPos)
	w := demo.Weights(g16, 11)
	w5 := map[string][]float32{}
	for k, v := range w {
		w5[k] = v
	}
	w5["embeddings.position"] = w["embeddings.position"][:actual*c5.Hidden] // unused after the rewrite

	r := rand.New(rand.NewPCG(5, 5))
	ids16 := make([]int64, c16.Batch*upper)
	mask16 := make([]float32, c16.Batch*upper)
	ids5 := make([]int64, c5.Batch*actual)
	mask5 := make([]float32, c5.Batch*actual)
	for b := range c16.Batch {
		for s := range upper {
			id, m := int64(r.IntN(c16.Vocab)), float32(0)
			if s == actual-1 && b == 1 {
				m = -10000 // a padded key inside the active rows
			}
			if s >= actual {
				m = float32(r.NormFloat64() * 100) // garbage: must not matter
			} else {
				ids5[b*actual+s], mask5[b*actual+s] = id, m
			}
			ids16[b*upper+s], mask16[b*upper+s] = id, m
		}
	}

	cg := extCompile(t, g16)
	extSetAll(t, cg, w)
	if err := cg.SetActiveExtent(actual, upper); err != nil {
		t.Fatal(err)
	}
	got, err := cg.RunTyped(
		kiln.TypedInput{Name: "input_ids", Data: tensor.Bytes(ids16), DType: tensor.I64},
		kiln.TypedInput{Name: "attention_mask", Data: tensor.Bytes(mask16), DType: tensor.F32})
	if err != nil {
		t.Fatal(err)
	}
	if want := (tensor.Shape{c5.Batch, actual, c5.Hidden}); !got[0].Shape.Equal(want) {
		t.Fatalf("output shape %v, want %v", got[0].Shape, want)
	}

	direct := extCompile(t, g5)
	extSetAll(t, direct, w5)
	want, err := direct.RunTyped(
		kiln.TypedInput{Name: "input_ids", Data: tensor.Bytes(ids5), DType: tensor.I64},
		kiln.TypedInput{Name: "attention_mask", Data: tensor.Bytes(mask5), DType: tensor.F32})
	if err != nil {
		t.Fatal(err)
	}
	gv, wv := tensor.Elems[float32](got[0].Data), tensor.Elems[float32](want[0].Data)
	for i := range wv {
		if math.Float32bits(gv[i]) != math.Float32bits(wv[i]) {
			t.Fatalf("element %d: %v, compiled at %d gives %v", i, gv[i], actual, wv[i])
		}
	}

	feeds := map[string]tensor.Tensor{}
	for k, v := range w5 {
		p, _ := g5.Lookup(k)
		feeds[k], _ = tensor.FromF32(p.Shape, v)
	}
	feeds["input_ids"], _ = tensor.FromI64(tensor.Shape{c5.Batch, actual}, ids5)
	feeds["attention_mask"], _ = tensor.FromF32(tensor.Shape{c5.Batch, 1, 1, actual}, mask5)
	ref, err := ops.Interpret(g5, feeds)
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "vs interpreter", gv, widen(ref[0].F32()), 1e-5)
}

func TestActiveExtentErrors(t *testing.T) {
	cg := extCompile(t, extMLP(8))
	for _, c := range []struct {
		actual, upper int
		want          string
	}{
		{3, 7, "no input has a dim of 7"},
		{0, 8, "[1, 8]"},
		{9, 8, "[1, 8]"},
		{-1, 8, "[1, 8]"},
	} {
		if err := cg.SetActiveExtent(c.actual, c.upper); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetActiveExtent(%d, %d) = %v, want an error mentioning %q", c.actual, c.upper, err, c.want)
		}
	}
	if _, _, ok := cg.ActiveExtent(); ok {
		t.Error("a failed SetActiveExtent left an extent active")
	}

	// The unmodified demo encoder adds a [seq, hidden] position param:
	// it cannot be resized, and the error names the param.
	c := demo.Tiny
	c.Seq = 16
	enc := extCompile(t, demo.Encoder(c))
	err := enc.SetActiveExtent(5, 16)
	if err == nil || !strings.Contains(err.Error(), "embeddings.position") {
		t.Errorf("resizing a graph with a [seq, hidden] param: %v", err)
	}

	cg.Close()
	if err := cg.SetActiveExtent(3, 8); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("SetActiveExtent on a closed graph: %v", err)
	}
}

// TestActiveExtentClonesConcurrent runs clones of a graph with an active
// extent at the same time (meaningful under -race): each owns its
// specialised arena over the shared weights.
func TestActiveExtentClonesConcurrent(t *testing.T) {
	cg := extCompile(t, extMLP(8))
	w := extWeights(6)
	extSetAll(t, cg, w)
	if err := cg.SetActiveExtent(5, 8); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for i := range 4 {
		c, err := cg.Clone()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		x := extRandom(8*extIn, uint64(10+i))
		want := extMLPWant(x, w, 5)
		go func() {
			for range 20 {
				if _, err := c.RunSlots(x); err != nil {
					errs <- err
					return
				}
			}
			got := c.Output(0)
			for j := range want {
				if approx.Far(float64(got[j]), want[j], 1e-5*math.Max(1, math.Abs(want[j]))) {
					errs <- fmt.Errorf("clone %d: element %d = %v, want %v", i, j, got[j], want[j])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
