package kiln_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// moeX is the input of the two-layer test model: 4 tokens over 4 experts.
// The routers are ±identity, so layer 0 routes each token to its two
// largest entries and layer 1 to its two smallest, best first:
//
//	token  x                      layer 0   layer 1
//	0      0.1  0.9  0.5 -0.3     1 2       3 0
//	1      2.0 -1.0  0.3  1.5     0 3       1 2
//	2     -0.5 -0.2 -0.9  0.0     3 1       2 0
//	3      0.7  0.6  0.1  0.8     3 0       2 1
var moeX = []float32{0.1, 0.9, 0.5, -0.3, 2.0, -1.0, 0.3, 1.5, -0.5, -0.2, -0.9, 0.0, 0.7, 0.6, 0.1, 0.8}

var (
	moeWant0 = []uint32{1, 2, 0, 3, 3, 1, 3, 0}
	moeWant1 = []uint32{3, 0, 1, 2, 2, 0, 2, 1}
	// Pairs per expert: layer 0 {0: 2, 1: 2, 2: 1, 3: 3}, layer 1 {0: 2, 1: 2, 2: 3, 3: 1}.
	moeCount0 = []int{2, 2, 1, 3}
	moeCount1 = []int{2, 2, 3, 1}
)

// moeModel is two MoE layers in sequence (layer 1's experts read layer
// 0's output, so it runs second; its router reads x).
func moeModel(t *testing.T) *kiln.CompiledGraph { return moeModelTokens(t, 4) }

// moeModelTokens is moeModel over tok tokens.
func moeModelTokens(t *testing.T, tok int) *kiln.CompiledGraph {
	t.Helper()
	const h, f, e, k = 4, 6, 4, 2
	g := graph.New()
	x := g.Input("x", tensor.F32, tok, h)
	layer := func(i string, in, router *graph.Node) *graph.Node {
		w, ids := g.TopK(g.Softmax(g.MatMul(x, router), 1), k, 1, false)
		return g.MoEExperts(in, ids, w, g.Param("gate"+i, tensor.F32, e, h, f), g.Param("up"+i, tensor.F32, e, h, f), g.Param("down"+i, tensor.F32, e, f, h))
	}
	y0 := layer("0", x, g.Param("router0", tensor.F32, h, e))
	g.Output(layer("1", y0, g.Param("router1", tensor.F32, h, e)))
	feeds := randomFeeds(t, g, 26)
	eye := make([]float32, h*e)
	neg := make([]float32, h*e)
	for i := range h {
		eye[i*e+i], neg[i*e+i] = 1, -1
	}
	feeds["router0"], feeds["router1"] = mustF32(t, eye, h, e), mustF32(t, neg, h, e)
	return compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
}

func wantErr(t *testing.T, what string, err error, sub string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: error %v, want one containing %q", what, err, sub)
	}
}

// TestMoETopKCapture: the captured ids of both layers, in forward order,
// are the router's top-k in TopK order; a take consumes the capture,
// capture stays on for the next forward, and misuse is an error.
func TestMoETopKCapture(t *testing.T) {
	cg := moeModel(t)
	_, err := cg.TakeMoETopKCapture()
	wantErr(t, "take before enabling", err, "capture is off")
	wantErr(t, "wrong expert count", cg.EnableMoETopKCapture(8), "MoE layer 0")
	if err := cg.EnableMoETopKCapture(4); err != nil {
		t.Fatal(err)
	}
	_, err = cg.TakeMoETopKCapture()
	wantErr(t, "take before a forward", err, "no forward ran")
	for round := range 2 {
		if _, err := cg.RunSlots(moeX); err != nil {
			t.Fatal(err)
		}
		got, err := cg.TakeMoETopKCapture()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !slices.Equal(got[0], moeWant0) || !slices.Equal(got[1], moeWant1) {
			t.Errorf("round %d: capture %v, want [%v %v]", round, got, moeWant0, moeWant1)
		}
		_, err = cg.TakeMoETopKCapture()
		wantErr(t, "second take", err, "no forward ran")
	}
}

// TestMoEResidencyStats: per layer, the pairs on resident and
// non-resident experts under a merged mask, per-layer masks and none,
// with per-expert counts; masks of the wrong length are errors.
func TestMoEResidencyStats(t *testing.T) {
	cg := moeModel(t)
	_, err := cg.TakeMoEResidencyStats()
	wantErr(t, "stats before a forward", err, "no forward ran")
	check := func(what string, res0, res1 int) {
		t.Helper()
		if _, err := cg.RunSlots(moeX); err != nil {
			t.Fatal(err)
		}
		st, err := cg.TakeMoEResidencyStats()
		if err != nil {
			t.Fatal(err)
		}
		want := []kiln.MoELayerStats{{Resident: res0, NonResident: 8 - res0, PerExpert: moeCount0}, {Resident: res1, NonResident: 8 - res1, PerExpert: moeCount1}}
		if len(st.Layers) != 2 {
			t.Fatalf("%s: %d layers, want 2", what, len(st.Layers))
		}
		for i, l := range st.Layers {
			if l.Resident != want[i].Resident || l.NonResident != want[i].NonResident || !slices.Equal(l.PerExpert, want[i].PerExpert) {
				t.Errorf("%s: layer %d %+v, want %+v", what, i, l, want[i])
			}
		}
		_, err = cg.TakeMoEResidencyStats()
		wantErr(t, what+": second take", err, "no forward ran")
	}
	check("no mask: all resident", 8, 8)
	if err := cg.SetMoEResidentExperts([]bool{true, false, true, false}); err != nil {
		t.Fatal(err)
	}
	check("merged mask 0,2", 2+1, 2+3)
	if err := cg.SetMoEResidentExpertsPerLayer([][]bool{{false, false, false, true}, nil}); err != nil {
		t.Fatal(err)
	}
	check("layer 0 expert 3, layer 1 all", 3, 8)
	if err := cg.SetMoEResidentExpertsPerLayer([][]bool{{false, false, false, false}, {true, true, false, false}}); err != nil {
		t.Fatal(err)
	}
	check("layer 0 none, layer 1 experts 0,1", 0, 4)
	if err := cg.SetMoEResidentExperts(nil); err != nil {
		t.Fatal(err)
	}
	check("reset", 8, 8)
	wantErr(t, "short mask", cg.SetMoEResidentExperts([]bool{true}), "mask of 1 entries")
	wantErr(t, "one mask for two layers", cg.SetMoEResidentExpertsPerLayer([][]bool{nil}), "1 masks for 2 MoE layers")
	wantErr(t, "long layer mask", cg.SetMoEResidentExpertsPerLayer([][]bool{nil, make([]bool, 5)}), "mask 1 has 5 entries")
	// A refused mask leaves the last one in force.
	check("after refused masks", 8, 8)
}

// TestMoENoLayers: a graph without MoE layers refuses every MoE call.
func TestMoENoLayers(t *testing.T) {
	g, feeds := smallMLP(t)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	wantErr(t, "enable", cg.EnableMoETopKCapture(4), "no MoE layers")
	_, err := cg.TakeMoETopKCapture()
	wantErr(t, "take", err, "no MoE layers")
	wantErr(t, "mask", cg.SetMoEResidentExperts([]bool{true}), "no MoE layers")
	wantErr(t, "masks", cg.SetMoEResidentExpertsPerLayer(nil), "no MoE layers")
	_, err = cg.TakeMoEResidencyStats()
	wantErr(t, "stats", err, "no MoE layers")
}

// TestMoECaptureAllocs: a forward allocates nothing, capture on or off.
func TestMoECaptureAllocs(t *testing.T) {
	cg := moeModel(t)
	run := func() {
		if _, err := cg.RunSlots(moeX); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Errorf("capture off: %v allocations per run", a)
	}
	if err := cg.EnableMoETopKCapture(4); err != nil {
		t.Fatal(err)
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Errorf("capture on: %v allocations per run", a)
	}
	if got, err := cg.TakeMoETopKCapture(); err != nil || !slices.Equal(got[1], moeWant1) {
		t.Errorf("capture after the alloc runs: %v, %v", got, err)
	}
}

// TestMoEClone: a clone captures and counts its own forwards, and starts
// with the original's masks and capture setting.
func TestMoEClone(t *testing.T) {
	cg := moeModel(t)
	if err := cg.EnableMoETopKCapture(4); err != nil {
		t.Fatal(err)
	}
	if err := cg.SetMoEResidentExperts([]bool{true, false, true, false}); err != nil {
		t.Fatal(err)
	}
	c, err := cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Token 0 of the clone's input is token 1 of the original's.
	x := slices.Clone(moeX)
	copy(x[:4], moeX[4:8])
	if _, err := c.RunSlots(x); err != nil {
		t.Fatal(err)
	}
	if _, err := cg.TakeMoETopKCapture(); err == nil {
		t.Error("the original has a capture from the clone's forward")
	}
	got, err := c.TakeMoETopKCapture()
	if err != nil {
		t.Fatal(err)
	}
	want0 := append([]uint32{0, 3}, moeWant0[2:]...)
	if !slices.Equal(got[0], want0) {
		t.Errorf("clone's layer 0 capture %v, want %v", got[0], want0)
	}
	st, err := c.TakeMoEResidencyStats()
	if err != nil {
		t.Fatal(err)
	}
	// Layer 0 per expert {0: 3, 1: 1, 2: 0, 3: 4}: resident 0 and 2.
	if l := st.Layers[0]; l.Resident != 3 || l.NonResident != 5 || !slices.Equal(l.PerExpert, []int{3, 1, 0, 4}) {
		t.Errorf("clone's layer 0 stats %+v", l)
	}
	if _, err := cg.TakeMoEResidencyStats(); err == nil {
		t.Error("the original has stats from the clone's forward")
	}
}

// TestMoEActiveExtent: a forward over the first rows of the token axis
// (SetActiveExtent, 4 of 8 tokens) is captured and counted for those
// rows only.
func TestMoEActiveExtent(t *testing.T) {
	cg := moeModelTokens(t, 8)
	if err := cg.EnableMoETopKCapture(4); err != nil {
		t.Fatal(err)
	}
	if err := cg.SetActiveExtent(4, 8); err != nil {
		t.Fatal(err)
	}
	x := append(slices.Clone(moeX), make([]float32, 16)...) // rows 4-7 are not run
	if _, err := cg.RunSlots(x); err != nil {
		t.Fatal(err)
	}
	got, err := cg.TakeMoETopKCapture()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[0], moeWant0) || !slices.Equal(got[1], moeWant1) {
		t.Errorf("capture over 4 of 8 tokens %v, want [%v %v]", got, moeWant0, moeWant1)
	}
	st, err := cg.TakeMoEResidencyStats()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]int{moeCount0, moeCount1} {
		if l := st.Layers[i]; l.Resident != 8 || !slices.Equal(l.PerExpert, want) {
			t.Errorf("layer %d stats %+v, want per expert %v", i, l, want)
		}
	}
}
