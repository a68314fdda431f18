package decode

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// tinyWeights are seeded random weights for every param of cfg's step.
func tinyWeights(t testing.TB, c demo.DecoderConfig) map[string][]float32 {
	t.Helper()
	g, err := demo.DecoderStep(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	return demo.Weights(g, 25)
}

func randomIDs(c demo.DecoderConfig, n int, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, 3))
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(r.IntN(c.Vocab))
	}
	return ids
}

// newDecoder compiles a Decoder on the CPU, closed when the test ends.
func newDecoder(t testing.TB, c demo.DecoderConfig, prompt int, w map[string][]float32) *Decoder {
	t.Helper()
	d, err := New(kiln.NewSession(kiln.CPU), c, prompt, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestDecodeStepsEqualPrefill: decoding a sequence token by token from a
// short prompt gives, at every position, the logits the prefill of the
// whole sequence gives for that row (the cache, the cache-write indices,
// the rotary positions and the run-time attention length all agree), and
// both equal the plain float64 forward pass of refForward.
// With QKVBias (Qwen2's layout) the same holds, the biases scaled up so
// that a graph ignoring them would miss refForward by far more than the
// tolerance.
func TestDecodeStepsEqualPrefill(t *testing.T) {
	for _, bias := range []bool{false, true} {
		t.Run(fmt.Sprintf("qkv_bias=%v", bias), func(t *testing.T) {
			c := demo.DecoderTiny
			c.QKVBias = bias
			w := tinyWeights(t, c)
			for name, b := range w {
				if strings.HasSuffix(name, ".bias") {
					for i := range b {
						b[i] *= 25
					}
				}
			}
			stepsEqualPrefill(t, c, w)
		})
	}
}

func stepsEqualPrefill(t *testing.T, c demo.DecoderConfig, w map[string][]float32) {
	n, prompt := c.MaxSeq-2, 5
	ids := randomIDs(c, n, 1)
	want := refForward(c, w, ids)

	full := newDecoder(t, c, n, w)
	all, err := full.Prefill(ids)
	if err != nil {
		t.Fatal(err)
	}
	approx.Slices(t, "prefill of the whole sequence vs refForward", all, want, 1e-4, 1e-5)

	d := newDecoder(t, c, prompt, w)
	for round := range 2 { // a second prefill starts over, whatever the cache held
		got, err := d.Prefill(ids[:prompt])
		if err != nil {
			t.Fatal(err)
		}
		v := c.Vocab
		// The prefill's GEMMs and a step's one-row products sum in
		// other orders (per kernel variant: NEON's differ from AVX's), so
		// logits of order 1 may differ by a few 1e-6 absolute.
		approx.Slices(t, fmt.Sprintf("round %d: prompt rows", round), got, all[:prompt*v], 1e-5, 1e-5)
		for p := prompt; p < n; p++ {
			if d.Pos() != p {
				t.Fatalf("Pos() = %d before the step of position %d", d.Pos(), p)
			}
			got, err := d.Step(ids[p])
			if err != nil {
				t.Fatal(err)
			}
			approx.Slices(t, fmt.Sprintf("round %d: decode step at %d vs prefill row", round, p), got, all[p*v:(p+1)*v], 1e-5, 1e-5)
		}
	}
}

// TestDecodeMatchesInterpreter runs one decode step with a cache half
// full and compares its logits and updated caches with the reference
// interpreter's run of the same step graph on the same inputs.
func TestDecodeMatchesInterpreter(t *testing.T) {
	c := demo.DecoderTiny
	w := tinyWeights(t, c)
	ids := randomIDs(c, 12, 2)
	d := newDecoder(t, c, 8, w)
	if _, err := d.Prefill(ids[:8]); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[8:11] {
		if _, err := d.Step(id); err != nil {
			t.Fatal(err)
		}
	}
	_, step := d.Programs()
	g := step.Graph()
	feeds := map[string]tensor.Tensor{}
	for _, p := range g.Params() {
		feeds[p.Name] = mustT(t, p.Shape, w[p.Name])
	}
	feeds[demo.StepTokens] = mustT(t, tensor.Shape{1, 1}, []float32{float32(ids[11])})
	feeds[demo.StepPos] = mustT(t, tensor.Shape{1}, []float32{float32(d.Pos())})
	for l := range c.Layers {
		for _, kind := range []string{"k", "v"} {
			cache, err := d.Cache(kind, l)
			if err != nil {
				t.Fatal(err)
			}
			feeds[demo.CacheName(kind, l)] = mustT(t, c.CacheShape(), cache)
		}
	}
	want, err := ops.Interpret(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Step(ids[11])
	if err != nil {
		t.Fatal(err)
	}
	approx.Slices(t, "logits", got, want[0].F32(), 1e-5, 1e-6)
	for l := range c.Layers {
		for i, kind := range []string{"k", "v"} {
			cache, err := d.Cache(kind, l)
			if err != nil {
				t.Fatal(err)
			}
			approx.Slices(t, "cache "+demo.CacheName(kind, l), cache, want[1+2*l+i].F32(), 1e-5, 1e-6)
		}
	}
}

// TestDecodeGenerate: greedy generation picks, at every step, the argmax
// of the logits the full prefill of the generated sequence gives for the
// row before it.
func TestDecodeGenerate(t *testing.T) {
	c := demo.DecoderTiny
	w := tinyWeights(t, c)
	prompt := randomIDs(c, 6, 3)
	d := newDecoder(t, c, len(prompt), w)
	gen, err := d.Generate(prompt, c.MaxSeq-len(prompt), nil)
	if err != nil {
		t.Fatal(err)
	}
	seq := append(append([]int64(nil), prompt...), gen...)
	want := refForward(c, w, seq[:c.MaxSeq-1])
	for i, id := range gen {
		row := want[(len(prompt)+i-1)*c.Vocab:][:c.Vocab]
		if best := refArgmax(row); best != id {
			t.Errorf("generated token %d is %d; the reference's argmax is %d", i, id, best)
		}
	}
}

// TestDecodeStepAllocs: a decode step on the CPU allocates nothing.
func TestDecodeStepAllocs(t *testing.T) {
	c := demo.DecoderTiny
	d := newDecoder(t, c, 4, tinyWeights(t, c))
	if _, err := d.Prefill(randomIDs(c, 4, 4)); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := d.Step(7); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a decode step allocates %v times", allocs)
	}
}

// TestDecodeErrors: bad ids, a prompt of the wrong length, a full cache
// and an expert count that cannot route are errors.
func TestDecodeErrors(t *testing.T) {
	c := demo.DecoderTiny
	d := newDecoder(t, c, 4, tinyWeights(t, c))
	if _, err := d.Prefill([]int64{1, 2, 3}); err == nil {
		t.Error("a prompt of 3 ids for a prefill of 4: no error")
	}
	if _, err := d.Prefill([]int64{1, 2, int64(c.Vocab), 3}); err == nil {
		t.Error("an id past the vocabulary: no error")
	}
	if _, err := d.Prefill([]int64{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Step(-1); err == nil {
		t.Error("a negative id: no error")
	}
	for d.Pos() < c.MaxSeq {
		if _, err := d.Step(1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Step(1); err == nil {
		t.Error("a step past the cache: no error")
	}
	if _, err := New(kiln.NewSession(kiln.CPU), c, c.MaxSeq, nil); err == nil {
		t.Error("a prompt as long as the cache: no error")
	}
	for _, e := range [][2]int{{4, 5}, {4, 0}, {0, 2}} {
		m := c
		m.Experts, m.ExpertsPerTok = e[0], e[1]
		if _, err := New(kiln.NewSession(kiln.CPU), m, 4, nil); err == nil || !strings.Contains(err.Error(), "experts per token") {
			t.Errorf("%d experts, top %d: error %v", e[0], e[1], err)
		}
	}
}

func mustT(t testing.TB, s tensor.Shape, v []float32) tensor.Tensor {
	t.Helper()
	x, err := tensor.FromF32(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
