package ptxemu

import (
	"math"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// TestDecodeStepFeedsEndToEnd runs the decode step compiled with
// Options.Feeds naming the caches, so that the plan updates each cache in
// its own bytes (the layout a GPU handle needs to be fed with no copy),
// through the CUDA lowering on the emulator, and compares all three
// outputs, the updated caches included, with the CPU run of the same
// compiled graph.
func TestDecodeStepFeedsEndToEnd(t *testing.T) {
	const maxLen, d, step = 16, 8, 5
	feeds := []string{"k_cache", "v_cache"}
	cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Feeds: feeds}).Compile(testmodels.DecodeStep(maxLen, d))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	g, p := cg.Graph(), cg.Plan()
	for i := range feeds {
		if r := p.Residence(g.Inputs()[3+i], g.Outputs()[1+i]); r != plan.InPlace {
			t.Fatalf("%s: %v, want in place", feeds[i], r)
		}
	}
	feedsT, err := testmodels.RandomFeeds(g, 5)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string][]byte{}
	for _, n := range g.Params() {
		params[n.Name] = feedsT[n.Name].Data
		if err := cg.SetParamTyped(n.Name, feedsT[n.Name].Data, tensor.F32); err != nil {
			t.Fatal(err)
		}
	}
	x, pos, mask := testmodels.DecodeInputs(step, maxLen, d)
	inputs := map[string][]byte{"x": tensor.Bytes(x), "pos": tensor.Bytes(pos), "mask": tensor.Bytes(mask),
		"k_cache": feedsT["k_cache"].Data, "v_cache": feedsT["v_cache"].Data}
	var ins []kiln.TypedInput
	for _, n := range g.Inputs() {
		ins = append(ins, kiln.TypedInput{Name: n.Name, Data: inputs[n.Name], DType: tensor.F32})
	}
	want, err := cg.RunTyped(ins...)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := runLowered(t, g, p, inputs, params)
	for o := range want {
		w, gv := tensor.Elems[float32](want[o].Data), tensor.Elems[float32](got[o])
		bad := 0
		for i := range w {
			if approx.Far(float64(gv[i]), float64(w[i]), 1e-5*(1+math.Abs(float64(w[i])))) {
				if bad++; bad <= 5 {
					t.Errorf("output %d (%s) [%d]: emulated %g, cpu %g", o, g.OutputNames()[o], i, gv[i], w[i])
				}
			}
		}
	}
}
