package kiln_test

import (
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// sessions are the compile settings every model is checked under: the
// defaults, naive placement (KILN_PLAN=naive), reference kernels only
// (KILN_KERNELS=reference), fusion off, and a pool of three workers (more
// than this machine may have cores, and an odd count).
func sessions() map[string]*kiln.Session {
	s := kiln.NewSession(kiln.CPU)
	return map[string]*kiln.Session{
		"default":   s,
		"pool3":     s.WithOptions(kiln.Options{Exec: exec.Options{Pool: pool3}}),
		"naive":     s.WithOptions(kiln.Options{Plan: &plan.Options{Naive: true}}),
		"reference": s.WithOptions(kiln.Options{Exec: exec.Options{Reference: true}}),
		"fuse-off":  s.WithOptions(kiln.Options{Fuse: &fuse.Options{Off: true}}),
	}
}

var pool3 = exec.NewPool(3)

// demoOneLayer is a one-layer encoder, small enough for every setting.
var demoOneLayer = demo.Config{Vocab: 50, Hidden: 24, Layers: 1, Heads: 3, FFN: 40, Seq: 8, Batch: 1}

func refModels() map[string]func() *graph.Graph {
	return map[string]func() *graph.Graph{
		"mlp":          func() *graph.Graph { return testmodels.MLP(4, 32, 64, 10) },
		"cnn":          func() *graph.Graph { return testmodels.CNNBlock(2, 3, 8, 10, 10) },
		"concatCNN":    func() *graph.Graph { return testmodels.ConcatCNN(3, 8) },
		"encoderLayer": func() *graph.Graph { return testmodels.EncoderLayer(2, 8, 32, 4, 64) },
		"demoTiny":     func() *graph.Graph { return demo.Encoder(demo.Tiny) },
		"demoOneLayer": func() *graph.Graph { return demo.Encoder(demoOneLayer) },
	}
}

// TestMatchesInterpreter compiles each model under every setting and
// compares every output with the reference interpreter on the original
// (unfused) graph, twice with different inputs so that stale values from
// the first run would show.
func TestMatchesInterpreter(t *testing.T) {
	for name, build := range refModels() {
		for sname, s := range sessions() {
			t.Run(name+"/"+sname, func(t *testing.T) {
				g := build()
				feeds := randomFeeds(t, g, 1)
				cg := compileSet(t, s, g, feeds)
				for run := range 2 {
					if run == 1 {
						next := randomFeeds(t, g, 2)
						for _, in := range g.Inputs() {
							feeds[in.Name] = next[in.Name]
						}
					}
					got, err := cg.RunTyped(typedInputs(g, feeds)...)
					if err != nil {
						t.Fatalf("run %d: %v", run, err)
					}
					checkOutputs(t, got, interpret(t, g, feeds))
				}
			})
		}
	}
}

// TestMatchesTorch checks the compiled models against the float64 torch
// outputs stored with the shared test models: an oracle independent of
// kiln's own reference kernels.
func TestMatchesTorch(t *testing.T) {
	for _, name := range testmodels.ModelNames() {
		t.Run(name, func(t *testing.T) {
			m, err := testmodels.LoadModel(name)
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.Graph()
			if err != nil {
				t.Fatal(err)
			}
			feeds, err := m.Feeds()
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Want()
			if err != nil {
				t.Fatal(err)
			}
			cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
			got, err := cg.RunTyped(typedInputs(g, feeds)...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				gt, _ := tensor.View(got[i].DType, got[i].Shape, got[i].Data)
				if err := testmodels.CheckClose(gt, want[i], m.Tol); err != nil {
					t.Errorf("output %d: %v", i, err)
				}
			}
		})
	}
}

// TestDemoMiniLM checks the full demo encoder (what `kiln demo` runs)
// against the interpreter. It takes seconds, so -short skips it.
func TestDemoMiniLM(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size encoder skipped in -short mode")
	}
	g := demo.Encoder(demo.MiniLM)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	weights := demo.Weights(g, 1)
	feeds := map[string]tensor.Tensor{}
	for _, p := range g.Params() {
		if err := cg.SetParam(p.Name, weights[p.Name]); err != nil {
			t.Fatal(err)
		}
		feeds[p.Name], _ = tensor.FromF32(p.Shape, weights[p.Name])
	}
	ids, mask := demo.Inputs(demo.MiniLM, 2)
	in := g.Inputs()
	feeds["input_ids"], _ = tensor.FromI64(in[0].Shape, ids)
	feeds["attention_mask"], _ = tensor.FromF32(in[1].Shape, mask)
	got, err := cg.RunTyped(typedInputs(g, feeds)...)
	if err != nil {
		t.Fatal(err)
	}
	checkOutputs(t, got, interpret(t, g, feeds))
	if p := cg.Plan(); float64(p.ArenaBytes) > 1.10*float64(p.LowerBound) {
		t.Errorf("arena %d bytes is more than 1.10x its lower bound %d", p.ArenaBytes, p.LowerBound)
	}
}

// TestJoinedConcats: the CPU session joins ConcatCNN's three concats (the
// Fire module's and the dense block's two; the concat of one input
// compiles to none), so no step runs for them, and naive placement joins
// none; TestMatchesInterpreter checks the values under both.
func TestJoinedConcats(t *testing.T) {
	g := testmodels.ConcatCNN(3, 8)
	count := func(s *kiln.Session) (joined, steps int) {
		cg, err := s.Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		defer cg.Close()
		for _, n := range cg.Graph().Nodes {
			if n.Op == graph.OpConcat && cg.Plan().Slots[n.ID].Joined {
				joined++
			}
		}
		return joined, cg.Stats().Steps
	}
	sess := kiln.NewSession(kiln.CPU)
	joined, steps := count(sess)
	want := 3
	if plan.FromEnv().Naive { // KILN_PLAN=naive: nothing joins
		want = 0
	}
	if joined != want {
		t.Errorf("default CPU session: %d concats joined, want %d", joined, want)
	}
	naiveJoined, naiveSteps := count(sess.WithOptions(kiln.Options{Plan: &plan.Options{Naive: true}}))
	if naiveJoined != 0 || naiveSteps != steps+want {
		t.Errorf("naive plan: %d joined, %d steps; want 0 and %d", naiveJoined, naiveSteps, steps+want)
	}
}
