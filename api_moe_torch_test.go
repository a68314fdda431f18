package kiln_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// moeTorch is internal/testmodels/testdata/moe_torch.json, written by
// gen_moe_torch.py: a two-layer Mixtral-style MoE model in float64 torch.
type moeTorch struct {
	Config struct {
		Batch, Seq, Hidden, FFN, Experts, K, Layers int
		Eps                                         float64
	}
	Tensors map[string]testmodels.JSONTensor
}

// TestMoETorch: kiln's graph.MoE layers (RMSNorm, Mixtral's routing and
// SwiGLU experts, residual) give torch's output, on the routed kernel and
// on the reference kernels, and the captured top-k ids are torch.topk's.
func TestMoETorch(t *testing.T) {
	raw, err := os.ReadFile("internal/testmodels/testdata/moe_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var m moeTorch
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	c := m.Config
	ts := map[string]tensor.Tensor{}
	for name, j := range m.Tensors {
		v, err := j.Decode()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ts[name] = v
	}
	g := graph.New()
	h := g.Input("x", tensor.F32, c.Batch, c.Seq, c.Hidden)
	for l := range c.Layers {
		p := func(name string, dims ...int) *graph.Node {
			return g.Param(fmt.Sprintf("%s%d", name, l), tensor.F32, dims...)
		}
		n := g.RMSNorm(h, p("norm", c.Hidden), -1, float32(c.Eps))
		h = g.Add(h, g.MoE(n, graph.MoESpec{Router: p("router", c.Hidden, c.Experts),
			Gate: p("gate", c.Experts, c.Hidden, c.FFN), Up: p("up", c.Experts, c.Hidden, c.FFN), Down: p("down", c.Experts, c.FFN, c.Hidden),
			K: c.K, Renormalize: true}))
	}
	g.Output(h)
	want := ts["y"].F32()
	big := 0.0
	for _, v := range want {
		big = max(big, math.Abs(float64(v)))
	}
	for _, opt := range []struct {
		name string
		opts kiln.Options
	}{{"fast", kiln.Options{}}, {"reference", kiln.Options{Exec: exec.Options{Reference: true}}}} {
		cg := compileSet(t, kiln.NewSession(kiln.CPU).WithOptions(opt.opts), g, ts)
		if err := cg.EnableMoETopKCapture(c.Experts); err != nil {
			t.Fatal(err)
		}
		if _, err := cg.RunSlots(ts["x"].F32()); err != nil {
			t.Fatal(err)
		}
		approx.Slices(t, opt.name+": output against torch", cg.Output(0), want, 1e-4, 1e-5*big)
		got, err := cg.TakeMoETopKCapture()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.Layers {
			t.Fatalf("%s: %d layers captured, want %d", opt.name, len(got), c.Layers)
		}
		for l, ids := range got {
			w := ts[fmt.Sprintf("topk%d", l)].I64()
			wu := make([]uint32, len(w))
			for i, v := range w {
				wu[i] = uint32(v)
			}
			approx.Slices(t, fmt.Sprintf("%s: layer %d top-k ids against torch.topk", opt.name, l), u32f(ids), u32f(wu), 0, 0)
		}
		st, err := cg.TakeMoEResidencyStats()
		if err != nil {
			t.Fatal(err)
		}
		for l, ls := range st.Layers {
			if ls.Resident != c.Batch*c.Seq*c.K || ls.NonResident != 0 {
				t.Errorf("%s: layer %d stats %+v, want every pair resident", opt.name, l, ls)
			}
			t.Logf("%s: layer %d: top-k %v, pairs per expert %v", opt.name, l, got[l], ls.PerExpert)
		}
	}
}

// u32f widens ids for approx.Slices (exact with zero tolerances).
func u32f(v []uint32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
