package fuse_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// demoFeeds are the demo encoder's seeded weights, token ids and mask.
func demoFeeds(t testing.TB, c demo.Config, g *graph.Graph) map[string]tensor.Tensor {
	t.Helper()
	feeds := map[string]tensor.Tensor{}
	for name, w := range demo.Weights(g, 1) {
		n, _ := g.Lookup(name)
		x, err := tensor.FromF32(n.Shape, w)
		if err != nil {
			t.Fatal(err)
		}
		feeds[name] = x
	}
	ids, mask := demo.Inputs(c, 2)
	it, err := tensor.FromI64(tensor.Shape{c.Batch, c.Seq}, ids)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := tensor.FromF32(tensor.Shape{c.Batch, 1, 1, c.Seq}, mask)
	if err != nil {
		t.Fatal(err)
	}
	feeds["input_ids"], feeds["attention_mask"] = it, mt
	return feeds
}

// TestDemoEncoderFused compiles the demo encoder with every pass and
// checks the run against the reference interpreter on the unfused graph,
// and which fusions were made.
func TestDemoEncoderFused(t *testing.T) {
	c := demo.Tiny
	g := demo.Encoder(c)
	feeds := demoFeeds(t, c, g)
	want := interpret(t, g, feeds)
	for _, ref := range []bool{true, false} {
		got, cg := compiledRun(t, session(true, ref), g, feeds)
		tol := 1e-6
		if !ref {
			tol = 2e-5
		}
		if err := agree(got, want, tol); err != nil {
			t.Fatalf("reference kernels %v: %v\n%s", ref, err, cg.Report())
		}
		if ref {
			continue
		}
		rep := cg.Report()
		// Per layer: q, k, v with bias, o and ffn2 with bias and residual,
		// ffn1 with bias and GELU; the embedding sum into its LayerNorm.
		for _, want := range []string{"(bias)", "(bias, residual)", "(bias, Gelu)", "→ addlayernorm"} {
			if !strings.Contains(rep, want) {
				t.Errorf("report lacks %q:\n%s", want, rep)
			}
		}
		if n := strings.Count(rep, "epilogue:"); n != 6*c.Layers {
			t.Errorf("%d epilogue fusions, want %d:\n%s", n, 6*c.Layers, rep)
		}
		t.Log(rep)
	}
}

// TestDemoEncoderArena plans the MiniLM-sized demo encoder before and
// after fusion: the arena must not grow. Both plans are logged.
func TestDemoEncoderArena(t *testing.T) {
	for _, c := range []demo.Config{demo.MiniLM, demo.Tiny} {
		before := demo.Encoder(c)
		after := before.Clone()
		if _, err := fuse.Run(after, fuse.Options{}); err != nil {
			t.Fatal(err)
		}
		pb, err := plan.Make(before, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pa, err := plan.Make(after, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seq %d hidden %d, unfused: %s", c.Seq, c.Hidden, pb.Report())
		t.Logf("seq %d hidden %d, fused:   %s", c.Seq, c.Hidden, pa.Report())
		if pa.ArenaBytes > pb.ArenaBytes {
			t.Errorf("arena grew from %d to %d bytes", pb.ArenaBytes, pa.ArenaBytes)
		}
		if len(pa.Order) >= len(pb.Order) {
			t.Errorf("fused graph has %d nodes, unfused %d", len(pa.Order), len(pb.Order))
		}
	}
}

// TestModelsFused runs the embedded end-to-end models (MLP, CNN block,
// encoder layer) fused, against the torch reference outputs.
func TestModelsFused(t *testing.T) {
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
			got, cg := compiledRun(t, session(true, false), g, feeds)
			want, err := m.Want()
			if err != nil {
				t.Fatal(err)
			}
			if err := agree(got, want, max(m.Tol, 1e-5)); err != nil {
				t.Fatalf("%v\n%s", err, cg.Report())
			}
			if !strings.Contains(cg.Report(), "epilogue:") {
				t.Errorf("no epilogue fusion:\n%s", cg.Report())
			}
		})
	}
}

func TestRunOptions(t *testing.T) {
	build := func() *graph.Graph {
		g := graph.New()
		x := g.Input("x", tensor.F32, 4, 8)
		y := g.Add(g.MatMul(x, g.Param("w", tensor.F32, 8, 8)), g.Param("b", tensor.F32, 8))
		g.Output(g.Tanh(g.Mul(g.Relu(y), g.Sigmoid(x))))
		return g
	}
	g := build()
	rep, err := fuse.Run(g, fuse.ParseOptions("off"))
	if err != nil || rep.String() != "fusion off" || len(g.Nodes) != 9 {
		t.Errorf("off: %q, %v, %d nodes", rep.String(), err, len(g.Nodes))
	}
	g = build()
	rep, err = fuse.Run(g, fuse.ParseOptions("-epilogue, -dce"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.String(), "epilogue: disabled") || !strings.Contains(rep.String(), "dce: disabled") {
		t.Errorf("report %q", rep.String())
	}
	// Without epilogues the elementwise pass takes the bias add too.
	if len(rep.Fusions) != 1 || !strings.Contains(rep.Fusions[0], "elementwise: add_") || !strings.Contains(rep.Fusions[0], "(5 ops") {
		t.Errorf("fusions %q", rep.Fusions)
	}
	g = build()
	rep, err = fuse.Run(g, fuse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Fusions) != 3 || !strings.Contains(rep.Fusions[0], "(bias, Relu)") ||
		!strings.Contains(rep.Fusions[1], "elementwise: sigmoid_") || !strings.Contains(rep.Fusions[1], "(3 ops, 2 inputs)") {
		t.Errorf("fusions %q", rep.Fusions)
	}
	if len(g.Nodes) != 5 { // x, w, b, the fused product and the fused region
		t.Errorf("after fusion:\n%s", graph.Dump(g))
	}
}

// TestModelArenas plans every embedded model before and after fusion:
// the arena must not grow (the CNN's folded weights are computed from
// params, so the executor keeps them outside the arena between runs).
func TestModelArenas(t *testing.T) {
	for _, name := range testmodels.ModelNames() {
		m, err := testmodels.LoadModel(name)
		if err != nil {
			t.Fatal(err)
		}
		before, err := m.Graph()
		if err != nil {
			t.Fatal(err)
		}
		after := before.Clone()
		if _, err := fuse.Run(after, fuse.Options{}); err != nil {
			t.Fatal(err)
		}
		pb, err := plan.Make(before, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pa, err := plan.Make(after, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: arena %d → %d bytes (lower bound %d → %d), %d → %d nodes", name, pb.ArenaBytes, pa.ArenaBytes,
			pb.LowerBound, pa.LowerBound, len(pb.Order), len(pa.Order))
		if pa.ArenaBytes > pb.ArenaBytes {
			t.Errorf("%s: arena grew from %d to %d bytes", name, pb.ArenaBytes, pa.ArenaBytes)
		}
	}
}

// TestDemoEncoderExportedForm compiles the encoder spelled out as torch's
// ONNX exporter writes it (demo.Config.Exported) and checks that fusion
// recovers the op-level form: the same kernels, step for step, and the
// same output on the same weights.
func TestDemoEncoderExportedForm(t *testing.T) {
	op := demo.Tiny
	exp := op
	exp.Exported = true
	gop, gexp := demo.Encoder(op), demo.Encoder(exp)
	feeds := demoFeeds(t, op, gop)
	want := interpret(t, gexp, feeds)
	gotOp, cgOp := compiledRun(t, session(true, false), gop, feeds)
	gotExp, cgExp := compiledRun(t, session(true, false), gexp, feeds)
	if err := agree(gotExp, want, 2e-5); err != nil {
		t.Fatalf("exported form vs reference: %v\n%s", err, cgExp.Report())
	}
	if err := agree(gotExp, gotOp, 2e-5); err != nil {
		t.Fatalf("exported form vs op form: %v", err)
	}
	so, se := cgOp.Stats(), cgExp.Stats()
	if so.Steps != se.Steps || !maps.Equal(so.Variants, se.Variants) {
		t.Errorf("exported form runs %d steps %v, op form %d steps %v\n%s", se.Steps, se.Variants, so.Steps, so.Variants, cgExp.Report())
	}
	_, cgOff := compiledRun(t, session(false, false), gexp, feeds)
	t.Logf("exported form: %d steps fused, %d with fusion off", se.Steps, cgOff.Stats().Steps)
}
