package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/internal/decode"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/ops/asm"
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
	// A warm-up generation (first-run costs: packing, page faults), then
	// the timed one, which starts over from the prompt.
	if _, err := d.Generate(prompt, min(4, o.steps), nil); err != nil {
		return err
	}
	cpu0, _ := processCPUTime()
	t0 = time.Now()
	logits, err := d.Prefill(prompt)
	if err != nil {
		return err
	}
	prefill := time.Since(t0)
	cpu1, cpuOK := processCPUTime()
	flops := prefillFlops(c, o.prompt)
	fmt.Fprintf(out, "prefill %d tokens: %.1f ms (%.1f GFLOP/s", o.prompt, ms(prefill), flops/prefill.Seconds()/1e9)
	if cpuOK {
		fmt.Fprintf(out, "; %.1f ms of CPU time, %.1f GFLOP per CPU-second", ms(cpu1-cpu0), flops/(cpu1-cpu0).Seconds()/1e9)
	}
	fmt.Fprintln(out, ")")
	if dev == kiln.CPU {
		wall, perCPU := gemmRate(o.prompt, c.Hidden, c.FFN, o.threads)
		fmt.Fprintf(out, "GEMM kernel at the prefill's MLP shape %d×%d×%d (B packed, %d threads): %.1f GFLOP/s, %.1f per CPU-second\n",
			o.prompt, c.Hidden, c.FFN, o.threads, wall, perCPU)
	}

	last := logits[(o.prompt-1)*c.Vocab:][:c.Vocab]
	ids := make([]int64, 0, o.steps)
	times := make([]time.Duration, 0, o.steps)
	t0 = time.Now()
	cpu0, _ = processCPUTime()
	_, step := d.Programs()
	moved := step.Transfers()
	for range o.steps {
		id := decode.Argmax(last)
		ids = append(ids, id)
		ts := time.Now()
		if last, err = d.Step(id); err != nil {
			return err
		}
		times = append(times, time.Since(ts))
	}
	total := time.Since(t0)
	after := step.Transfers()
	cpu1, _ = processCPUTime()
	slices.Sort(times)
	fmt.Fprintf(out, "decode %d tokens: %.1f ms, %.1f tokens/s (median step %.2f ms",
		o.steps, ms(total), float64(o.steps)/total.Seconds(), ms(times[len(times)/2]))
	if cpuOK {
		fmt.Fprintf(out, "; %.2f ms of CPU time per token", ms(cpu1-cpu0)/float64(o.steps))
	}
	fmt.Fprintln(out, ")")
	if dev == kiln.CPU {
		bw := streamBandwidth(o.threads)
		fmt.Fprintf(out, "memory bound: %s of weights per token at %.1f GB/s (SIMD reads over %d threads) allows %.1f tokens/s\n",
			mib(4*params), bw/1e9, o.threads, bw/float64(4*params))
	} else {
		n := int64(o.steps)
		fmt.Fprintf(out, "host↔device per decode step: %d bytes in, %d bytes out (the driver's counters over the %d steps; the K/V caches, %s, stay in GPU handles)\n",
			(after.ToDevice-moved.ToDevice)/n, (after.ToHost-moved.ToHost)/n, o.steps, mib(2*c.Layers*4*c.CacheShape().NumElements()))
	}
	fmt.Fprintf(out, "generated ids: %v\n", ids[:min(16, len(ids))])
	if o.check {
		return checkDecoder(out, d, weights, ids[len(ids)-1], last)
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
	var maxDiff, maxRef float64
	for i := range ref {
		maxDiff = math.Max(maxDiff, math.Abs(float64(got[i])-float64(ref[i])))
		maxRef = math.Max(maxRef, math.Abs(float64(ref[i])))
	}
	rel := maxDiff / math.Max(maxRef, 1e-30)
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

// prefillFlops counts the prefill's multiply-adds twice: the projections,
// MLP and LM head per token, and causal attention's two products over
// the s(s+1)/2 query-key pairs per head.
func prefillFlops(c demo.DecoderConfig, s int) float64 {
	hd := c.HeadDim()
	perTok := c.Layers*(c.Hidden*c.Heads*hd+2*c.Hidden*c.KVHeads*hd+c.Heads*hd*c.Hidden+3*c.Hidden*c.FFN) + c.Hidden*c.Vocab
	attn := c.Layers * c.Heads * (s * (s + 1) / 2) * 2 * hd
	return 2 * float64(perTok*s+attn)
}

// streamBandwidth measures how fast threads goroutines read memory
// with kiln's SIMD row kernels: each takes the max of its part of a
// 256 MiB float32 buffer (far past any cache), as a decode step streams
// the weights; the median of five passes, in bytes read per second.
func streamBandwidth(threads int) float64 {
	threads = max(threads, 1)
	const n = 64 << 20 // floats
	buf := make([]float32, n)
	for i := range buf {
		buf[i] = float32(i & 1023)
	}
	rk := asm.BestRows()
	part := n / threads
	rates := make([]float64, 5)
	sink := make([]float32, threads)
	for i := range rates {
		t := time.Now()
		var wg sync.WaitGroup
		for w := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sink[w] = rk.Max(buf[w*part : (w+1)*part])
			}()
		}
		wg.Wait()
		rates[i] = 4 * float64(part*threads) / time.Since(t).Seconds()
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

// gemmRate times kiln's GEMM on an m×k×n product with B pre-packed (as
// weights are) over threads workers: the median GFLOP/s of seven runs by
// the wall clock, and the rate per second of process CPU time (0 where
// the OS gives none), which time slices lost to other processes do not
// move.
func gemmRate(m, k, n, threads int) (wall, perCPU float64) {
	threads = max(threads, 1)
	par := asm.Par{For: exec.NewPool(threads).NewRunner().For, Threads: threads}
	g, err := asm.NewGemm(asm.GemmConfig{M: m, N: n, K: k, Alpha: 1}, nil, par)
	if err != nil {
		return 0, 0
	}
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) - 2
	}
	var pb asm.PackedB
	if g.PackB(&pb, b) != nil {
		return 0, 0
	}
	args := &asm.GemmArgs{A: a, PackedB: &pb, C: c}
	flops := 2 * float64(m) * float64(k) * float64(n)
	rates := make([]float64, 7)
	var cpu time.Duration
	for i := range rates {
		t := time.Now()
		c0, _ := processCPUTime()
		for range 4 {
			if g.Run(args) != nil {
				return 0, 0
			}
		}
		rates[i] = 4 * flops / time.Since(t).Seconds() / 1e9
		c1, _ := processCPUTime()
		cpu += c1 - c0
	}
	slices.Sort(rates)
	if cpu > 0 {
		perCPU = 4 * 7 * flops / cpu.Seconds() / 1e9
	}
	return rates[3], perCPU
}
