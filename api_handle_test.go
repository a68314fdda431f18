package kiln_test

import (
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// kvDirect is kvDecoder computed directly in float64: it keeps its own
// caches and returns each step's attention result.
type kvDirect struct {
	d     int
	w     map[string][]float32
	k, v  [][]float64 // rows written so far
	trace []float64
}

func (m *kvDirect) step(x []float32) []float64 {
	proj := func(name string) []float64 {
		out := make([]float64, m.d)
		for j := range out {
			for i := range m.d {
				out[j] += float64(x[i]) * float64(m.w[name][i*m.d+j])
			}
		}
		return out
	}
	q := proj("wq")
	m.k, m.v = append(m.k, proj("wk")), append(m.v, proj("wv"))
	scores := make([]float64, len(m.k))
	top := math.Inf(-1)
	for j, k := range m.k {
		for i := range m.d {
			scores[j] += q[i] * k[i]
		}
		scores[j] /= math.Sqrt(float64(m.d))
		top = math.Max(top, scores[j])
	}
	var z float64
	for j := range scores {
		scores[j] = math.Exp(scores[j] - top)
		z += scores[j]
	}
	out := make([]float64, m.d)
	for j, v := range m.v {
		for i := range out {
			out[i] += scores[j] / z * v[i]
		}
	}
	return out
}

// TestKVCacheDecode decodes with the caches as fed-back handles and
// compares every step, and the caches themselves, with kvDirect. Steps
// alternate between RunSlots (nil for the handles) and Run (handles left
// out), and the decode fills the cache to its last row.
func TestKVCacheDecode(t *testing.T) {
	const maxLen, d = 5, 4
	w := kvWeights(d)
	cg, err := kiln.NewSession(kiln.CPU).Compile(kvDecoder(maxLen, d))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	for name, v := range w {
		if err := cg.SetParam(name, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"k_cache", "v_cache"} {
		if err := cg.BindHandle(name, make([]float32, maxLen*d)); err != nil {
			t.Fatal(err)
		}
		if err := cg.FeedHandle(name, i+1); err != nil {
			t.Fatal(err)
		}
	}
	ref := &kvDirect{d: d, w: w}
	for step := range maxLen {
		x := kvToken(step, d)
		pos, mask := kvStepInputs(step, maxLen)
		var got []float32
		if step%2 == 0 {
			if _, err := cg.RunSlots(x, pos, mask, nil, nil); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			got = cg.Output(0)
		} else {
			outs, err := cg.Run(kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask))
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			got = outs[0]
		}
		want := ref.step(x)
		if err := closeTo(got, toF32(want), refTol); err != nil {
			t.Errorf("step %d: %v", step, err)
		}
		// The caches hold every row written so far, zeros after.
		for name, rows := range map[string][][]float64{"k_cache": ref.k, "v_cache": ref.v} {
			c, err := cg.ReadHandle(name)
			if err != nil {
				t.Fatal(err)
			}
			wantCache := make([]float32, maxLen*d)
			for r, row := range rows {
				copy(wantCache[r*d:], toF32(row))
			}
			if err := closeTo(c, wantCache, refTol); err != nil {
				t.Errorf("step %d: %s: %v", step, name, err)
			}
		}
	}
}

// TestKVCacheNoFeedBack checks that without FeedHandle the handle keeps
// its bound contents: every step then sees only its own row.
func TestKVCacheNoFeedBack(t *testing.T) {
	const maxLen, d = 4, 4
	w := kvWeights(d)
	cg, err := kiln.NewSession(kiln.CPU).Compile(kvDecoder(maxLen, d))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	for name, v := range w {
		if err := cg.SetParam(name, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"k_cache", "v_cache"} {
		if err := cg.BindHandle(name, make([]float32, maxLen*d)); err != nil {
			t.Fatal(err)
		}
	}
	for step := range maxLen {
		x := kvToken(step, d)
		pos, mask := kvStepInputs(step, maxLen)
		if _, err := cg.RunSlots(x, pos, mask, nil, nil); err != nil {
			t.Fatal(err)
		}
		// Earlier rows are zero keys and values: softmax weights them like
		// any other score (q·0 = 0), so the result is a mix of v and zeros.
		ref := &kvDirect{d: d, w: w}
		for range step {
			ref.k = append(ref.k, make([]float64, d))
			ref.v = append(ref.v, make([]float64, d))
		}
		if err := closeTo(cg.Output(0), toF32(ref.step(x)), refTol); err != nil {
			t.Errorf("step %d: %v", step, err)
		}
		c, _ := cg.ReadHandle("k_cache")
		if nonZeroRows(c, d) != 0 {
			t.Fatalf("step %d: the handle changed without FeedHandle", step)
		}
	}
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// TestHandleZeroAllocs checks that handles keep RunSlots allocation-free.
func TestHandleZeroAllocs(t *testing.T) {
	const maxLen, d = 8, 4
	cg, err := kiln.NewSession(kiln.CPU).Compile(kvDecoder(maxLen, d))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	for name, v := range kvWeights(d) {
		if err := cg.SetParam(name, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"k_cache", "v_cache"} {
		if err := cg.BindHandle(name, make([]float32, maxLen*d)); err != nil {
			t.Fatal(err)
		}
		if err := cg.FeedHandle(name, i+1); err != nil {
			t.Fatal(err)
		}
	}
	x := kvToken(0, d)
	pos, mask := kvStepInputs(0, maxLen)
	var runErr error
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := cg.RunSlots(x, pos, mask, nil, nil); err != nil {
			runErr = err
		}
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	if allocs != 0 {
		t.Errorf("RunSlots with handles allocates %v times per run", allocs)
	}
}

// TestHandleBinding checks rebinding, ReadHandle copies and clones owning
// their handles.
func TestHandleBinding(t *testing.T) {
	g := graph.New()
	s := g.Input("state", tensor.F32, 3)
	g.Output(g.Add(s, g.Input("inc", tensor.F32, 3))) // state' = state + inc
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := cg.BindHandle("state", []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := cg.FeedHandle("state", 0); err != nil {
		t.Fatal(err)
	}
	inc := []float32{10, 20, 30}
	for range 2 {
		if _, err := cg.Run(kiln.In("inc", inc)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := cg.ReadHandle("state")
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{21, 42, 63}; !equal(st, want) {
		t.Fatalf("state after two runs: %v, want %v", st, want)
	}
	st[0] = -1 // a copy: the handle is not changed
	if again, _ := cg.ReadHandle("state"); again[0] != 21 {
		t.Errorf("ReadHandle returned the handle's own memory")
	}
	// A clone starts from a copy of the handle and runs on its own.
	c, err := cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Run(kiln.In("inc", inc)); err != nil {
		t.Fatal(err)
	}
	cs, _ := c.ReadHandle("state")
	orig, _ := cg.ReadHandle("state")
	if !equal(cs, []float32{31, 62, 93}) || !equal(orig, []float32{21, 42, 63}) {
		t.Errorf("after one clone run: clone %v (want [31 62 93]), original %v (want [21 42 63])", cs, orig)
	}
	// Binding again replaces the contents.
	if err := cg.BindHandle("state", []float32{0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := cg.RunSlots(nil, inc); err != nil {
		t.Fatal(err)
	}
	if want := []float32{10, 20, 31}; !equal(cg.Output(0), want) {
		t.Errorf("after rebinding: %v, want %v", cg.Output(0), want)
	}
}

// TestHandleErrors checks every handle call's bad input.
func TestHandleErrors(t *testing.T) {
	g := kvDecoder(4, 2)
	ids := g.Input("ids", tensor.I64, 4)
	g.Output(ids)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := cg.BindHandle("k_cache", make([]float32, 8)); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		err error
		msg string
	}{
		"BindHandle unknown":        {cg.BindHandle("cache", make([]float32, 8)), `"cache"`},
		"BindHandle short":          {cg.BindHandle("v_cache", make([]float32, 7)), "8"},
		"BindHandle long":           {cg.BindHandle("v_cache", make([]float32, 9)), "8"},
		"BindHandle i64 input":      {cg.BindHandle("ids", make([]float32, 4)), "i64"},
		"FeedHandle unbound":        {cg.FeedHandle("v_cache", 2), "v_cache"},
		"FeedHandle unknown":        {cg.FeedHandle("nope", 1), "nope"},
		"FeedHandle shape mismatch": {cg.FeedHandle("k_cache", 0), "[1 2]"},
		"FeedHandle dtype mismatch": {cg.FeedHandle("k_cache", 3), "i64"},
		"FeedHandle no output":      {cg.FeedHandle("k_cache", 4), "4"},
		"FeedHandle negative":       {cg.FeedHandle("k_cache", -1), "-1"},
		"ReadHandle unbound":        {readErr(cg, "v_cache"), "v_cache"},
		"ReadHandle unknown":        {readErr(cg, "nope"), "nope"},
	}
	for name, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(c.err.Error(), c.msg) {
			t.Errorf("%s: error %q does not mention %s", name, c.err, c.msg)
		}
	}
	// The failed calls left no handle behind: v_cache must still be given.
	if _, err := cg.RunSlots(make([]float32, 2), make([]float32, 4), make([]float32, 4), nil, nil, nil); err == nil {
		t.Error("RunSlots with nil for an unbound v_cache: no error")
	}
}

func readErr(cg *kiln.CompiledGraph, name string) error {
	_, err := cg.ReadHandle(name)
	return err
}

// Data passed for an input that a handle feeds is ambiguous: it is an
// error, not silently replaced by the handle's contents.
func TestHandleBoundInputGiven(t *testing.T) {
	cg, err := kiln.NewSession(kiln.CPU).Compile(kvDecoder(4, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	for _, p := range cg.Params() {
		if err := cg.SetParam(p.Name, make([]float32, p.Shape.NumElements())); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{"k_cache", "v_cache"} {
		if err := cg.BindHandle(h, make([]float32, 8)); err != nil {
			t.Fatal(err)
		}
	}
	x, pos, mask := make([]float32, 2), make([]float32, 4), make([]float32, 4)
	if _, err := cg.RunSlots(x, pos, mask, make([]float32, 8), nil); err == nil || !strings.Contains(err.Error(), "k_cache") {
		t.Errorf("RunSlots with data for a handle-bound input: err = %v", err)
	}
	_, err = cg.Run(kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask), kiln.In("v_cache", make([]float32, 8)))
	if err == nil || !strings.Contains(err.Error(), "v_cache") {
		t.Errorf("Run with data for a handle-bound input: err = %v", err)
	}
	if _, err := cg.RunSlots(x, pos, mask, nil, nil); err != nil {
		t.Errorf("RunSlots with nil for both handles: %v", err)
	}
}
