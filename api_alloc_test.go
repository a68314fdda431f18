package kiln_test

import (
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// maskedEncoderLayer is an encoder layer on a float input x [1, 16, 32]
// with an additive attention mask input [1, 1, 1, 16] (4 heads, FFN 64):
// RunSlots can feed it, unlike the demo encoder's token ids.
func maskedEncoderLayer() *graph.Graph {
	const b, s, h, heads, ffn = 1, 16, 32, 4, 64
	g := graph.New()
	x := g.Input("x", tensor.F32, b, s, h)
	mask := g.Input("mask", tensor.F32, b, 1, 1, s)
	lin := func(x *graph.Node, name string, in, out int) *graph.Node {
		return g.Add(g.MatMul(x, g.Param(name+".w", tensor.F32, in, out)), g.Param(name+".b", tensor.F32, out))
	}
	ln := func(x *graph.Node, name string) *graph.Node {
		return g.LayerNorm(x, g.Param(name+".scale", tensor.F32, h), g.Param(name+".bias", tensor.F32, h), -1, 1e-5)
	}
	split := func(t *graph.Node) *graph.Node {
		return g.Transpose(g.Reshape(t, b, s, heads, h/heads), 0, 2, 1, 3)
	}
	a := g.Attention(split(lin(x, "q", h, h)), split(lin(x, "k", h, h)), split(lin(x, "v", h, h)), mask, graph.AttentionOpts{})
	a = g.Reshape(g.Transpose(a, 0, 2, 1, 3), b, s, h)
	x = ln(g.Add(x, lin(a, "o", h, h)), "ln1")
	f := lin(g.Gelu(lin(x, "ff1", h, ffn)), "ff2", ffn, h)
	g.Output(ln(g.Add(x, f), "ln2"))
	return g
}

// TestRunSlotsZeroAllocs proves the fast path allocates nothing per run,
// on every kernel setting, and that it still computes the right values.
func TestRunSlotsZeroAllocs(t *testing.T) {
	models := map[string]func() *graph.Graph{
		"mlp":          func() *graph.Graph { return testmodels.MLP(8, 64, 128, 10) },
		"encoderLayer": func() *graph.Graph { return testmodels.EncoderLayer(1, 16, 32, 4, 64) },
		"maskedLayer":  maskedEncoderLayer,
	}
	for name, build := range models {
		for sname, s := range map[string]*kiln.Session{
			"default":   kiln.NewSession(kiln.CPU),
			"reference": kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Exec: exec.Options{Reference: true}}),
		} {
			t.Run(name+"/"+sname, func(t *testing.T) {
				g := build()
				feeds := randomFeeds(t, g, 3)
				cg := compileSet(t, s, g, feeds)
				var ins [][]float32
				for _, in := range g.Inputs() {
					ins = append(ins, feeds[in.Name].F32())
				}
				if _, err := cg.RunSlots(ins...); err != nil { // warm-up
					t.Fatal(err)
				}
				var runErr error
				allocs := testing.AllocsPerRun(20, func() {
					if _, err := cg.RunSlots(ins...); err != nil {
						runErr = err
					}
				})
				if runErr != nil {
					t.Fatal(runErr)
				}
				if allocs != 0 {
					t.Errorf("RunSlots allocates %v times per run, want 0", allocs)
				}
				want := interpret(t, g, feeds)
				if err := closeTo(cg.Output(0), want[0].F32(), refTol); err != nil {
					t.Error(err)
				}
			})
		}
	}
}
