package exec

import (
	"bytes"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// TestInlineSameBits runs test models (an MLP, a conv block, a concat
// CNN, an encoder layer, a deep stride-2 conv into a 7×7 plane, which
// splits its depth) on two workers three ways: on the pool, inline
// (every step's serial twin, planned for one worker), and tuning (a
// block of runs of each, then the faster), and on one worker: every run
// must give the same bits, since the kernels take each output's sum in
// the same order however a loop is split and whatever the workers they
// were planned for. The first tuning must be over after its runs.
func TestInlineSameBits(t *testing.T) {
	for name, g := range map[string]*graph.Graph{
		"mlp":     testmodels.MLP(4, 64, 96, 10),
		"cnn":     testmodels.CNNBlock(1, 8, 16, 24, 24),
		"concat":  testmodels.ConcatCNN(3, 24),
		"encoder": testmodels.EncoderLayer(2, 16, 64, 4, 128),
		"deep":    deepConv(),
	} {
		t.Run(name, func(t *testing.T) {
			feeds, err := testmodels.RandomFeeds(g, 7)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Make(g, plan.Options{InPlace: ops.InPlace})
			if err != nil {
				t.Fatal(err)
			}
			prepare := func(opt Options) *Program {
				pr, err := Lower(g, p, opt)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range g.Params() {
					if err := pr.Write(n, feeds[n.Name].Data); err != nil {
						t.Fatal(err)
					}
				}
				return pr
			}
			run := func(pr *Program) []byte { // inputs written each run: a plan may reuse their buffers
				t.Helper()
				for _, n := range g.Inputs() {
					if err := pr.Write(n, feeds[n.Name].Data); err != nil {
						t.Fatal(err)
					}
				}
				if err := pr.Run(); err != nil {
					t.Fatal(err)
				}
				var all []byte
				for _, o := range g.Outputs() {
					b := make([]byte, o.Shape.NumElements()*o.DType.Size())
					if err := pr.Read(o, b); err != nil {
						t.Fatal(err)
					}
					all = append(all, b...)
				}
				return all
			}
			pooled, inline, tuned := prepare(Options{Pool: NewPool(2), NoTuning: true}), prepare(Options{Pool: NewPool(2)}), prepare(Options{Pool: NewPool(2)})
			inline.tuner = &runTuner{tuned: true, inline: true} // inline until its next measurement, 1000 runs on
			for _, s := range inline.Steps {
				if s.Serial == nil {
					t.Fatalf("step %s has no serial twin", s.Node)
				}
			}
			want := run(pooled)
			if !bytes.Equal(run(prepare(Options{Pool: NewPool(1)})), want) {
				t.Fatal("outputs on one worker differ from the pooled run's")
			}
			if !tuned.Tuning() || pooled.Tuning() || inline.Tuning() {
				t.Fatalf("tuning %v, %v (NoTuning), %v (decided), want true, false, false", tuned.Tuning(), pooled.Tuning(), inline.Tuning())
			}
			for i := range tuneWarmup + 2*tuneBlock {
				for way, pr := range map[string]*Program{"inline": inline, "tuned": tuned} {
					if !bytes.Equal(run(pr), want) {
						t.Fatalf("run %d %s: outputs differ from the pooled run's", i, way)
					}
				}
			}
			if tuned.Tuning() || !inline.Inline() {
				t.Errorf("tuning %v after %d runs; inline %v", tuned.Tuning(), tuneWarmup+2*tuneBlock, inline.Inline())
			}
		})
	}
}

// deepConv is relu(conv3x3(x, stride 2, pad 1)) from 256 channels at
// 14×14 to 100 at 7×7: 2305 deep, which the convolution splits in two
// shares of its depth (asm's conv_ksplit.go) on any number of workers,
// and work enough for two (convParMinFlops).
func deepConv() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, 256, 14, 14)
	w := g.Param("w", tensor.F32, 100, 256, 3, 3)
	b := g.Param("b", tensor.F32, 100)
	g.Output(g.Relu(g.Conv2D(x, w, b, graph.ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}})))
	return g
}
