package kiln_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// TestGPUHandleKVDecode decodes kvDecoder with the caches as GPU handles
// fed from the updated-cache outputs (on the CPU: host handles) and
// checks every step and both caches against kvDirect, the float64
// reference, alternating RunSlots and Run.
//
// Compiled with Options.Feeds naming the caches, the plan updates each
// cache in its own bytes, where the handle lives: plan.Residence says in
// place (a GPU handle's feed then costs no copy), and the results are the
// same.
func TestGPUHandleKVDecode(t *testing.T) {
	for _, feeds := range [][]string{nil, {"k_cache", "v_cache"}} {
		t.Run(fmt.Sprintf("feeds=%v", feeds), func(t *testing.T) { kvDecodeGPUHandles(t, feeds) })
	}
}

func kvDecodeGPUHandles(t *testing.T, feeds []string) {
	const maxLen, d = 5, 4
	w := kvWeights(d)
	cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Feeds: feeds}).Compile(kvDecoder(maxLen, d))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if feeds != nil {
		g := cg.Graph()
		for i, name := range feeds {
			in := g.Inputs()[slices.IndexFunc(g.Inputs(), func(n *graph.Node) bool { return n.Name == name })]
			if r := cg.Plan().Residence(in, g.Outputs()[i+1]); r != plan.InPlace {
				t.Errorf("%s with Options.Feeds: %v, want in place", name, r)
			}
		}
	}
	for name, v := range w {
		if err := cg.SetParam(name, v); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"k_cache", "v_cache"} {
		if cg.HasGPUHandle(name) {
			t.Errorf("HasGPUHandle(%q) before binding", name)
		}
		if err := cg.BindGPUHandle(name, make([]float32, maxLen*d)); err != nil {
			t.Fatal(err)
		}
		if err := cg.SetGPUHandleFeed(name, i+1); err != nil {
			t.Fatal(err)
		}
		if !cg.HasGPUHandle(name) {
			t.Errorf("HasGPUHandle(%q) after binding is false", name)
		}
	}
	for _, name := range []string{"x", "pos", "nope", ""} {
		if cg.HasGPUHandle(name) {
			t.Errorf("HasGPUHandle(%q) is true", name)
		}
	}
	ref := &kvDirect{d: d, w: w}
	for step := range maxLen {
		x := kvToken(step, d)
		pos, mask := kvStepInputs(step, maxLen)
		want := toF32(ref.step(x))
		var got []float32
		if step%2 == 0 {
			if _, err := cg.RunSlots(x, pos, mask, nil, nil); err != nil {
				t.Fatal(err)
			}
			got = cg.Output(0)
		} else {
			outs, err := cg.Run(kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask))
			if err != nil {
				t.Fatal(err)
			}
			got = outs[0]
		}
		if err := closeTo(got, want, 1e-5); err != nil {
			t.Errorf("step %d: %v", step, err)
		}
	}
	for name, rows := range map[string][][]float64{"k_cache": ref.k, "v_cache": ref.v} {
		var want []float64
		for _, r := range rows {
			want = append(want, r...)
		}
		got, err := cg.ReadGPUHandle(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := closeTo(got, toF32(want), 1e-6); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		host, err := cg.ReadHandle(name)
		if err != nil || !slices.Equal(host, got) {
			t.Errorf("ReadHandle(%q) = %v, %v; ReadGPUHandle gave %v", name, host, err, got)
		}
	}
	if tr := cg.Transfers(); tr != (kiln.Transfers{}) {
		t.Errorf("a CPU graph reports transfers %+v", tr)
	}
	x := kvToken(0, d)
	pos, mask := kvStepInputs(0, maxLen)
	if n := testing.AllocsPerRun(10, func() { _, _ = cg.RunSlots(x, pos, mask, nil, nil) }); n != 0 {
		t.Errorf("RunSlots with GPU handles allocates %v times per run", n)
	}
}

// stateGraph is state' = state + inc (output 0) and 2·state (output 1),
// in dtype dt.
func stateGraph(dt tensor.DType) *graph.Graph {
	g := graph.New()
	s := g.Input("state", dt, 4)
	inc := g.Input("inc", dt, 4)
	g.OutputNamed("next", g.Add(s, inc))
	g.OutputNamed("twice", g.Add(s, s))
	return g
}

func compileCPU(t *testing.T, g *graph.Graph) *kiln.CompiledGraph {
	t.Helper()
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	return cg
}

func readState(t *testing.T, cg *kiln.CompiledGraph) []float32 {
	t.Helper()
	v, err := cg.ReadGPUHandle("state")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRunFeedGPUHandle: RunFeedGPUHandle refreshes the handle from the
// output it names for that run only and returns that output; a standing
// feed (SetGPUHandleFeed) refreshes after every run; clones own theirs.
func TestRunFeedGPUHandle(t *testing.T) {
	cg := compileCPU(t, stateGraph(tensor.F32))
	if err := cg.BindGPUHandle("state", []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	inc := []kiln.Input{kiln.In("inc", []float32{10, 20, 30, 40})}
	got, err := cg.RunFeedGPUHandle(inc, "state", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{11, 22, 33, 44}; !slices.Equal(got, want) || !slices.Equal(readState(t, cg), want) {
		t.Fatalf("RunFeedGPUHandle returned %v, handle %v; want both %v", got, readState(t, cg), want)
	}
	// Not fed: a plain run leaves the handle as it was.
	outs, err := cg.Run(inc...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(outs[0], []float32{21, 42, 63, 84}) || !slices.Equal(readState(t, cg), []float32{11, 22, 33, 44}) {
		t.Fatalf("plain run: output %v, handle %v", outs[0], readState(t, cg))
	}
	// The other output, once, over a standing feed from output 0: the
	// feed copies first, then the one-off refresh wins.
	if err := cg.SetGPUHandleFeed("state", 0); err != nil {
		t.Fatal(err)
	}
	got, err = cg.RunFeedGPUHandle(inc, "state", 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{22, 44, 66, 88}; !slices.Equal(got, want) || !slices.Equal(readState(t, cg), want) {
		t.Fatalf("RunFeedGPUHandle(output 1): returned %v, handle %v; want both %v", got, readState(t, cg), want)
	}
	c, err := cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Run(inc...); err != nil { // the feed came along
		t.Fatal(err)
	}
	if cs := readState(t, c); !slices.Equal(cs, []float32{32, 64, 96, 128}) || !slices.Equal(readState(t, cg), []float32{22, 44, 66, 88}) {
		t.Errorf("clone's handle %v (want [32 64 96 128]), original's %v (want [22 44 66 88])", cs, readState(t, cg))
	}
	if !c.HasGPUHandle("state") {
		t.Error("the clone lost HasGPUHandle")
	}
}

// TestGPUHandleTyped: F16 and BF16 handles are bound from their own
// bytes, fed in their dtype, and read back as bytes and as float32. The
// values are exact in both formats, so the checks are exact.
func TestGPUHandleTyped(t *testing.T) {
	for _, c := range []struct {
		dt   tensor.DType
		conv func(float32) uint16
	}{{tensor.F16, tensor.F32ToF16}, {tensor.BF16, tensor.F32ToBF16}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			half := func(v ...float32) []byte {
				h := make([]uint16, len(v))
				for i, x := range v {
					h[i] = c.conv(x)
				}
				return tensor.Bytes(h)
			}
			cg := compileCPU(t, stateGraph(c.dt))
			if err := cg.BindGPUHandleTyped("state", half(0.5, 1, -1.5, 2), c.dt); err != nil {
				t.Fatal(err)
			}
			if err := cg.SetGPUHandleFeed("state", 0); err != nil {
				t.Fatal(err)
			}
			inc := kiln.TypedInput{Name: "inc", Data: half(0.25, -0.5, 1, 4), DType: c.dt}
			for range 3 {
				if _, err := cg.RunTyped(inc); err != nil {
					t.Fatal(err)
				}
			}
			v, err := cg.ReadGPUHandleTyped("state")
			if err != nil {
				t.Fatal(err)
			}
			if want := half(1.25, -0.5, 1.5, 14); v.DType != c.dt || !slices.Equal(v.Shape, tensor.Shape{4}) || !slices.Equal(v.Data, want) {
				t.Errorf("ReadGPUHandleTyped = %v%v % x, want %v[4] % x", v.DType, v.Shape, v.Data, c.dt, want)
			}
			if f := readState(t, cg); !slices.Equal(f, []float32{1.25, -0.5, 1.5, 14}) {
				t.Errorf("ReadGPUHandle = %v", f)
			}
			// float32 data is narrowed to the handle's dtype.
			if err := cg.BindGPUHandle("state", []float32{3, 0.125, -8, 0}); err != nil {
				t.Fatal(err)
			}
			out, err := cg.RunFeedGPUHandleTyped([]kiln.TypedInput{inc}, "state", 1)
			if err != nil {
				t.Fatal(err)
			}
			if want := half(6, 0.25, -16, 0); out.DType != c.dt || !slices.Equal(out.Data, want) {
				t.Errorf("RunFeedGPUHandleTyped = %v % x, want % x", out.DType, out.Data, want)
			}
		})
	}
}

// TestGPUHandleMoves: BindGPUHandle on a host handle makes it a GPU
// handle with its feed; BindHandle on a GPU handle replaces its value.
func TestGPUHandleMoves(t *testing.T) {
	cg := compileCPU(t, stateGraph(tensor.F32))
	inc := kiln.In("inc", []float32{1, 1, 1, 1})
	if err := cg.BindHandle("state", []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := cg.FeedHandle("state", 0); err != nil {
		t.Fatal(err)
	}
	if cg.HasGPUHandle("state") {
		t.Error("a host handle counts as a GPU handle")
	}
	if err := cg.BindGPUHandle("state", []float32{5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	if !cg.HasGPUHandle("state") {
		t.Error("BindGPUHandle over a host handle: HasGPUHandle false")
	}
	if _, err := cg.Run(inc); err != nil {
		t.Fatal(err)
	}
	if got := readState(t, cg); !slices.Equal(got, []float32{6, 7, 8, 9}) {
		t.Errorf("after a fed run: %v, want [6 7 8 9]", got)
	}
	if err := cg.BindHandle("state", []float32{0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := cg.Run(inc); err != nil {
		t.Fatal(err)
	}
	if got := readState(t, cg); !slices.Equal(got, []float32{1, 1, 1, 1}) || !cg.HasGPUHandle("state") {
		t.Errorf("after BindHandle and a run: %v (GPU handle %v), want [1 1 1 1] (true)", got, cg.HasGPUHandle("state"))
	}
}

// TestGPUHandleErrors: every GPU-handle call's bad input is an error
// naming what is wrong, and a failed bind leaves no handle behind.
func TestGPUHandleErrors(t *testing.T) {
	g := stateGraph(tensor.F32)
	g.Output(g.Input("ids", tensor.I64, 4))
	cg := compileCPU(t, g)
	if err := cg.BindGPUHandle("state", make([]float32, 4)); err != nil {
		t.Fatal(err)
	}
	inc := []kiln.Input{kiln.In("inc", make([]float32, 4))}
	cases := map[string]struct {
		err error
		msg string
	}{
		"Bind unknown":          {cg.BindGPUHandle("nope", make([]float32, 4)), `"nope"`},
		"Bind short":            {cg.BindGPUHandle("inc", make([]float32, 3)), "3"},
		"Bind invalid dtype":    {cg.BindGPUHandleTyped("inc", make([]byte, 16), tensor.Invalid), "inc"},
		"Bind odd bytes":        {cg.BindGPUHandleTyped("inc", make([]byte, 15), tensor.F32), "15"},
		"Feed unbound":          {cg.SetGPUHandleFeed("inc", 0), "inc"},
		"Feed no output":        {cg.SetGPUHandleFeed("state", 3), "3"},
		"Feed dtype mismatch":   {cg.SetGPUHandleFeed("state", 2), "i64"},
		"Read unbound":          {readGPU(cg, "inc"), "inc"},
		"Read typed unknown":    {readGPUTyped(cg, "nope"), "nope"},
		"RunFeed unbound":       {runFeed(cg, inc, "inc", 0), "inc"},
		"RunFeed bad output":    {runFeed(cg, inc, "state", -1), "-1"},
		"RunFeed wrong dtype":   {runFeed(cg, inc, "state", 2), "i64"},
		"RunFeed missing input": {runFeed(cg, nil, "state", 0), "inc"},
		"RunFeed handle given":  {runFeed(cg, append(inc, kiln.In("state", make([]float32, 4))), "state", 0), "state"},
	}
	for name, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(c.err.Error(), c.msg) {
			t.Errorf("%s: error %q does not mention %s", name, c.err, c.msg)
		}
	}
	if cg.HasGPUHandle("inc") {
		t.Error("a failed bind left a handle on inc")
	}
}

func readGPU(cg *kiln.CompiledGraph, name string) error {
	_, err := cg.ReadGPUHandle(name)
	return err
}

func readGPUTyped(cg *kiln.CompiledGraph, name string) error {
	_, err := cg.ReadGPUHandleTyped(name)
	return err
}

func runFeed(cg *kiln.CompiledGraph, in []kiln.Input, name string, out int) error {
	_, err := cg.RunFeedGPUHandle(in, name, out)
	return err
}

// TestGPUHandleGuards: while another call holds the graph every GPU-handle
// call is refused with ErrConcurrentUse (HasGPUHandle says false), and
// after Close every one fails.
func TestGPUHandleGuards(t *testing.T) {
	cg := compileCPU(t, stateGraph(tensor.F32))
	if err := cg.BindGPUHandle("state", make([]float32, 4)); err != nil {
		t.Fatal(err)
	}
	inc := []kiln.Input{kiln.In("inc", make([]float32, 4))}
	calls := map[string]func() error{
		"BindGPUHandle":      func() error { return cg.BindGPUHandle("state", make([]float32, 4)) },
		"BindGPUHandleTyped": func() error { return cg.BindGPUHandleTyped("state", make([]byte, 16), tensor.F32) },
		"SetGPUHandleFeed":   func() error { return cg.SetGPUHandleFeed("state", 0) },
		"ReadGPUHandle":      func() error { return readGPU(cg, "state") },
		"ReadGPUHandleTyped": func() error { return readGPUTyped(cg, "state") },
		"RunFeedGPUHandle":   func() error { return runFeed(cg, inc, "state", 0) },
		"RunFeedGPUHandleTyped": func() error {
			_, err := cg.RunFeedGPUHandleTyped([]kiln.TypedInput{{Name: "inc", Data: make([]byte, 16), DType: tensor.F32}}, "state", 0)
			return err
		},
	}
	release, err := kiln.HoldForTest(cg)
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, kiln.ErrConcurrentUse) {
			t.Errorf("%s while held: %v, want ErrConcurrentUse", name, err)
		}
	}
	if cg.HasGPUHandle("state") {
		t.Error("HasGPUHandle while held: true")
	}
	release()
	if !cg.HasGPUHandle("state") {
		t.Fatal("HasGPUHandle after release: false")
	}
	for name, call := range calls {
		if err := call(); err != nil {
			t.Errorf("%s after release: %v", name, err)
		}
	}
	cg.Close()
	for name, call := range calls {
		if err := call(); err == nil {
			t.Errorf("%s after Close: no error", name)
		}
	}
	if cg.HasGPUHandle("state") {
		t.Error("HasGPUHandle after Close: true")
	}
}

// TestFeedsOption: inputs listed in Options.Feeds may be overwritten
// during a run, which is invisible to callers that write them before
// every run (Run's inputs here, with no handle bound); an unknown name
// fails Compile.
func TestFeedsOption(t *testing.T) {
	const maxLen, d = 4, 4
	w := kvWeights(d)
	var outs [2][][]float32
	for i, feeds := range [][]string{nil, {"k_cache", "v_cache"}} {
		cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Feeds: feeds}).Compile(kvDecoder(maxLen, d))
		if err != nil {
			t.Fatal(err)
		}
		defer cg.Close()
		for name, v := range w {
			if err := cg.SetParam(name, v); err != nil {
				t.Fatal(err)
			}
		}
		k, v := make([]float32, maxLen*d), make([]float32, maxLen*d)
		kPrev, vPrev := slices.Clone(k), slices.Clone(v)
		for step := range maxLen {
			pos, mask := kvStepInputs(step, maxLen)
			var o [][]float32
			if step%2 == 0 {
				if o, err = cg.Run(kiln.In("x", kvToken(step, d)), kiln.In("pos", pos), kiln.In("mask", mask), kiln.In("k_cache", k), kiln.In("v_cache", v)); err != nil {
					t.Fatal(err)
				}
			} else { // RunSlots reads the caller's caches where they lie
				if _, err := cg.RunSlots(kvToken(step, d), pos, mask, k, v); err != nil {
					t.Fatal(err)
				}
				o = [][]float32{slices.Clone(cg.Output(0)), slices.Clone(cg.Output(1)), slices.Clone(cg.Output(2))}
			}
			if i == 1 && step%2 == 1 && (!slices.Equal(k, kPrev) || !slices.Equal(v, vPrev)) {
				t.Errorf("step %d: RunSlots changed the caller's caches", step)
			}
			k, v = o[1], o[2]
			kPrev, vPrev = slices.Clone(k), slices.Clone(v)
			outs[i] = append(outs[i], o[0])
		}
	}
	for step := range outs[0] {
		if !slices.Equal(outs[0][step], outs[1][step]) {
			t.Errorf("step %d: with Feeds %v, without %v", step, outs[1][step], outs[0][step])
		}
	}
	_, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Feeds: []string{"kcache"}}).Compile(kvDecoder(maxLen, d))
	if err == nil || !strings.Contains(err.Error(), `"kcache"`) {
		t.Errorf("Feeds naming no input: %v", err)
	}
}
