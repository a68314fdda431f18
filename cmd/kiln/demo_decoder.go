package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/decode"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// decoderDemo is what `kiln demo -model decoder` was asked for.
type decoderDemo struct {
	size          string
	prompt, steps int
	check         bool
	threads       int // the CPU's worker threads, for the GEMM and bandwidth figures
	sess          *kiln.Session
}

// decoderConfigs are the -size values of the decoder demo.
var decoderConfigs = map[string]demo.DecoderConfig{
	"small": demo.DecoderSmall, "100m": demo.Decoder100M, "tiny": demo.DecoderTiny,
}

// runDecoderDemo compiles the built-in decoder with random weights,
// prefills a random prompt and greedily decodes, printing the prefill
// time, the decode rate next to the rate streaming the weights from
// memory once per token allows, and off the CPU the bytes a decode step
// copies between host and device.
func runDecoderDemo(out io.Writer, o decoderDemo) error {
	c, ok := decoderConfigs[o.size]
	if !ok {
		return usagef("-size %q: the decoder comes in small, 100m or tiny", o.size)
	}
	if o.prompt < 1 || o.steps < 1 {
		return usagef("-prompt %d and -tokens %d: both must be at least 1", o.prompt, o.steps)
	}
	c.MaxSeq = max(c.MaxSeq, o.prompt+o.steps) // a longer cache for a longer run
	g, err := demo.DecoderStep(c, 1)
	if err != nil {
		return err
	}
	weights := demo.Weights(g, 1)
	params := 0
	for _, p := range g.Params() {
		params += p.Shape.NumElements()
	}
	dev := o.sess.Device()
	fmt.Fprintf(out, "kiln demo: Llama-style decoder, vocab %d, hidden %d, %d layers, %d heads (%d key/value), FFN %d, cache %d; %.1fM params (%s f32) on %v\n",
		c.Vocab, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.FFN, c.MaxSeq, float64(params)/1e6, mib(4*params), dev)
	t0 := time.Now()
	d, err := decode.New(o.sess, c, o.prompt, weights)
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintf(out, "compiled prefill (%d tokens) and decode (1 token) programs in %v\n", o.prompt, time.Since(t0).Round(time.Millisecond))

	r := rand.New(rand.NewPCG(2, 5))
	prompt := make([]int64, o.prompt)
	for i := range prompt {
		prompt[i] = int64(r.IntN(c.Vocab))
	}
	// o.steps decode steps: the first of the o.steps+1 ids comes from
	// the prefill.
	rep, fed, last, err := measureDecode(d, prompt, o.steps+1, o.threads, dev, params)
	if err != nil {
		return err
	}
	printRates(out, rep, c)
	ids := rep.IDs()
	fmt.Fprintf(out, "generated ids: %v\n", ids[:min(16, len(ids))])
	if o.check {
		return checkDecoder(out, d, weights, fed, last)
	}
	return nil
}

// checkDecoder runs the decode step once more through the reference
// interpreter, from the decoder's own caches, and compares it with the
// compiled step that produced got for token id.
func checkDecoder(out io.Writer, d *decode.Decoder, weights map[string][]float32, id int64, got []float32) error {
	c := d.Config
	_, step := d.Programs()
	g := step.Graph()
	feeds := map[string]tensor.Tensor{}
	for _, p := range g.Params() {
		feeds[p.Name], _ = tensor.FromF32(p.Shape, weights[p.Name])
	}
	feeds[demo.StepTokens], _ = tensor.FromF32(tensor.Shape{1, 1}, []float32{float32(id)})
	feeds[demo.StepPos], _ = tensor.FromF32(tensor.Shape{1}, []float32{float32(d.Pos() - 1)})
	for l := range c.Layers {
		for _, kind := range []string{"k", "v"} {
			cache, err := d.Cache(kind, l)
			if err != nil {
				return err
			}
			feeds[demo.CacheName(kind, l)], _ = tensor.FromF32(c.CacheShape(), cache)
		}
	}
	got = slices.Clone(got)
	t := time.Now()
	want, err := ops.Interpret(g, feeds)
	if err != nil {
		return err
	}
	ref := want[0].F32()
	maxDiff, rel := maxRelDiff(got, ref)
	status := "ok"
	if rel > 1e-4 || math.IsNaN(rel) || decode.Argmax(got) != decode.Argmax(ref) {
		status = "MISMATCH"
	}
	fmt.Fprintf(out, "check of the last decode step vs reference interpreter (%v): max |diff| %.3g, relative to max |ref| %.3g, same argmax %v: %s\n",
		time.Since(t).Round(time.Millisecond), maxDiff, rel, decode.Argmax(got) == decode.Argmax(ref), status)
	if status != "ok" {
		return fmt.Errorf("decoder step differs from the reference interpreter")
	}
	return nil
}
