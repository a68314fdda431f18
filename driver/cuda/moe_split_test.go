//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// emuKind is the device kind the tests register for a backend on the
// emulated driver, so kiln's whole API runs a CUDA program on it.
const emuKind = "cuda-emu"

var (
	emuKindOnce sync.Once
	emuCur      *Device
)

// emuSession is a kiln session on the emulated driver (emuDevice's state
// reset); cuBLAS is off, as the emulator runs PTX only.
func emuSession(t *testing.T) (*kiln.Session, *emuDriver) {
	t.Helper()
	t.Setenv("KILN_CUBLAS", "off")
	d, e := emuDevice(t)
	emuCur = d
	emuKindOnce.Do(func() {
		exec.RegisterBackend(emuKind, func(int) (exec.Backend, error) { return &backend{d: emuCur}, nil })
	})
	return kiln.NewSession(kiln.Device{Kind: emuKind}), e
}

// moeSplitModel is two SwiGLU MoE layers (graph.MoE: router, softmax,
// top-k, renormalised) over E experts, the second reading the first's
// output, with random feeds.
func moeSplitModel(t *testing.T, tokens int) (*graph.Graph, map[string]tensor.Tensor) {
	t.Helper()
	const h, f, e, k = 16, 24, 4, 2
	g := graph.New()
	x := g.Input("x", tensor.F32, tokens, h)
	p := func(name string, dims ...int) *graph.Node { return g.Param(name, tensor.F32, dims...) }
	y := x
	for i := range 2 {
		s := fmt.Sprint(i)
		y = g.MoE(y, graph.MoESpec{Router: p("router"+s, h, e), Gate: p("gate"+s, e, h, f), Up: p("up"+s, e, h, f),
			Down: p("down"+s, e, f, h), K: k, Renormalize: true})
	}
	g.OutputNamed("y", y)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	feeds, err := testmodels.RandomFeeds(g, 26)
	if err != nil {
		t.Fatal(err)
	}
	return g, feeds
}

// compileFeeds compiles g on s and sets its params from feeds.
func compileFeeds(t *testing.T, s *kiln.Session, g *graph.Graph, feeds map[string]tensor.Tensor) *kiln.CompiledGraph {
	t.Helper()
	cg, err := s.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	for _, p := range cg.Params() {
		if err := cg.SetParamTyped(p.Name, feeds[p.Name].Data, tensor.F32); err != nil {
			t.Fatal(err)
		}
	}
	return cg
}

// runF32 runs cg on x and returns its one output.
func runF32(t *testing.T, cg *kiln.CompiledGraph, x tensor.Tensor) []float32 {
	t.Helper()
	out, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: x.Data, DType: tensor.F32})
	if err != nil {
		t.Fatal(err)
	}
	return tensor.Elems[float32](out[0].Data)
}

// TestEmuDriverMoE runs an MoE model as the backend builds it, on the
// emulated driver, against the CPU: the harness the split's tests stand
// on.
func TestEmuDriverMoE(t *testing.T) {
	g, feeds := moeSplitModel(t, 6)
	cpu := compileFeeds(t, kiln.NewSession(kiln.CPU), g, feeds)
	s, e := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	want, got := runF32(t, cpu, feeds["x"]), runF32(t, gpu, feeds["x"])
	approx.Slices(t, "emulated CUDA vs CPU", got, want, 1e-4, 1e-5)
	if e.launchN == 0 || e.err != nil {
		t.Errorf("%d launches, error %v", e.launchN, e.err)
	}
}

// emuProgram is cg's CUDA program on the emulated driver.
func emuProgram(t *testing.T, cg *kiln.CompiledGraph) *program {
	t.Helper()
	x, err := cg.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := x.(*program)
	if !ok {
		t.Fatalf("the executable is a %T, not a CUDA program", x)
	}
	return pr
}

// expertBytes is what the masks should leave of the layers' expert
// weights in device memory: per layer, its resident experts' rows of
// gate, up and down (all of them without a mask).
func expertBytes(pr *program, masks [][]bool) int {
	n := 0
	for i, l := range pr.sh.lw.moe {
		full := 0
		for _, w := range l.experts {
			full += pr.sh.p.Slots[w.ID].Bytes
		}
		e := l.node.Inputs[moeFirstExpert].Shape[0]
		res := e
		if masks != nil && masks[i] != nil {
			res = 0
			for _, r := range masks[i] {
				if r {
					res++
				}
			}
		}
		n += full / e * res
	}
	return n
}

// TestMoESplitEmu runs a two-layer MoE model on the emulated driver under
// a sequence of residency masks (all resident, none, mixed per layer,
// changed between runs, cleared), each against the CPU program with the
// same masks: the outputs, the top-k capture and the residency stats
// agree, a split layer's step is the split variant, and device memory
// holds exactly the resident experts' weight bytes (the expert params
// are never in the weight region; the full copies exist only while a
// layer runs all-resident).
func TestMoESplitEmu(t *testing.T) {
	g, feeds := moeSplitModel(t, 6)
	cpu := compileFeeds(t, kiln.NewSession(kiln.CPU), g, feeds)
	s, e := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	pr := emuProgram(t, gpu)
	if len(pr.moe) != 2 || pr.moe[0].s == nil || pr.moe[1].s == nil {
		t.Fatalf("%d MoE layers, want 2 that can split (why not: %q, %q)", len(pr.moe), pr.sh.lw.moe[0].why, pr.sh.lw.moe[1].why)
	}
	all := expertBytes(pr, nil)
	if pr.sh.weights.Bytes > pr.sh.p.WeightBytes-all {
		t.Errorf("weight region of %d bytes holds expert weights (plan %d, experts %d)", pr.sh.weights.Bytes, pr.sh.p.WeightBytes, all)
	}
	base := e.liveBytes() // weights, arena: nothing of the experts before a run
	for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
		if err := cg.EnableMoETopKCapture(4); err != nil {
			t.Fatal(err)
		}
	}
	T, F := true, false
	for _, c := range []struct {
		name  string
		masks [][]bool
	}{
		{"all resident", nil},
		{"none resident", [][]bool{{F, F, F, F}, {F, F, F, F}}},
		{"mixed per layer", [][]bool{{T, F, T, F}, {F, F, T, T}}},
		{"changed", [][]bool{{F, T, T, T}, nil}},
		{"one expert", [][]bool{{F, F, F, T}, {T, F, F, F}}},
		{"cleared", nil},
	} {
		for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
			masks := c.masks
			if masks == nil {
				masks = [][]bool{nil, nil}
			}
			if err := cg.SetMoEResidentExpertsPerLayer(masks); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		want, got := runF32(t, cpu, feeds["x"]), runF32(t, gpu, feeds["x"])
		approx.Slices(t, c.name, got, want, 1e-4, 1e-5)
		if e.err != nil {
			t.Fatalf("%s: the emulated driver failed: %v", c.name, e.err)
		}
		// Device memory: the resident experts' bytes, the ids kept per
		// layer, and per split layer its remap, zero and addend buffers.
		extra := 0
		for i, m := range pr.moe {
			extra += m.idBytes
			if m.host != nil { // split once: zero and addend stay
				extra += 2 * pr.sh.p.Slots[m.l.node.ID].Bytes
			}
			if c.masks != nil && c.masks[i] != nil {
				extra += 4 * len(c.masks[i])
				if !m.split || m.nres != countTrue(c.masks[i]) {
					t.Errorf("%s: layer %d split %v over %d experts", c.name, i, m.split, m.nres)
				}
				if v := pr.steps[m.l.step].variant; v != "split" {
					t.Errorf("%s: layer %d's step variant %q, want split", c.name, i, v)
				}
			}
		}
		if live, want := e.liveBytes()-base, expertBytes(pr, c.masks)+extra; live != want {
			t.Errorf("%s: %d bytes of device memory past the weights and arena, want %d (experts %d)", c.name, live, want, expertBytes(pr, c.masks))
		}
		if got, want := pr.moeDeviceBytes(), expertBytes(pr, c.masks); got != want {
			t.Errorf("%s: moeDeviceBytes %d, want %d", c.name, got, want)
		}
		cs, err := cpu.TakeMoEResidencyStats()
		if err != nil {
			t.Fatal(err)
		}
		gs, err := gpu.TakeMoEResidencyStats()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gs, cs) {
			t.Errorf("%s: stats on CUDA %+v, on the CPU %+v", c.name, gs, cs)
		}
		cc, err := cpu.TakeMoETopKCapture()
		if err != nil {
			t.Fatal(err)
		}
		gc, err := gpu.TakeMoETopKCapture()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gc, cc) {
			t.Errorf("%s: capture on CUDA %v, on the CPU %v", c.name, gc, cc)
		}
	}
}

func countTrue(mask []bool) int {
	n := 0
	for _, r := range mask {
		if r {
			n++
		}
	}
	return n
}

// TestMoESplitTooBig: on a device too small for every expert (the
// emulated driver refuses allocations past a limit), a model whose masks
// keep half the experts on the host runs and matches the CPU; asking for
// every expert resident fails at the run, naming the layer, and setting
// a mask again recovers.
func TestMoESplitTooBig(t *testing.T) {
	g, feeds := moeSplitModel(t, 5)
	cpu := compileFeeds(t, kiln.NewSession(kiln.CPU), g, feeds)
	s, e := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	pr := emuProgram(t, gpu)
	T, F := true, false
	half := [][]bool{{T, F, T, F}, {F, T, F, T}}
	for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
		if err := cg.SetMoEResidentExpertsPerLayer(half); err != nil {
			t.Fatal(err)
		}
	}
	// Room for half the experts and the split's small buffers, not for
	// all of them.
	small := 0
	for _, m := range pr.moe {
		small += m.idBytes + 2*pr.sh.p.Slots[m.l.node.ID].Bytes + 16
	}
	e.limit = e.liveBytes() + expertBytes(pr, half) + small
	if expertBytes(pr, nil) <= expertBytes(pr, half)+small {
		t.Fatal("test sizes: every expert would fit")
	}
	want, got := runF32(t, cpu, feeds["x"]), runF32(t, gpu, feeds["x"])
	approx.Slices(t, "half resident on a small device", got, want, 1e-4, 1e-5)
	// The masks came before the first run: no expert weight was ever
	// allocated whole (a compact one is half the size).
	for _, l := range pr.sh.lw.moe {
		for _, w := range l.experts {
			if full := pr.sh.p.Slots[w.ID].Bytes; slices.Contains(e.allocs, full) {
				t.Errorf("an allocation of %d bytes, %s's full size: %v", full, w, e.allocs)
			}
		}
	}
	if err := gpu.SetMoEResidentExperts(nil); err != nil {
		t.Fatal(err)
	}
	_, err := gpu.RunTyped(kiln.TypedInput{Name: "x", Data: feeds["x"].Data, DType: tensor.F32})
	if err == nil || !strings.Contains(err.Error(), "MoE layer") {
		t.Errorf("every expert resident on a small device: error %v, want one naming the MoE layer", err)
	}
	if err := gpu.SetMoEResidentExpertsPerLayer(half); err != nil {
		t.Fatal(err)
	}
	approx.Slices(t, "half resident again", runF32(t, gpu, feeds["x"]), want, 1e-4, 1e-5)
}

// TestMoESplitCloneAndCapture: a clone keeps its original's masks (its
// own compact weights), clones running all-resident share one full copy
// of the experts, and graph capture refuses a program with a split
// layer, naming it.
func TestMoESplitCloneAndCapture(t *testing.T) {
	g, feeds := moeSplitModel(t, 4)
	cpu := compileFeeds(t, kiln.NewSession(kiln.CPU), g, feeds)
	s, e := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	want := runF32(t, cpu, feeds["x"])
	runF32(t, gpu, feeds["x"])
	c, err := gpu.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := e.liveBytes()
	approx.Slices(t, "all-resident clone", runF32(t, c, feeds["x"]), want, 1e-4, 1e-5)
	cpr := emuProgram(t, c)
	for i, m := range cpr.moe {
		if !m.onFull || m.s.users != 2 {
			t.Errorf("layer %d: the clone on full weights %v, %d users, want shared by 2", i, m.onFull, m.s.users)
		}
		before += m.idBytes // the clone's kept ids
	}
	if after := e.liveBytes(); after != before {
		t.Errorf("the clone's first run allocated %d bytes besides its ids, want 0 (experts shared)", after-before)
	}
	masks := [][]bool{{false, true, false, false}, nil}
	for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
		if err := cg.SetMoEResidentExpertsPerLayer(masks); err != nil {
			t.Fatal(err)
		}
	}
	want = runF32(t, cpu, feeds["x"])
	c2, err := gpu.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	approx.Slices(t, "split clone", runF32(t, c2, feeds["x"]), want, 1e-4, 1e-5)
	c2pr := emuProgram(t, c2)
	if !c2pr.moe[0].split || c2pr.moe[0].nres != 1 || c2pr.moe[1].split {
		t.Errorf("the clone's layers: split %v over %d, then %v; want the original's masks", c2pr.moe[0].split, c2pr.moe[0].nres, c2pr.moe[1].split)
	}
	_, _, err = capture(emuProgram(t, gpu))
	if err == nil || !strings.Contains(err.Error(), "MoE layer 0") || !strings.Contains(err.Error(), "graph") {
		t.Errorf("capturing a split program: %v, want a refusal naming MoE layer 0", err)
	}
}

// TestMoESplitRefused: a layer whose expert weight another node reads
// too cannot split; a mask keeping one of its experts off the device is
// an error naming the layer and the reason (nothing changes), an
// all-resident mask is accepted, and its stats still match the CPU's.
func TestMoESplitRefused(t *testing.T) {
	const h, f, ne, k = 8, 12, 4, 2
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, h)
	gate := g.Param("gate", tensor.F32, ne, h, f)
	g.OutputNamed("y", g.MoE(x, graph.MoESpec{Router: g.Param("router", tensor.F32, h, ne), Gate: gate,
		Up: g.Param("up", tensor.F32, ne, h, f), Down: g.Param("down", tensor.F32, ne, f, h), K: k}))
	g.OutputNamed("g", g.Neg(gate))
	feeds, err := testmodels.RandomFeeds(g, 7)
	if err != nil {
		t.Fatal(err)
	}
	cpu := compileFeeds(t, kiln.NewSession(kiln.CPU), g, feeds)
	s, _ := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	err = gpu.SetMoEResidentExperts([]bool{true, false, true, true})
	if err == nil || !strings.Contains(err.Error(), "MoE layer 0") || !strings.Contains(err.Error(), "read by other nodes") {
		t.Errorf("masking a layer that cannot split: %v", err)
	}
	wantErrSub(t, "short mask", gpu.SetMoEResidentExperts([]bool{true}), "mask of 1 entries")
	wantErrSub(t, "mask count", gpu.SetMoEResidentExpertsPerLayer(nil), "0 masks for 1 MoE layers")
	_, err = gpu.TakeMoEResidencyStats()
	wantErrSub(t, "stats before a run", err, "no forward ran")
	_, err = gpu.TakeMoETopKCapture()
	wantErrSub(t, "capture off", err, "capture is off")
	wantErrSub(t, "capture of 8 experts", gpu.EnableMoETopKCapture(8), "MoE layer 0")
	for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
		if err := cg.SetMoEResidentExperts([]bool{true, true, true, true}); err != nil {
			t.Fatal(err)
		}
		if _, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: feeds["x"].Data, DType: tensor.F32}); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := cpu.TakeMoEResidencyStats()
	if err != nil {
		t.Fatal(err)
	}
	gs, err := gpu.TakeMoEResidencyStats()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gs, cs) || gs.Layers[0].Resident != 3*k {
		t.Errorf("stats on CUDA %+v, on the CPU %+v", gs, cs)
	}
}

// TestMoESplitStepTimes: with step timing on (events between steps, the
// timed run path), a split layer's forward still matches the CPU and is
// one step of the split variant.
func TestMoESplitStepTimes(t *testing.T) {
	g, feeds := moeSplitModel(t, 5)
	cpu := compileFeeds(t, kiln.NewSession(kiln.CPU), g, feeds)
	s, _ := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	masks := [][]bool{{false, true, true, false}, {true, true, true, false}}
	for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
		if err := cg.SetMoEResidentExpertsPerLayer(masks); err != nil {
			t.Fatal(err)
		}
	}
	pr := emuProgram(t, gpu)
	d := make([]time.Duration, len(pr.steps))
	if err := pr.SetStepTimes(d); err != nil {
		t.Fatal(err)
	}
	approx.Slices(t, "split, timed", runF32(t, gpu, feeds["x"]), runF32(t, cpu, feeds["x"]), 1e-4, 1e-5)
	n := 0
	for _, si := range pr.StepInfo() {
		if si.Node.Op == graph.OpMoE && si.Variant == "split" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d split MoE steps in StepInfo, want 2", n)
	}
}

func wantErrSub(t *testing.T, what string, err error, sub string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: error %v, want one containing %q", what, err, sub)
	}
}

// TestMoESplitOrder checks what a forward queues, in the emulated
// driver's trace: without a mask, no readback or wait before the last
// launch (the path of old, plus one ids copy per layer); with layer 0
// split, its inputs are read back (tokens, ids, routing weights) after a
// wait, then the resident experts' kernel is queued before the host
// computes, then the host's sum is uploaded and added; layer 1 stays
// whole.
func TestMoESplitOrder(t *testing.T) {
	g, feeds := moeSplitModel(t, 4)
	s, e := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	pr := emuProgram(t, gpu)
	l0, l1 := pr.sh.lw.moe[0], pr.sh.lw.moe[1]
	k0, k1 := pr.sh.lw.steps[l0.step].kernel.Name, pr.sh.lw.steps[l1.step].kernel.Name
	forward := func() []string {
		runF32(t, gpu, feeds["x"]) // places, if the masks changed
		e.trace = nil
		runF32(t, gpu, feeds["x"])
		return e.trace
	}
	tr := forward()
	first := slices.IndexFunc(tr, func(s string) bool { return s == "DtoH" || s == "sync" })
	if i := slices.Index(tr, k1); i < 0 || slices.Index(tr, k0) < 0 || (first >= 0 && first < i) {
		t.Errorf("all resident: a readback or wait before the last MoE launch: %v", tr)
	}
	for _, k := range []string{k0, k1} {
		if i := slices.Index(tr, k); i < 0 || i+1 >= len(tr) || tr[i+1] != "DtoD" {
			t.Errorf("all resident: %s is not followed by its ids' copy: %v", k, tr)
		}
	}
	if err := gpu.SetMoEResidentExpertsPerLayer([][]bool{{true, false, false, true}, nil}); err != nil {
		t.Fatal(err)
	}
	tr = forward()
	i := slices.Index(tr, l0.split.Name)
	want := []string{"DtoH", "DtoH", "DtoH", "sync", l0.split.Name, "HtoD", l0.add.Name, "DtoD"}
	if i < 4 || !slices.Equal(tr[i-4:min(i+4, len(tr))], want) {
		t.Errorf("split layer 0: trace %v, want the sequence %v", tr, want)
	}
	if slices.Contains(tr, k0) || slices.Contains(tr, l1.split.Name) || !slices.Contains(tr, k1) {
		t.Errorf("split layer 0, whole layer 1: trace %v", tr)
	}
}
