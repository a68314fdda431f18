package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/internal/decode"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/ops/asm"
)

// genStep is one greedily generated token: its id, the logit that chose
// it and how far the runner-up was behind.
type genStep struct {
	ID     int64   `json:"id"`
	Top    float32 `json:"top_logit"`
	Margin float32 `json:"margin"`
}

// genReport is what measureDecode measured; `kiln generate --json`
// prints it.
type genReport struct {
	Device        string    `json:"device"`
	Threads       int       `json:"threads,omitempty"`
	Params        int       `json:"params"`
	PromptTokens  int       `json:"prompt_tokens"`
	Steps         []genStep `json:"steps"`
	PrefillMs     float64   `json:"prefill_ms"`
	PrefillCPUMs  float64   `json:"prefill_cpu_ms,omitempty"`
	PrefillGFLOPs float64   `json:"prefill_gflops"`
	// GemmGFLOPs is kiln's GEMM alone at the prefill's MLP shape (CPU).
	GemmGFLOPs    float64 `json:"gemm_gflops,omitempty"`
	GemmCPUGFLOPs float64 `json:"gemm_gflops_per_cpu_second,omitempty"`
	DecodeSteps   int     `json:"decode_steps"`
	DecodeMs      float64 `json:"decode_ms"`
	DecodeTokS    float64 `json:"decode_tokens_per_s,omitempty"`
	MedianStepMs  float64 `json:"median_step_ms,omitempty"`
	StepCPUMs     float64 `json:"step_cpu_ms,omitempty"`
	// The memory bound (CPU): the f32 weights a decode step streams (all
	// but the embedding table, of which it gathers one row, and the
	// experts its token is not routed to) at the measured read bandwidth.
	WeightBytes  int     `json:"weight_bytes"`
	BandwidthGBs float64 `json:"bandwidth_gb_s,omitempty"`
	BoundTokS    float64 `json:"bound_tokens_per_s,omitempty"`
	// Off the CPU: what a decode step copied between host and device.
	StepBytesIn  int64 `json:"step_bytes_in,omitempty"`
	StepBytesOut int64 `json:"step_bytes_out,omitempty"`
}

// IDs are the generated ids.
func (r *genReport) IDs() []int64 {
	ids := make([]int64, len(r.Steps))
	for i, s := range r.Steps {
		ids[i] = s.ID
	}
	return ids
}

// topTwo is the greedy choice among logits (decode.Argmax's: the first
// of ties, never a NaN), its logit and its lead over the runner-up.
func topTwo(logits []float32) genStep {
	best, second := float32(math.Inf(-1)), float32(math.Inf(-1))
	at := int64(0)
	for i, x := range logits {
		if x > best {
			best, second, at = x, best, int64(i)
		} else if x > second {
			second = x
		}
	}
	return genStep{ID: at, Top: best, Margin: best - second}
}

// measureDecode prefills prompt on d and greedily generates n tokens, the
// first from the prefill's last row and each further one by a decode
// step (n-1 steps), after an untimed warm-up generation (first-run
// costs: packing weights, page faults). It times both phases by the wall
// clock and, where the OS gives it, by process CPU time; on the CPU it
// also measures the GEMM kernel at the prefill's MLP shape and the
// memory read bandwidth, over threads workers. params counts the
// weights' elements. fed is the token the last
// decode step took and last its logits (the prefill's last row if n is 1).
func measureDecode(d *decode.Decoder, prompt []int64, n, threads int, dev kiln.Device, params int) (r genReport, fed int64, last []float32, err error) {
	c := d.Config
	// A step reads every weight once, but of the embedding table only
	// its token's row, and of a mixture of experts only the k experts
	// its token is routed to.
	idle := c.Layers * (c.Experts - c.ExpertsPerTok) * 3 * c.Hidden * c.FFN
	r = genReport{Device: dev.String(), Params: params, PromptTokens: len(prompt), WeightBytes: 4 * (params - c.Vocab*c.Hidden + c.Hidden - idle)}
	if dev == kiln.CPU {
		r.Threads = threads
	}
	if _, err := d.Generate(prompt, min(4, n, c.MaxSeq-len(prompt)), nil); err != nil {
		return r, 0, nil, err
	}
	cpu0, _ := processCPUTime()
	t0 := time.Now()
	logits, err := d.Prefill(prompt)
	if err != nil {
		return r, 0, nil, err
	}
	prefill := time.Since(t0)
	cpu1, cpuOK := processCPUTime()
	r.PrefillMs = ms(prefill)
	r.PrefillGFLOPs = prefillFlops(c, len(prompt)) / prefill.Seconds() / 1e9
	if cpuOK {
		r.PrefillCPUMs = ms(cpu1 - cpu0)
	}

	last = logits[(len(prompt)-1)*c.Vocab:][:c.Vocab]
	r.Steps = make([]genStep, 0, n)
	r.Steps = append(r.Steps, topTwo(last))
	times := make([]time.Duration, 0, n)
	_, step := d.Programs()
	moved := step.Transfers()
	cpu0, _ = processCPUTime()
	t0 = time.Now()
	for len(r.Steps) < n {
		fed = r.Steps[len(r.Steps)-1].ID
		ts := time.Now()
		if last, err = d.Step(fed); err != nil {
			return r, 0, nil, err
		}
		times = append(times, time.Since(ts))
		r.Steps = append(r.Steps, topTwo(last))
	}
	total := time.Since(t0)
	cpu1, _ = processCPUTime()
	after := step.Transfers()
	if k := len(times); k > 0 {
		slices.Sort(times)
		r.DecodeSteps, r.DecodeMs = k, ms(total)
		r.DecodeTokS = float64(k) / total.Seconds()
		r.MedianStepMs = ms(times[k/2])
		if cpuOK {
			r.StepCPUMs = ms(cpu1-cpu0) / float64(k)
		}
		if dev != kiln.CPU {
			r.StepBytesIn, r.StepBytesOut = (after.ToDevice-moved.ToDevice)/int64(k), (after.ToHost-moved.ToHost)/int64(k)
		}
	}
	if dev == kiln.CPU {
		r.GemmGFLOPs, r.GemmCPUGFLOPs = gemmRate(len(prompt), c.Hidden, c.FFN, threads)
		bw := streamBandwidth(threads)
		r.BandwidthGBs, r.BoundTokS = bw/1e9, bw/float64(r.WeightBytes)
	}
	return r, fed, last, nil
}

// printRates writes the prefill and decode figures of r, each beside
// what bounds it: the GEMM kernel's rate at the prefill's MLP shape, and
// the memory bound of decoding at batch 1 (every weight read once per
// token).
func printRates(out io.Writer, r genReport, c demo.DecoderConfig) {
	fmt.Fprintf(out, "prefill %d tokens: %.1f ms (%.1f GFLOP/s", r.PromptTokens, r.PrefillMs, r.PrefillGFLOPs)
	if r.PrefillCPUMs > 0 {
		fmt.Fprintf(out, "; %.1f ms of CPU time, %.1f GFLOP per CPU-second", r.PrefillCPUMs, r.PrefillGFLOPs*r.PrefillMs/r.PrefillCPUMs)
	}
	fmt.Fprintln(out, ")")
	if r.GemmGFLOPs > 0 {
		fmt.Fprintf(out, "GEMM kernel at the prefill's MLP shape %d×%d×%d (B packed, %d threads): %.1f GFLOP/s, %.1f per CPU-second\n",
			r.PromptTokens, c.Hidden, c.FFN, r.Threads, r.GemmGFLOPs, r.GemmCPUGFLOPs)
	}
	if r.DecodeSteps == 0 {
		fmt.Fprintln(out, "decode: no steps (one new token comes from the prefill)")
		return
	}
	fmt.Fprintf(out, "decode %d tokens: %.1f ms, %.1f tokens/s", r.DecodeSteps, r.DecodeMs, r.DecodeTokS)
	if r.BoundTokS > 0 {
		fmt.Fprintf(out, ", memory bound %.1f tokens/s", r.BoundTokS)
	}
	fmt.Fprintf(out, " (median step %.2f ms", r.MedianStepMs)
	if r.StepCPUMs > 0 {
		fmt.Fprintf(out, "; %.2f ms of CPU time per token", r.StepCPUMs)
	}
	fmt.Fprintln(out, ")")
	if r.BoundTokS > 0 {
		fmt.Fprintf(out, "memory bound: %s of f32 weights per token at %.1f GB/s (streaming read bandwidth: the fastest of five SIMD passes over a 256 MiB buffer by %d threads) allows %.1f tokens/s\n",
			mib(r.WeightBytes), r.BandwidthGBs, r.Threads, r.BoundTokS)
	} else if r.Device != kiln.CPU.String() {
		fmt.Fprintf(out, "host↔device per decode step: %d bytes in, %d bytes out (the driver's counters over the %d steps; the K/V caches, %s, stay in GPU handles)\n",
			r.StepBytesIn, r.StepBytesOut, r.DecodeSteps, mib(2*c.Layers*4*c.CacheShape().NumElements()))
	}
}

// prefillFlops counts the prefill's multiply-adds twice: the projections,
// MLP (for a mixture of experts, the router and the k routed experts)
// and LM head per token, and causal attention's two products over the
// s(s+1)/2 query-key pairs per head.
func prefillFlops(c demo.DecoderConfig, s int) float64 {
	hd := c.HeadDim()
	mlp := 3 * c.Hidden * c.FFN
	if c.Experts > 0 {
		mlp = c.ExpertsPerTok*mlp + c.Hidden*c.Experts
	}
	perTok := c.Layers*(c.Hidden*c.Heads*hd+2*c.Hidden*c.KVHeads*hd+c.Heads*hd*c.Hidden+mlp) + c.Hidden*c.Vocab
	attn := c.Layers * c.Heads * (s * (s + 1) / 2) * 2 * hd
	return 2 * float64(perTok*s+attn)
}

// bandwidths memoizes streamBandwidth by thread count: a process
// measures it once.
var bandwidths sync.Map

// streamBandwidth measures how fast threads goroutines read memory
// with kiln's SIMD row kernels: each takes the max of its part of a
// 256 MiB float32 buffer (far past any cache), as a decode step streams
// the weights; the fastest of five passes, in bytes read per second (a
// bound is what the memory allows: a pass slowed by another process
// does not lower it).
func streamBandwidth(threads int) float64 {
	threads = max(threads, 1)
	if bw, ok := bandwidths.Load(threads); ok {
		return bw.(float64)
	}
	bw := measureBandwidth(threads)
	bandwidths.Store(threads, bw)
	return bw
}

func measureBandwidth(threads int) float64 {
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
	return slices.Max(rates)
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
