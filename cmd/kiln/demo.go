package main

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

func runDemo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	model := fs.String("model", "encoder", "the built-in model: encoder (BERT-style) or decoder (Llama-style, generating)")
	runs := fs.Int("runs", 20, "timed runs (after one warm-up), encoder")
	size := fs.String("size", "", "model size: minilm (default) or tiny for the encoder; small (default), 100m or tiny for the decoder")
	check := fs.Bool("check", true, "compare the output with the reference interpreter")
	exported := fs.Bool("exported", false, "build the layers spelled out as torch's ONNX export has them (fusion recovers them), encoder")
	prompt := fs.Int("prompt", 128, "decoder: prompt tokens to prefill")
	tokens := fs.Int("tokens", 128, "decoder: tokens to generate greedily")
	var mf modelFlags
	fs.IntVar(&mf.threads, "threads", 0, "decoder: worker threads (0: KILN_THREADS or all cores)")
	fs.StringVar(&mf.device, "device", "cpu", "decoder: where it runs: `cpu`, cuda, cuda:N or metal")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *model {
	case "decoder":
		sess, err := mf.session()
		if err != nil {
			return err
		}
		sz := *size
		if sz == "" {
			sz = "small"
		}
		threads := mf.threads
		if threads == 0 {
			threads = exec.DefaultPool().Workers()
		}
		return runDecoderDemo(os.Stdout, decoderDemo{size: sz, prompt: *prompt, steps: *tokens, check: *check, threads: threads, sess: sess})
	case "encoder":
	default:
		return usagef("-model %q: want encoder or decoder", *model)
	}
	if *size == "" {
		*size = "minilm"
	}
	cfg := demo.MiniLM
	if *size == "tiny" {
		cfg = demo.Tiny
	} else if *size != "minilm" {
		return fmt.Errorf("unknown -size %q", *size)
	}
	cfg.Exported = *exported
	out := os.Stdout
	fmt.Fprintf(out, "kiln demo: BERT-style encoder, vocab %d, hidden %d, %d layers, %d heads, FFN %d, batch %d × seq %d\n",
		cfg.Vocab, cfg.Hidden, cfg.Layers, cfg.Heads, cfg.FFN, cfg.Batch, cfg.Seq)

	g := demo.Encoder(cfg)
	t0 := time.Now()
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		return err
	}
	defer cg.Close()
	weights := demo.Weights(g, 1)
	for name, w := range weights {
		if err := cg.SetParam(name, w); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "compiled in %v: %d graph nodes, %d steps\n", time.Since(t0).Round(time.Millisecond), len(cg.Graph().Nodes), cg.Stats().Steps)
	p := cg.Plan()
	fmt.Fprintf(out, "arena %s (naive %s, lower bound %s: %.3f× the bound), weights %s\n",
		mib(p.ArenaBytes), mib(p.NaiveBytes), mib(p.LowerBound), float64(p.ArenaBytes)/float64(max(p.LowerBound, 1)), mib(p.WeightBytes))
	st := cg.Stats()
	fmt.Fprint(out, "kernels:")
	for _, k := range slices.Sorted(maps.Keys(st.Variants)) {
		fmt.Fprintf(out, " %s×%d", k, st.Variants[k])
	}
	fmt.Fprintln(out)

	ids, mask := demo.Inputs(cfg, 2)
	inputs := []kiln.TypedInput{
		{Name: "input_ids", Data: tensor.Bytes(ids), DType: tensor.I64},
		{Name: "attention_mask", Data: tensor.Bytes(mask), DType: tensor.F32},
	}
	if _, err := cg.RunTyped(inputs...); err != nil { // warm-up
		return err
	}
	times := make([]time.Duration, *runs)
	for i := range times {
		t := time.Now()
		if _, err := cg.RunTyped(inputs...); err != nil {
			return err
		}
		times[i] = time.Since(t)
	}
	if len(times) > 0 {
		slices.Sort(times)
		fmt.Fprintf(out, "latency over %d runs: median %v, min %v, max %v\n", len(times),
			times[len(times)/2].Round(time.Microsecond), times[0].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond))
	}
	if *check {
		return checkDemo(cg, weights, ids, mask)
	}
	return nil
}

// checkDemo compares the compiled output with the reference interpreter.
func checkDemo(cg *kiln.CompiledGraph, weights map[string][]float32, ids []int64, mask []float32) error {
	feeds := map[string]tensor.Tensor{}
	gr := cg.Graph()
	for _, p := range gr.Params() {
		t, err := tensor.FromF32(p.Shape, weights[p.Name])
		if err != nil {
			return err
		}
		feeds[p.Name] = t
	}
	in := gr.Inputs()
	feeds["input_ids"], _ = tensor.FromI64(in[0].Shape, ids)
	feeds["attention_mask"], _ = tensor.FromF32(in[1].Shape, mask)
	t := time.Now()
	want, err := ops.Interpret(gr, feeds)
	if err != nil {
		return err
	}
	got := cg.Output(0)
	ref := want[0].F32()
	maxDiff, rel := maxRelDiff(got, ref)
	status := "ok"
	if rel > 1e-5 || math.IsNaN(rel) {
		status = "MISMATCH"
	}
	fmt.Printf("check vs reference interpreter (%v): max |diff| %.3g, relative to max |ref| %.3g: %s\n",
		time.Since(t).Round(time.Millisecond), maxDiff, rel, status)
	if status != "ok" {
		return fmt.Errorf("demo output differs from the reference interpreter")
	}
	return nil
}

func mib(b int) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }

// maxRelDiff returns max |got - ref| and that over max |ref|: the
// demos' check against the reference interpreter (NaN when a NaN met it).
func maxRelDiff(got, ref []float32) (maxDiff, rel float64) {
	var maxRef float64
	for i := range ref {
		maxDiff = math.Max(maxDiff, math.Abs(float64(got[i])-float64(ref[i])))
		maxRef = math.Max(maxRef, math.Abs(float64(ref[i])))
	}
	return maxDiff, maxDiff / math.Max(maxRef, 1e-30)
}
